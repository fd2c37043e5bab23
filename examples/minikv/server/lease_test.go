package server

import (
	"testing"
	"time"
)

// TestLeaseAcrossPause stands for a pause of a follower that holds a read
// lease: time passes and its watchdog does not tick. The lease read off the
// clock is over; the one counted in ticks (BugTickLease) is still held.
func TestLeaseAcrossPause(t *testing.T) {
	for _, bug := range []bool{false, true} {
		n := &Node{cfg: Config{LeaseReads: 200 * time.Millisecond, HeartbeatEvery: 50 * time.Millisecond}, bugs: Bugs{tickLease: bug}}
		n.takeLease(time.Now().Add(n.cfg.LeaseReads).UnixNano(), 7)
		if !n.leaseHeld() || n.leaseCommit != 7 {
			t.Fatalf("tick lease %v: a fresh lease is not held (commit %d)", bug, n.leaseCommit)
		}
		// An expired grant (a message queued during the pause) changes
		// nothing.
		n.takeLease(time.Now().Add(-time.Millisecond).UnixNano(), 9)
		if n.leaseCommit != 7 {
			t.Fatalf("tick lease %v: an expired grant was taken", bug)
		}
		time.Sleep(n.cfg.LeaseReads + 50*time.Millisecond)
		if got := n.leaseHeld(); got != bug {
			t.Errorf("tick lease %v: lease held after a pause longer than it = %v, want %v", bug, got, bug)
		}
	}
}
