package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gofault/gofault/analysis"
)

// writeSieveTable prints the Sieve counters like Sieve's Table 8: per
// package with Sieve sites, the lock-held, barrier-pending and
// timeout-protected I/O sites, their union, the representatives left after
// grouping by basic block and the reduction, then the totals and the
// timeout points captured.
func writeSieveTable(w io.Writer, s analysis.Stats) error {
	if s.Totals[analysis.CountSieveSites] == 0 && s.Totals[analysis.CountTimeoutPoints] == 0 {
		_, err := fmt.Fprintln(w, "sieve: no lock-held, barrier or timeout I/O sites")
		return err
	}
	fmt.Fprintln(w, "\nSieve fail-slow sites (I/O under a lock, before a barrier, under a timeout)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\tlock held\tbarrier\ttimeout\tall\tgrouped\treduction\t")
	row := func(name string, c analysis.Counts) {
		all, grouped := c[analysis.CountSieveSites], c[analysis.CountGroupedSites]
		red := "-"
		if all > 0 {
			red = fmt.Sprintf("%.0f%%", 100*float64(all-grouped)/float64(all))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name, c[analysis.CountLockHeldSites],
			c[analysis.CountBarrierSites], c[analysis.CountTimeoutSites], all, grouped, red)
	}
	prefix := commonPrefix(s.Packages)
	for _, p := range s.Packages {
		if p.Counts[analysis.CountSieveSites] == 0 {
			continue
		}
		name := strings.TrimPrefix(p.Package, prefix)
		if name == "" {
			name = p.Package
		}
		row(name, p.Counts)
	}
	row("total", s.Totals)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "timeout points: %d captured, %d deadlines without a capturable duration\n",
		s.Totals[analysis.CountTimeoutPoints], s.Totals[analysis.CountTimeoutUncaptured])
	return err
}
