package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/gofault/gofault/examples/minikv/transport"
)

// TestCommitRule: the leader commits what a majority stored; with the
// waitall bug only what every member stored, so one follower that stored
// nothing holds back every entry the other one has.
func TestCommitRule(t *testing.T) {
	tests := []struct {
		name    string
		bugs    string
		matches []uint64 // the followers' stored indices
		want    uint64
	}{
		{"majority: one follower behind", "", []uint64{5, 0}, 5},
		{"majority: followers apart", "", []uint64{3, 5}, 5},
		{"majority: none stored", "", []uint64{0, 0}, 0},
		{"waitall: one follower behind", BugWaitAll, []uint64{5, 0}, 0},
		{"waitall: followers apart", BugWaitAll, []uint64{3, 5}, 3},
		{"waitall: both stored", BugWaitAll, []uint64{5, 5}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bugs, err := ParseBugs(tt.bugs)
			if err != nil {
				t.Fatal(err)
			}
			n := &Node{bugs: bugs, role: roleLeader, entries: make([]Entry, 5), kick: make(chan struct{}, 1)}
			for i, m := range tt.matches {
				n.peers = append(n.peers, &peer{name: string(rune('b' + i)), match: m})
			}
			n.advanceCommit()
			if n.commit != tt.want {
				t.Errorf("commit %d with followers at %v, want %d", n.commit, tt.matches, tt.want)
			}
		})
	}
}

// TestRewind: a follower that hears a leader's message keeps its commit
// index unless it rises; with the rewind bug a new leader epoch sets it to
// the leader's, below what the follower applied, and the apply loop logs
// the broken invariant once. A first message from a leader (a fresh or
// restarted follower) and the same leader's later messages log nothing.
func TestRewind(t *testing.T) {
	tests := []struct {
		name       string
		bugs       string
		epoch      int64 // the follower's leader epoch before; the message's is 2
		commit     uint64
		wantCommit uint64
		wantLog    bool
	}{
		{"bug off, restarted leader", "", 1, 3, 10, false},
		{"bug off, same leader", "", 2, 3, 10, false},
		{"rewind, restarted leader", BugRewind, 1, 3, 3, true},
		{"rewind, same leader", BugRewind, 2, 3, 10, false},
		{"rewind, leader ahead", BugRewind, 1, 12, 12, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bugs, err := ParseBugs(tt.bugs)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			n := &Node{bugs: bugs, log: slog.New(slog.NewTextHandler(&buf, nil)), cfg: Config{Leader: "n1"},
				entries: make([]Entry, 12), commit: 10, applied: 10, leaderEpoch: tt.epoch,
				kick: make(chan struct{}, 1), appliedC: make(chan struct{}), waiters: map[string][]chan result{},
				data: map[string]string{}, done: map[string]string{}}
			for i := range n.entries {
				n.entries[i] = Entry{Index: uint64(i + 1), ID: string(rune('a' + i)), Op: "put", Key: "k", Value: "v"}
			}
			n.mu.Lock()
			if !n.heard(transport.Message{Type: transport.MsgApp, Epoch: 2, Commit: tt.commit}) {
				t.Fatal("the leader's message was refused")
			}
			n.learnCommit(tt.commit)
			n.mu.Unlock()
			if n.commit != tt.wantCommit {
				t.Errorf("commit %d, want %d", n.commit, tt.wantCommit)
			}
			n.applyCommitted()
			n.applyCommitted() // reported once
			if got := strings.Count(buf.String(), "applied entries beyond the commit index"); got != map[bool]int{true: 1}[tt.wantLog] {
				t.Errorf("%d error lines, want one: %v\n%s", got, tt.wantLog, buf.String())
			}
			if n.applied < 10 {
				t.Errorf("applied went back to %d", n.applied)
			}
		})
	}
}
