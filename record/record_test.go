package record

import (
	"slices"
	"testing"

	"github.com/gofault/gofault/catalog"
)

func TestTrialID(t *testing.T) {
	for _, tc := range []struct {
		id       string
		campaign int64
		index    int
		ok       bool
	}{
		{TrialID(3, 17), 3, 17, true},
		{TrialID(1, 0), 1, 0, true},
		{"12-x", 0, 0, false},
		{"x-1", 0, 0, false},
		{"7", 0, 0, false},
		{"-1-2", 0, 0, false},
		{"", 0, 0, false},
	} {
		c, i, ok := ParseTrialID(tc.id)
		if c != tc.campaign || i != tc.index || ok != tc.ok {
			t.Errorf("ParseTrialID(%q) = %d, %d, %v; want %d, %d, %v", tc.id, c, i, ok, tc.campaign, tc.index, tc.ok)
		}
	}
	if TrialID(3, 17) != "3-17" {
		t.Errorf("TrialID(3, 17) = %q", TrialID(3, 17))
	}
}

// TestCallerStack: the instrumentation's function literal at the top of
// an injection's stack (a closure at its caller's very file and line) is
// dropped; a user's closure on a line of its own, or a stack without one,
// is kept.
func TestCallerStack(t *testing.T) {
	f := func(fn string, line int) Frame { return Frame{Func: fn, File: "/m/store.go", Line: line} }
	tests := []struct {
		name  string
		stack []Frame
		drop  int
	}{
		{"hook literal", []Frame{f("m.Save.func1", 24), f("m.Save", 24), f("m.TestSave", 11)}, 1},
		{"hook literal in a method's closure", []Frame{f("m.(*S).Run.func2.1", 40), f("m.(*S).Run.func2", 40), f("m.(*S).Run", 38)}, 1},
		{"an enclosing site's literal too", []Frame{f("bolt.(*Tx).write", 498), f("m.(*S).Store.func3", 208), f("m.(*S).Store", 208), f("m.loop", 9)}, -1},
		{"a closure of its own line", []Frame{f("m.Save.func1", 30), f("m.Save", 24)}, 0},
		{"no closure", []Frame{f("m.Save", 24), f("m.TestSave", 24)}, 0},
		{"a name like a closure", []Frame{f("m.funcs", 24), f("m.Save", 24)}, 0},
		{"one frame", []Frame{f("m.Save.func1", 24)}, 0},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		want := tt.stack[max(tt.drop, 0):]
		if tt.drop < 0 { // the second frame goes
			want = append([]Frame{tt.stack[0]}, tt.stack[2:]...)
		}
		if got := CallerStack(tt.stack); !slices.Equal(got, want) {
			t.Errorf("%s: CallerStack = %v, want %v", tt.name, got, want)
		}
	}
}

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		k     catalog.Kind
		site  string
		timer string
		want  string
	}{
		{catalog.KindCrashAfter, "go.etcd.io/etcd/server/v3/storage/wal.(*WAL).sync:fileutil.Fdatasync#0", "", " (killed right after fileutil.Fdatasync returned)"},
		{catalog.KindPowerLossAfter, "p.(*store).put:(*os.File).Sync#2", "", " (power lost right after (*os.File).Sync returned: what was not synced is gone)"},
		{catalog.KindCrash, "p.(*store).put:(*os.File).Sync#2", "", ""},
		{catalog.KindCrashAfter, "p.(*store).put:(*os.File).Sync#2", "os.Rename", " (killed right after (*os.File).Sync returned, before its next disk call, os.Rename)"},
		{catalog.KindPause, "p.(*node).tick:(*raft).Step#0", "2 × election", " (the whole process stopped, then went on; 2 × election)"},
		{catalog.KindStop, "p.(*node).tick:(*raft).Step#0", "", " (down, then started again)"},
		{catalog.KindError, "p.(*store).put:(*os.File).Sync#2", "EIO", ""},
	} {
		if got := Shape(tc.k, tc.site, tc.timer); got != tc.want {
			t.Errorf("Shape(%v, %s, %q) = %q, want %q", tc.k, tc.site, tc.timer, got, tc.want)
		}
	}
}

// TestOnLeader: which recorded faults a replay strikes on whichever member
// leads: a leadercut always, a fault of the leader when the catalog has a
// role with a leader value, never a cut between named members.
func TestOnLeader(t *testing.T) {
	role := &catalog.Role{Values: []catalog.RoleValue{{Value: 1, Name: "candidate"}, {Value: 2, Name: "follower"}, {Value: 3, Name: "leader"}}}
	for _, tc := range []struct {
		kind  catalog.Kind
		role  string
		cat   *catalog.Role
		want  bool
		label string
	}{
		{catalog.KindCrash, "leader", role, true, "a crash of the leader"},
		{catalog.KindError, "leader", role, true, "an error of the leader"},
		{catalog.KindDelay, "follower", role, false, "a delay of a follower"},
		{catalog.KindCrash, "leader", nil, false, "no catalog role"},
		{catalog.KindDisconnect, "leader", role, false, "a disconnect between named members"},
		{catalog.KindLeaderCut, "", nil, true, "a leadercut"},
	} {
		if got := (Injection{Kind: tc.kind, Role: tc.role}).OnLeader(tc.cat); got != tc.want {
			t.Errorf("%s: OnLeader = %v, want %v", tc.label, got, tc.want)
		}
	}
}
