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
