package main

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestCompat checks the accessors that stand in for the library's newer
// ones against those (which the profile's release has) on a single
// bootstrapped member once it leads: the same term (at least 1), commit
// index and leader.
func TestCompat(t *testing.T) {
	r, addr := newSingle(t)
	if a, id := leaderWithID(r); a != "" || id != "" {
		t.Errorf("leaderWithID before bootstrap = %q, %q; want none", a, id)
	}
	bootstrapSingle(t, r, addr)
	if err := r.Apply([]byte("x"), time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	if got, want := currentTerm(r), r.CurrentTerm(); got != want || got == 0 {
		t.Errorf("currentTerm = %d, CurrentTerm = %d; want equal and > 0", got, want)
	}
	if got, want := commitIndex(r), r.CommitIndex(); got != want || got == 0 {
		t.Errorf("commitIndex = %d, CommitIndex = %d; want equal and > 0", got, want)
	}
	gotA, gotID := leaderWithID(r)
	wantA, wantID := r.LeaderWithID()
	if gotA != wantA || gotID != wantID || gotID != "a" {
		t.Errorf("leaderWithID = %q, %q; LeaderWithID = %q, %q; want equal, ID a", gotA, gotID, wantA, wantID)
	}
}

// TestAwaitStepDown checks that awaitStepDown returns at once for a member
// that does not lead, and only after its bound for one that keeps leading.
func TestAwaitStepDown(t *testing.T) {
	r, addr := newSingle(t)
	start := time.Now()
	awaitStepDown(r, time.Second)
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("a follower waited %s, want no wait", d)
	}
	bootstrapSingle(t, r, addr)
	start = time.Now()
	awaitStepDown(r, 200*time.Millisecond)
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("a leader that keeps leading waited %s, want its bound of 200ms", d)
	}
}

// newSingle starts one in-memory member, not bootstrapped; it is shut down
// when the test ends.
func newSingle(t *testing.T) (*raft.Raft, raft.ServerAddress) {
	t.Helper()
	cfg := raft.DefaultConfig()
	cfg.LocalID = "a"
	cfg.HeartbeatTimeout = 50 * time.Millisecond
	cfg.ElectionTimeout = 50 * time.Millisecond
	cfg.LeaderLeaseTimeout = 50 * time.Millisecond
	store := raft.NewInmemStore()
	addr, trans := raft.NewInmemTransport("")
	r, err := raft.NewRaft(cfg, &raft.MockFSM{}, store, store, raft.NewInmemSnapshotStore(), trans)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown().Error() })
	return r, addr
}

// bootstrapSingle makes r the one voter of its cluster and waits until it
// leads.
func bootstrapSingle(t *testing.T, r *raft.Raft, addr raft.ServerAddress) {
	t.Helper()
	if err := r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: "a", Address: addr}}}).Error(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for r.State() != raft.Leader && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r.State() != raft.Leader {
		t.Fatalf("no leader within 5 s (state %s)", r.State())
	}
}

func TestServerAt(t *testing.T) {
	c := raft.Configuration{Servers: []raft.Server{{ID: "a", Address: "h:1"}, {ID: "b", Address: "h:2"}}}
	for _, tc := range []struct {
		addr raft.ServerAddress
		want raft.ServerID
	}{{"h:1", "a"}, {"h:2", "b"}, {"h:3", ""}} {
		if got := serverAt(c, tc.addr); got != tc.want {
			t.Errorf("serverAt(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
