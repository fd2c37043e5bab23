package report

import (
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestPartitionLines(t *testing.T) {
	t0 := time.Unix(100, 0)
	tr := &record.Trial{ID: "3", Start: t0, End: t0.Add(10 * time.Second), Status: record.StatusOK, Policy: "cofi",
		Injections: []record.Injection{{Time: t0.Add(1500 * time.Millisecond), Node: "n2", Role: "StateFollower", Kind: catalog.KindPartition,
			Delay: 2 * time.Second, SiteID: "observe:raft.(*raft).Step", Error: "msg.Term == node.Term after message type 8"}}}
	var b strings.Builder
	if err := WriteTrials(&b, []*record.Trial{tr}, false); err != nil {
		t.Fatal(err)
	}
	want := "partition of n2 (StateFollower) from +1.5s to +3.5s (2s) at observe:raft.(*raft).Step, started by msg.Term == node.Term after message type 8"
	if !strings.Contains(b.String(), want) {
		t.Errorf("trial line %q\nwant it to hold %q", b.String(), want)
	}
	f := Fault{Kind: "partition", Delay: "2s", Error: "msg.Term == node.Term", Site: "s", Node: "n2"}
	if got := faultLine(f); got != "partition 2s (started by msg.Term == node.Term) at s on n2" {
		t.Errorf("faultLine %q", got)
	}
}

// TestShapeLines: each partition shape says on a trial's line and in a
// finding's fault who was cut from whom, and which way.
func TestShapeLines(t *testing.T) {
	t0 := time.Unix(100, 0)
	var nodes []record.Node
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		nodes = append(nodes, record.Node{Name: n})
	}
	for _, tc := range []struct {
		name  string
		inj   record.Injection
		line  string // on the trial's line
		fault string // faultLine of the finding's fault
	}{
		{"oneway", record.Injection{Node: "n1", Role: "StateLeader", Kind: catalog.KindOneWay, Peer: "n2"},
			"oneway of n1 (StateLeader) to n2, one way (n1 could not reach n2; n2 still reached n1) from +1.0s to +3.0s (2s) at s",
			"oneway 2s at s of n1 (StateLeader) to n2, one way (n1 could not reach n2; n2 still reached n1)"},
		{"split", record.Injection{Node: "n1", Kind: catalog.KindSplit, Peer: "n3", Side: []string{"n2"}},
			"split of n1 with n2 from n3, n4, n5, both ways from +1.0s to +3.0s (2s) at s",
			"split 2s at s of n1 with n2 from the other members, both ways"},
		{"split alone", record.Injection{Node: "n4", Kind: catalog.KindSplit, Peer: "n3"},
			"split of n4 from n1, n2, n3, n5, both ways from +1.0s",
			"split 2s at s of n4 from the other members, both ways"},
		{"leadercut", record.Injection{Node: "n1", Role: "StateLeader", Kind: catalog.KindLeaderCut, SiteID: "wal.Save#0"},
			"leadercut of n1 (StateLeader) from +1.0s to +3.0s (2s) at wal.Save#0",
			"leadercut 2s at wal.Save#0 on n1 (StateLeader)"},
		{"disconnect", record.Injection{Node: "n1", Kind: catalog.KindDisconnect, Peer: "n2"},
			"disconnect of n1 from n2 from +1.0s to +3.0s (2s) at s",
			"disconnect 2s at s of n1 from n2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.inj
			in.Time, in.Delay = t0.Add(time.Second), 2*time.Second
			if in.SiteID == "" {
				in.SiteID = "s"
			}
			tr := &record.Trial{ID: "3", Start: t0, End: t0.Add(10 * time.Second), Status: record.StatusOK, Nodes: nodes, Injections: []record.Injection{in}}
			checkLines(t, tr, tc.line, tc.fault)
		})
	}
}

// TestHeldDelayLines: a delay held until a condition says on a trial's
// line and in a finding's fault, in the words of a held cut
// (record.Injection.Held), what it was held until, what met it and its
// real length, or that it ended at its cap; a fixed delay says its
// length alone.
func TestHeldDelayLines(t *testing.T) {
	t0 := time.Unix(100, 0)
	for _, tc := range []struct {
		name string
		inj  record.Injection
		want string // on the trial's line and as faultLine
	}{
		{"met", record.Injection{Delay: 412 * time.Millisecond, Until: "requests=20", Cap: 15 * time.Second, Met: "the other members' clients made 20 requests that succeeded"},
			"delay 412ms until requests=20 (the other members' clients made 20 requests that succeeded) at wal.Sync#0 on n2 (StateFollower)"},
		{"leader", record.Injection{Delay: 2400 * time.Millisecond, Until: "leader", Cap: 15 * time.Second, Met: "n3 became StateLeader"},
			"delay 2.4s until the leader moved (n3 became StateLeader) at wal.Sync#0 on n2 (StateFollower)"},
		{"behind", record.Injection{Delay: 1300 * time.Millisecond, Until: "behind=20", Cap: 15 * time.Second, Met: "n2 was 23 entries behind: commit 178 at the others, 155 at n2 when its call was held"},
			"delay 1.3s until 20 entries behind (n2 was 23 entries behind: commit 178 at the others, 155 at n2 when its call was held) at wal.Sync#0 on n2 (StateFollower)"},
		{"at the cap", record.Injection{Delay: 15 * time.Second, Until: "site=SaveSnap", Cap: 15 * time.Second},
			"delay 15s until another member reached SaveSnap (not met: ended at its 15s cap) at wal.Sync#0 on n2 (StateFollower)"},
		{"fixed", record.Injection{Delay: 3 * time.Second},
			"delay 3s at wal.Sync#0 on n2 (StateFollower)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.inj
			in.Time, in.Node, in.Role, in.Kind, in.SiteID = t0.Add(time.Second), "n2", "StateFollower", catalog.KindDelay, "wal.Sync#0"
			tr := &record.Trial{ID: "3", Start: t0, End: t0.Add(10 * time.Second), Status: record.StatusOK, Injections: []record.Injection{in}}
			checkLines(t, tr, tc.want, tc.want)
		})
	}
}

// checkLines checks that tr's line (WriteTrials) holds line and that its
// finding's fault (faultLine) is fault.
func checkLines(t *testing.T, tr *record.Trial, line, fault string) {
	t.Helper()
	var b strings.Builder
	if err := WriteTrials(&b, []*record.Trial{tr}, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), line) {
		t.Errorf("trial line %q\nwant it to hold %q", b.String(), line)
	}
	if got := faultLine(faultOf(tr)); got != fault {
		t.Errorf("faultLine %q\nwant %q", got, fault)
	}
}
