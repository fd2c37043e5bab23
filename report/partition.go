package report

import (
	"fmt"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// partitionLine describes a partition or disconnect injection on the
// trial's timeline: when it started and ended, relative to the trial's
// start, and what started it (cofi: the violated invariant, kept in the
// Error field).
func partitionLine(inj record.Injection, t *record.Trial) string {
	from := inj.Time.Sub(t.Start).Seconds()
	who := record.NodeRole(inj.Node, inj.Role)
	if inj.Kind == catalog.KindDisconnect {
		who += " from " + inj.Peer
	}
	s := fmt.Sprintf("%s of %s from +%.1fs to +%.1fs (%s) at %s",
		inj.Kind, who, from, from+inj.Delay.Seconds(), inj.Delay, inj.SiteID)
	if inj.Error != "" {
		s += ", started by " + inj.Error
	}
	return s
}

// partitionDetail is the detail faultLine gives a partition: its length
// and what started it.
func partitionDetail(f Fault) string {
	if f.Kind != catalog.KindPartition.String() || f.Error == "" {
		return ""
	}
	return f.Delay + " (started by " + f.Error + ")"
}
