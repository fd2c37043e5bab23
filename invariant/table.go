package invariant

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gofault/gofault/record"
)

// WriteTable lists the invariants invs that campaign mined from its
// fault-free trials, as gofault analyze --invariants does (campaign 0: no
// cofi campaign mined any).
func WriteTable(w io.Writer, invs []record.Invariant, campaign int64) error {
	if campaign == 0 {
		fmt.Fprintln(w, "no invariants: no cofi campaign has run fault-free trials yet (gofault run --policy cofi)")
		return nil
	}
	fmt.Fprintf(w, "%d invariants mined by campaign %d from its fault-free trials\n", len(invs), campaign)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "point\ttype\tinvariant\tobserved\ttrials")
	for _, v := range invs {
		fmt.Fprintf(tw, "%s\t%d\t%s == %s\t%d\t%d\n", v.Point, v.Type, v.A, v.B, v.Count, v.Trials)
	}
	return tw.Flush()
}
