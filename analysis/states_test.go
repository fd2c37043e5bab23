package analysis

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

func statesDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("testdata", "states"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func runStatesApp(t *testing.T) *Result {
	t.Helper()
	res, err := Run(context.Background(), Options{Dir: statesDir(t), Patterns: []string{"example.com/states/..."}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := res.Catalog.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return res
}

// TestStatesGolden checks the per-task listing of the states testdata.
func TestStatesGolden(t *testing.T) {
	res := runStatesApp(t)
	var buf bytes.Buffer
	if err := catalog.WriteStates(&buf, res.Catalog, statesDir(t)); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&buf, "\nstate_machines=%d states=%d\n", res.Stats.Totals[CountStateMachines], res.Stats.Totals[CountStates])
	golden := filepath.Join("testdata", "states.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("states differ from %s (run with -update after checking):\n%s", golden, diffLines(string(want), got))
	}
}

// TestStatesExpectations states the patterns of the testdata in code, so a
// golden update cannot silently accept a regression.
func TestStatesExpectations(t *testing.T) {
	res := runStatesApp(t)
	type key struct{ fn, cond string }
	got := map[key]string{} // -> inst
	for _, s := range res.Catalog.States {
		got[key{s.Func, s.Cond}] = s.Inst
		if s.Task == 0 || res.Catalog.Task(s.Task) == nil {
			t.Errorf("state %s has no task", s.ID)
		}
		if strings.Contains(s.ID, ":") {
			t.Errorf("state ID %s holds a position", s.ID)
		}
	}
	for _, tc := range []struct {
		fn, cond, inst string
		want           bool
	}{
		{"(*Node).run", "n.role == Leader", "n", true},
		{"(*Node).run", "entry", "n", true},             // the task's first state
		{"(*Node).run", "n.role != Leader", "n", false}, // propc = nil: no action
		{"(*Node).run", "case <-propc", "n", true},      // channel enabled by state
		{"(*Node).run", "case <-n.recvc", "n", false},   // a plain receive
		{"(*Node).run", "n.role == Leader", "n", true},
		{"(*Node).run", "n.role == Candidate", "n", true},
		{"(*Node).run", "n.role == Follower", "n", false}, // no action
		{"(*Node).run", "role != Follower && n.lead == 0", "n", true},
		{"(*Node).run", "n.err != nil", "n", false},     // errors are not state
		{"(*Node).run", "n.stopped.Load()", "n", false}, // return only
		{"(*Node).step", "m.Term > n.term", "n", true},  // called from the loop
		{"(*Node).step", "m.Type == 1", "n", false},     // message only
		{"(*Node).step", "len(n.votes) > 1", "n", true},
		{"(*Node).syncLoop", "n.applied - n.snapIndex > n.snapCount", "n", true},
		{"(*Node).syncLoop", "n.isLeader()", "n", true}, // through a getter
		{"(*Node).syncLoop", "err != nil", "n", false},
		{"(*Node).syncLoop", "err == nil", "n", false}, // after a guard on an error
		{"(*Node).save", "n.term != 0", "n", false},    // after a guard: no action
		// A short task started from the loop, after a guard clause.
		{"(*Node).replicate", "entry", "n", true},
		{"(*Node).replicate", "n.lead != n.id", "n", false}, // return only
		{"(*Node).replicate", "n.lead == n.id", "n", true},
		{"(*Node).syncLoop", "n.applied > n.snapIndex", "n", false}, // no action
		{"(*Node).Start$1", "n.role == Leader", "n", true},
		{"(*Store).Watch$1", "len(w.pending) > 0", "w", true},
		{"(*Store).Watch$1", "w.closed", "w", false},
		{"(*Store).Watch$1", "!w.closed", "w", true}, // after the guard
		{"(*Store).Watch$1", "local > 2", "w", false},
		{"(*Store).Watch$1", "w.rev < s.rev", "w", true},
		{"(*Store).Watch$2", "w.closed", "w", false}, // one-shot goroutine
		{"(*Store).Watch$2", "entry", "w", false},
		{"compactLoop", "compacting", "", true},
		{"compactLoop", "!compacting", "", true},
		// A captured variable the goroutine writes is its state.
		{"(*Store).retain$1", "minute != prev", "", true},
		{"(*Store).retain", "entry", "s", false}, // one-shot
		{"notATask", "len(w.pending) > 0", "", false},
		{"(*Node).Status", "n.role == Leader", "", false},
	} {
		inst, ok := got[key{tc.fn, tc.cond}]
		if ok != tc.want {
			t.Errorf("%s: state %q = %v, want %v", tc.fn, tc.cond, ok, tc.want)
		}
		if ok && inst != tc.inst {
			t.Errorf("%s: state %q has inst %q, want %q", tc.fn, tc.cond, inst, tc.inst)
		}
	}
}
