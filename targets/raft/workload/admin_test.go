package main

import (
	"strings"
	"testing"
)

// TestJudges: each admin guarantee's judge reports the broken case and
// passes the sound one.
func TestJudges(t *testing.T) {
	st := func(i uint64, d string) stateDigest { return stateDigest{Index: i, Digest: d} }
	for _, tc := range []struct {
		name string
		got  []finding
		want []string // message prefixes, in order
	}{
		{"restore sound", judgeRestore(restoreReply{Before: st(7, "a"), Snapshot: st(7, "a"), After: st(7, "a"), RestoresBefore: 1, RestoresAfter: 2}), nil},
		{"restore of a wrong snapshot", judgeRestore(restoreReply{Before: st(7, "a"), Snapshot: st(7, "b"), After: st(7, "b"), RestoresBefore: 0, RestoresAfter: 1}),
			[]string{"the snapshot of state a at command index 7 holds b"}},
		{"restore that restored nothing", judgeRestore(restoreReply{Before: st(7, "a"), Snapshot: st(7, "a"), After: st(7, "a"), RestoresBefore: 2, RestoresAfter: 2}),
			[]string{"restore acknowledged, but the state machine restored no snapshot"}},
		{"restore that kept another state", judgeRestore(restoreReply{Before: st(7, "a"), Snapshot: st(7, "a"), After: st(7, "c"), RestoresBefore: 0, RestoresAfter: 1}),
			[]string{"restored the snapshot of state a at command index 7, then held c"}},
		{"restore with writes after it is not judged on its state", judgeRestore(restoreReply{Before: st(7, "a"), Snapshot: st(8, "b"), After: st(9, "c"), RestoresBefore: 0, RestoresAfter: 1}), nil},
		{"transfer sound", judgeTransfer(transferReply{From: "n1", TermBefore: 3, TermAfter: 4, RoleAfter: "Follower"}), nil},
		{"transfer sound, term not yet seen", judgeTransfer(transferReply{From: "n1", TermBefore: 3, TermAfter: 3, RoleAfter: "Follower"}), nil},
		{"transfer that kept the leadership", judgeTransfer(transferReply{From: "n1", TermBefore: 3, TermAfter: 3, RoleAfter: "Leader"}),
			[]string{"leadership transfer from n1 acknowledged, but it is still the leader of term 3"}},
		{"barrier sound", judgeBarrier(barrierReply{Index: 9, Writes: map[string]int{"a#1": 1, "a#2": 1}}, []string{"a#1", "a#2"}), nil},
		{"barrier before a write", judgeBarrier(barrierReply{Index: 9, Writes: map[string]int{"a#1": 1}}, []string{"a#1", "a#2"}),
			[]string{"after a barrier the leader's state (command index 9) lacks 1 writes acknowledged before it: a#2"}},
		{"voters agree", judgeVoters([]string{"n1", "n2", "n3"}, map[string][]string{"n1": {"n1", "n2", "n3"}, "n2": {"n1", "n2", "n3"}}, nil), nil},
		{"voters disagree", judgeVoters([]string{"n1", "n2", "n3"}, map[string][]string{"n1": {"n1", "n2", "n3"}, "n2": {"n1", "n2"}}, nil),
			[]string{"caught-up members disagree on the voters: n1 has n1,n2,n3, n2 has n1,n2", "n3 is not a voter in n2's configuration"}},
		{"members may disagree while a change is pending", judgeVoters([]string{"n1", "n2", "n3"}, map[string][]string{"n1": {"n1", "n2", "n3"}, "n2": {"n1", "n2"}}, map[string]bool{"n3": true}), nil},
		{"a pending member may be missing", judgeVoters([]string{"n1", "n2", "n3"}, map[string][]string{"n1": {"n1", "n2"}, "n2": {"n1", "n2"}}, map[string]bool{"n3": true}), nil},
		{"an acknowledged member missing", judgeVoters([]string{"n1", "n2", "n3"}, map[string][]string{"n1": {"n1", "n2"}}, nil),
			[]string{"n3 is not a voter in n1's configuration (n1,n2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.got) != len(tc.want) {
				t.Fatalf("findings %v, want %d", tc.got, len(tc.want))
			}
			for i, f := range tc.got {
				if !strings.HasPrefix(f.msg, tc.want[i]) {
					t.Errorf("finding %d: %q, want %q", i, f.msg, tc.want[i])
				}
			}
		})
	}
}

// TestSawState: a state seen twice at one command index must be the
// same; the second, different one is a snapshot-state violation.
func TestSawState(t *testing.T) {
	a := newAdmin([]string{"n1"}, &ledger{acked: map[string]bool{}})
	var got []string
	report := func(st stateDigest, where string) {
		if f := a.noteState(st, where); f != nil {
			got = append(got, f.msg)
		}
	}
	report(stateDigest{Index: 5, Digest: "x"}, "n1's snapshot")
	report(stateDigest{Index: 5, Digest: "x"}, "n2's snapshot")
	report(stateDigest{Index: 6, Digest: "y"}, "n2's snapshot")
	report(stateDigest{Index: 5, Digest: "z"}, "n3's final state")
	report(stateDigest{Index: 0, Digest: "w"}, "empty")
	if len(got) != 1 || got[0] != "n3's final state holds state z at command index 5, n1's snapshot holds x" {
		t.Errorf("findings %q", got)
	}
}
