package server

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestParseBugs(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"none", nil, false},
		{"snapshot", []string{BugSnapshot}, false},
		{"retry, fence", []string{BugFence, BugRetry}, false},
		{"all", AllBugs, false},
		{"snapshot,bogus", nil, true},
	}
	for _, tt := range tests {
		b, err := ParseBugs(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseBugs(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(b.Names(), tt.want) {
			t.Errorf("ParseBugs(%q) = %v, want %v", tt.in, b.Names(), tt.want)
		}
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
		want string
		data map[string]string
	}{
		{"put", Entry{Op: "put", Key: "a", Value: "2"}, "", map[string]string{"a": "2"}},
		{"delete", Entry{Op: "delete", Key: "a"}, "", map[string]string{}},
		{"cas hit", Entry{Op: "cas", Key: "a", Expect: "1", Value: "3"}, "true", map[string]string{"a": "3"}},
		{"cas miss", Entry{Op: "cas", Key: "a", Expect: "9", Value: "3"}, "false", map[string]string{"a": "1"}},
		{"cas absent", Entry{Op: "cas", Key: "b", Expect: "", Value: "3"}, "true", map[string]string{"a": "1", "b": "3"}},
	}
	for _, tt := range tests {
		n := &Node{data: map[string]string{"a": "1"}}
		if got := n.apply(tt.e); got != tt.want {
			t.Errorf("%s: apply = %q, want %q", tt.name, got, tt.want)
		}
		if !reflect.DeepEqual(n.data, tt.data) {
			t.Errorf("%s: data = %v, want %v", tt.name, n.data, tt.data)
		}
	}
}

// TestWALReplay appends entries, tears the last record as a crash would,
// and checks that a reopened log replays the whole records only.
func TestWALReplay(t *testing.T) {
	dir := t.TempDir()
	w, got, err := openWAL(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("fresh log replayed %d entries", len(got))
	}
	want := []Entry{{Index: 1, ID: "a", Op: "put", Key: "k", Value: "v"}, {Index: 2, ID: "b", Op: "delete", Key: "k"}}
	if err := w.append(want); err != nil {
		t.Fatal(err)
	}
	if _, err := w.f.WriteString(`{"i":3,"id":"c","op":"pu`); err != nil {
		t.Fatal(err)
	}
	w.f.Close()
	w, got, err = openWAL(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.f.Close()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replayed %+v, want %+v", got, want)
	}
	if w.seq != 2 {
		t.Errorf("reopened log appends to segment %d, want 2", w.seq)
	}
}

// TestSingleNode runs a one-node cluster in process: writes commit alone,
// reads see them, a repeated request ID is applied once, and a restart
// recovers the store from the snapshot and the log.
func TestSingleNode(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "n1", DataDir: dir, Peers: map[string]string{"n1": "127.0.0.1:0"}, Leader: "n1", SnapEvery: 3}
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	steps := []struct {
		e    Entry
		want string
	}{
		{Entry{ID: "1", Op: "put", Key: "x", Value: "a"}, ""},
		{Entry{ID: "2", Op: "cas", Key: "x", Expect: "a", Value: "b"}, "true"},
		{Entry{ID: "2", Op: "cas", Key: "x", Expect: "a", Value: "b"}, "true"}, // a retry: answered, not re-applied
		{Entry{ID: "3", Op: "cas", Key: "x", Expect: "a", Value: "c"}, "false"},
		{Entry{ID: "4", Op: "put", Key: "y", Value: "z"}, ""},
	}
	for _, s := range steps {
		got, err := n.Write(ctx, s.e)
		if err != nil {
			t.Fatalf("write %+v: %v", s.e, err)
		}
		if got != s.want {
			t.Errorf("write %+v = %q, want %q", s.e, got, s.want)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, snapshotName)); err != nil {
		t.Errorf("no snapshot after %d entries: %v", len(steps), err)
	}

	n, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	defer n.Close()
	for key, want := range map[string]string{"x": "b", "y": "z"} {
		v, ok, err := n.Get(ctx, key)
		if err != nil || !ok || v != want {
			t.Errorf("after restart: get %s = %q, %v, %v; want %q", key, v, ok, err, want)
		}
	}
}
