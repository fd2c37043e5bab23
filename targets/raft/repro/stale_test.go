package repro

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// staleChild names the environment variable that makes
// TestStaleInstallSnapshot run its cluster in this process: a follower's
// panic ends the process, so the test runs it in a child and reads how it
// ended.
const staleChild = "GOFAULT_REPRO_STALE_CHILD"

// TestStaleInstallSnapshot reproduces R6 of docs/found.md (hashicorp/raft
// v1.7.2): a follower installs a snapshot older than its own state — an
// InstallSnapshot the leader sent before the follower was caught up,
// delivered after — and panics ("log not found" in processLogs) at the
// next commit, its applied index set back below the log it has compacted
// since. installSnapshot checks the request's term, never whether the
// snapshot is older than what the follower has applied.
//
// How the stale send arises, as in the hunt's trials 2-280, 2-282 and
// 2-310: the leader restores a user snapshot (its log gets a hole, so
// every follower needs the snapshot); its InstallSnapshot to follower F is
// slow (held here by F's link, HoldingTransport); meanwhile an operator
// removes F and adds it back (the workload's membership cycle), so the
// leader starts a new replication to F, which sends the snapshot again and
// catches F up; F takes a snapshot of its own and compacts its log; then
// the first, slow InstallSnapshot arrives.
func TestStaleInstallSnapshot(t *testing.T) {
	if os.Getenv(staleChild) != "" {
		staleScenario(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStaleInstallSnapshot$", "-test.v")
	cmd.Env = append(os.Environ(), staleChild+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	if err == nil || !strings.Contains(text, "panic: log not found") {
		t.Fatalf("the follower did not panic (the bug no longer shows?): %v\n%s", err, tail(text, 40))
	}
	i := strings.Index(text, "panic: log not found")
	t.Logf("the child ended with %v; from its output:\n%s", err, tail(text[:i], 12)+firstLines(text[i:], 6))
}

// staleScenario runs the cluster: it returns only if no member panicked.
func staleScenario(t *testing.T) {
	c, leader, meta, backup := backedUp(t, Options{TrailingLogs: 8})
	f := c.Followers(leader)[0]
	held := leader.Out.HoldSnapshotTo(f.Trans.LocalAddr())
	// The restore: both followers need the snapshot; the one to F is slow.
	restored := make(chan error, 1)
	go func() { restored <- leader.Raft.Restore(meta, bytes.NewReader(backup), 5*time.Second) }()
	select {
	case <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("the leader sent F no snapshot")
	}
	if err := <-restored; err != nil {
		t.Fatalf("restore: %v", err)
	}
	restoredAt := leader.Raft.AppliedIndex()
	t.Logf("restored at index %d; the leader's snapshot to %s is held", restoredAt, f.ID)
	// The membership cycle: F removed and added back, a new replication.
	if err := leader.Raft.RemoveServer(f.ID, 0, 5*time.Second).Error(); err != nil {
		t.Fatalf("remove %s: %v", f.ID, err)
	}
	if err := leader.Raft.AddVoter(f.ID, f.Trans.LocalAddr(), 0, 5*time.Second).Error(); err != nil {
		t.Fatalf("add %s: %v", f.ID, err)
	}
	for i := range 30 {
		if err := Add(leader.Raft, uint64(i+1), time.Second); err != nil {
			t.Fatal(err)
		}
	}
	want := leader.Raft.AppliedIndex()
	for end := time.Now().Add(5 * time.Second); f.Raft.AppliedIndex() < want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s did not catch up to %d (at %d)", f.ID, want, f.Raft.AppliedIndex())
		}
	}
	if err := f.Raft.Snapshot().Error(); err != nil {
		t.Fatalf("%s's snapshot: %v", f.ID, err)
	}
	t.Logf("%s caught up to %d and snapshotted, its log compacted; the held snapshot (index %d) now goes", f.ID, f.Raft.AppliedIndex(), restoredAt)
	leader.Out.Release()
	time.Sleep(500 * time.Millisecond)
	t.Logf("%s's applied index after the stale install: %d", f.ID, f.Raft.AppliedIndex())
	for i := range 5 {
		_ = Add(leader.Raft, uint64(i+1), time.Second) // F's commit of these panics
	}
	time.Sleep(2 * time.Second)
	t.Logf("no member panicked; %s applied %d", f.ID, f.Raft.AppliedIndex())
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n") + "\n"
}
