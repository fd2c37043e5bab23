package repro

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestRestoreDuringSnapshot reproduces R2 of docs/found.md (hashicorp/raft
// v1.7.2, also v1.8.0): a snapshot that began before a user Restore on the
// leader and ends after it sets the leader's last snapshot back to its
// older index (takeSnapshot's unconditional setLastSnapshot; the root
// cause of hashicorp/raft#248, there between InstallSnapshot and
// takeSnapshot on a follower). The restore left a hole in the leader's log
// at the restored snapshot's index R, which it relies on to send every
// follower that snapshot; with the last snapshot back at R-k, the leader
// cannot build the AppendEntries after it (previous entry R: not the last
// snapshot's index, and not in the log) and sends the snapshot again — to
// every follower, forever. Nothing commits any more: Restore itself, which
// waits for a no-op entry to commit, never returns, whatever its timeout.
//
// The interleaving is made deterministic without touching raft: the
// state machine's Persist of the snapshot waits until the leader has
// logged "restored user snapshot", and the followers' first install of the
// restored snapshot waits until that snapshot has finished (as the hunt's
// trial 2-194 ran into by chance, docs/found.md R2).
func TestRestoreDuringSnapshot(t *testing.T) {
	c, leader, meta, backup := backedUp(t, Options{Watch: "restored user snapshot"})
	for range 5 {
		if err := Add(leader.Raft, 100, time.Second); err != nil {
			t.Fatal(err)
		}
	}

	// A snapshot begins and holds in Persist until the restore is done.
	persisting, release, regressed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once sync.Once
	leader.FSM.Persisting = func() {
		once.Do(func() { close(persisting) })
		<-release
	}
	for _, f := range c.Followers(leader) {
		f.FSM.Restoring = func() { <-regressed }
	}
	snapDone := make(chan error, 1)
	go func() { snapDone <- leader.Raft.Snapshot().Error() }()
	select {
	case <-persisting:
	case <-time.After(5 * time.Second):
		t.Fatal("the snapshot never reached Persist")
	}
	restoreDone := make(chan error, 1)
	go func() { restoreDone <- leader.Raft.Restore(meta, bytes.NewReader(backup), 2*time.Second) }()
	select {
	case <-leader.Said:
	case err := <-restoreDone:
		t.Fatalf("Restore returned %v before the leader logged the restore", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the leader never logged \"restored user snapshot\"")
	}
	close(release)
	if err := <-snapDone; err != nil {
		t.Fatalf("the snapshot begun before the restore: %v", err)
	}
	close(regressed)

	// Give the cluster 5 s: a correct raft installs the restored snapshot
	// once on each follower, commits Restore's no-op and returns.
	var restoreErr error
	returned := false
	select {
	case restoreErr = <-restoreDone:
		returned = true
	case <-time.After(5 * time.Second):
	}
	installs := []int64{c.Followers(leader)[0].FSM.Restores.Load(), c.Followers(leader)[1].FSM.Restores.Load()}
	if returned && restoreErr == nil && installs[0] < 10 && installs[1] < 10 {
		t.Fatalf("Restore succeeded and the followers installed the snapshot %v times: the bug no longer shows", installs)
	}
	for i, f := range c.Followers(leader) {
		t.Logf("follower %s installed the leader's snapshot %d times", f.ID, installs[i])
		if installs[i] < 10 {
			t.Errorf("follower %s installed the snapshot %d times: no livelock (the bug no longer shows?)", f.ID, installs[i])
		}
	}
	switch {
	case !returned:
		t.Logf("Restore(…, 2s) has not returned after 5 s")
	default:
		t.Logf("Restore returned %v", restoreErr)
	}
	t.Logf("applied index: leader %s %d, followers %d and %d", leader.ID,
		leader.Raft.AppliedIndex(), c.Followers(leader)[0].Raft.AppliedIndex(), c.Followers(leader)[1].Raft.AppliedIndex())
}

// backedUp starts a cluster with o (shut down when the test ends), waits
// for its leader, applies ten entries and takes a backup of the state so
// far, to restore later.
func backedUp(t *testing.T, o Options) (c *Cluster, leader *Node, meta *raft.SnapshotMeta, backup []byte) {
	t.Helper()
	c, err := NewCluster(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	leader, err = c.Leader(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := Add(leader.Raft, uint64(i+1), time.Second); err != nil {
			t.Fatal(err)
		}
	}
	meta, backup = takeBackup(t, leader)
	return c, leader, meta, backup
}

// takeBackup takes a user snapshot on leader and returns it, as an
// operator's backup.
func takeBackup(t *testing.T, leader *Node) (*raft.SnapshotMeta, []byte) {
	t.Helper()
	sf := leader.Raft.Snapshot()
	if err := sf.Error(); err != nil {
		t.Fatalf("backup snapshot: %v", err)
	}
	meta, rc, err := sf.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return meta, data
}
