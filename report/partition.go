package report

import (
	"fmt"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// partitionLine describes a cut (catalog.Kind.Cuts: a partition,
// disconnect, one-way cut, split or leader cut) on the trial's timeline:
// who was cut from whom and which way (record.Injection.CutPeers), when
// it started and ended, relative to the trial's start, and what started
// it (cofi: the violated invariant, kept in the Error field).
func partitionLine(inj record.Injection, t *record.Trial) string {
	from := inj.Time.Sub(t.Start).Seconds()
	var members []string
	for _, n := range t.Nodes {
		members = append(members, n.Name)
	}
	who := record.NodeRole(inj.Node, inj.Role) + inj.CutPeers(members)
	s := fmt.Sprintf("%s of %s from +%.1fs to +%.1fs (%s%s) at %s",
		inj.Kind, who, from, from+inj.Delay.Seconds(), inj.Delay, inj.Held(), inj.SiteID)
	if inj.Error != "" {
		s += ", started by " + inj.Error
	}
	return s
}

// partitionDetail is the detail faultLine gives a partition: its length
// and what started it, or, for any cut or delay held until a condition,
// what it was held until (record.Injection.Held, as on a trial's line).
func partitionDetail(f Fault) string {
	switch {
	case f.Held != "":
		return f.Delay + f.Held
	case f.Kind != catalog.KindPartition.String() || f.Error == "":
		return ""
	}
	return f.Delay + " (started by " + f.Error + ")"
}
