package analysis

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/config"
)

// TestEtcdStates analyses the packages of the etcd profile and checks the
// abstract states against a sample read by hand in etcd's source. It
// loads targets/etcd as its go.mod is (etcd v3.5.35, the workload's
// client), so it takes the profile's v3.5 packages (its releases entry);
// the default line's are built and run by the campaign tests.
func TestEtcdStates(t *testing.T) {
	dir := etcdDir(t)
	cfg, err := config.Load(filepath.Join(dir, "gofault.yaml"), "target.version=v3.5.35")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: cfg.Target.Packages, BuildFlags: cfg.Target.BuildFlags})
	if err != nil {
		t.Fatal(err)
	}
	machines, states := res.Stats.Totals[CountStateMachines], res.Stats.Totals[CountStates]
	t.Logf("etcd: %d state machines, %d states in %.1fs", machines, states, res.Stats.Seconds)
	if machines < 24 || states < 250 {
		t.Errorf("%d state machines and %d states, want dozens and hundreds", machines, states)
	}
	type key struct{ fn, cond string }
	got := map[key]string{}
	for _, s := range res.Catalog.States {
		got[key{s.Func, s.Cond}] = res.Catalog.Task(s.Task).Func
	}
	for _, tt := range []struct {
		fn, cond, task string
	}{
		// raft's node loop: proposals are taken only with a leader.
		{"(*node).run", "case <-propc", "(*node).run"},
		{"(*node).run", "lead != r.lead", "(*node).run"},
		// raft's state machine, reached through n.rn.raft.Step and r.step.
		{"stepLeader", "pr.State == tracker.StateReplicate", "(*node).run"},
		{"(*raft).Step", "m.Term > r.Term", "(*node).run"},
		// etcd's raft node: the loop-carried leadership flag.
		{"(*raftNode).start$1", "islead", "(*raftNode).start$1"},
		// EtcdServer.run: TTL sync only when the v2 store holds TTL keys.
		{"(*EtcdServer).run", "s.v2store.HasTTLKeys()", "(*EtcdServer).run"},
		// The lessor revokes and checkpoints only as primary.
		{"(*lessor).revokeExpiredLeases", "le.isPrimary()", "(*lessor).runLoop"},
		// The backend commits only with pending writes.
		{"(*backend).run", "b.batchTx.safePending() != 0", "(*backend).run"},
		// The watchable store moves victims back by revision.
		{"(*watchableStore).moveVictims", "w.minRev <= curRev", "(*watchableStore).syncVictimsLoop"},
	} {
		task, ok := got[key{tt.fn, tt.cond}]
		if !ok {
			t.Errorf("no state %q in %s", tt.cond, tt.fn)
			continue
		}
		if task != tt.task {
			t.Errorf("state %q in %s belongs to task %s, want %s", tt.cond, tt.fn, task, tt.task)
		}
	}
	// The node's role: raft.state, written in the becomeX methods.
	if r := res.Catalog.Role; r == nil {
		t.Error("no role found")
	} else {
		var names []string
		for _, v := range r.Values {
			names = append(names, v.Name)
		}
		if r.String() != "go.etcd.io/etcd/raft/v3.raft.state" || strings.Join(names, " ") != "StateFollower StateCandidate StateLeader StatePreCandidate" {
			t.Errorf("role %s with values %v, want go.etcd.io/etcd/raft/v3.raft.state with the four StateTypes", r, names)
		}
		if len(r.Writes) < 4 {
			t.Errorf("role writes %+v, want one per becomeX at least", r.Writes)
		}
		for _, w := range r.Writes {
			t.Logf("role write %s %s at %s:%d", w.ID, w.Shape, filepath.Base(w.File), w.Line)
		}
	}
	for _, s := range res.Catalog.States {
		if s.Cond == "err != nil" {
			t.Errorf("state %s on an error: %s", s.ID, s.Cond)
		}
	}
}
