package workload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		adapt   bool          // GOFAULT_LOAD_END set
		min     time.Duration // GOFAULT_LOAD_MIN
		full    time.Duration
		ask     time.Duration // GOFAULT_LOAD_FULL
		create  time.Duration // when the runner creates the end file; <0: never
		wantErr error         // how the load's context ended
		atLeast time.Duration // the load lasted at least this long
	}{
		{"off: full length although the file exists", false, 0, 300 * time.Millisecond, 0, 0, context.DeadlineExceeded, 300 * time.Millisecond},
		{"file from the start: ends at the minimum", true, 200 * time.Millisecond, time.Minute, 0, 0, context.Canceled, 200 * time.Millisecond},
		{"file later: ends when it appears", true, 10 * time.Millisecond, time.Minute, 0, 300 * time.Millisecond, context.Canceled, 300 * time.Millisecond},
		{"no file: full length", true, 10 * time.Millisecond, 300 * time.Millisecond, 0, -1, context.DeadlineExceeded, 300 * time.Millisecond},
		{"the runner asks for a longer load: lasts that long", true, 10 * time.Millisecond, 100 * time.Millisecond, 400 * time.Millisecond, -1, context.DeadlineExceeded, 400 * time.Millisecond},
		{"a longer load asked for still ends early", true, 10 * time.Millisecond, 100 * time.Millisecond, time.Minute, 300 * time.Millisecond, context.Canceled, 300 * time.Millisecond},
		{"minimum past full: full length", true, time.Minute, 300 * time.Millisecond, 0, 0, context.DeadlineExceeded, 300 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			end := filepath.Join(t.TempDir(), "load.end")
			env := Env{Nodes: testNodes(), LoadMin: tc.min, LoadFull: tc.ask}
			if tc.adapt {
				env.LoadEnd = end
			}
			if tc.create == 0 {
				if err := os.WriteFile(end, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if tc.create > 0 {
				time.AfterFunc(tc.create, func() { _ = os.WriteFile(end, nil, 0o644) })
			}
			wt := newT(env, nil)
			start := time.Now()
			ctx, cancel := wt.Load(context.Background(), tc.full)
			defer cancel()
			<-ctx.Done()
			took := time.Since(start)
			if !errors.Is(ctx.Err(), tc.wantErr) {
				t.Errorf("load ended with %v, want %v", ctx.Err(), tc.wantErr)
			}
			if took < tc.atLeast {
				t.Errorf("load lasted %s, want at least %s", took, tc.atLeast)
			}
		})
	}
}
