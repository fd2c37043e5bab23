package analysis

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the statistics like Legolas's Table 2: one row
// per package, then the totals and the time.
func (s Stats) WriteTable(w io.Writer) error {
	names := s.CounterNames()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"package"}
	for _, n := range names {
		header = append(header, strings.ReplaceAll(n, "_", " "))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	row := func(name string, c Counts) {
		cells := []string{name}
		for _, n := range names {
			cells = append(cells, fmt.Sprint(c[n]))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	prefix := commonPrefix(s.Packages)
	for _, p := range s.Packages {
		name := strings.TrimPrefix(p.Package, prefix)
		if name == "" {
			name = p.Package
		}
		row(name, p.Counts)
	}
	row(fmt.Sprintf("total (%d packages)", s.Totals[CountPackages]), s.Totals)
	if err := tw.Flush(); err != nil {
		return err
	}
	if prefix != "" {
		fmt.Fprintf(w, "packages under %s\n", prefix)
	}
	_, err := fmt.Fprintf(w, "analysis took %.1fs\n", s.Seconds)
	return err
}

// commonPrefix returns the longest common "a/b/" prefix of the package
// paths, when there are at least two packages.
func commonPrefix(rows []PackageStats) string {
	if len(rows) < 2 {
		return ""
	}
	prefix := rows[0].Package
	for _, r := range rows[1:] {
		for !strings.HasPrefix(r.Package, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		return prefix[:i+1]
	}
	return ""
}

// WriteSieveTable prints the Sieve counters like Sieve's Table 8: per
// package with Sieve sites, the lock-held, barrier-pending and
// timeout-protected I/O sites, their union, the representatives left after
// grouping by basic block and the reduction, then the totals and the
// timeout points captured.
func (s Stats) WriteSieveTable(w io.Writer) error {
	if s.Totals[CountSieveSites] == 0 && s.Totals[CountTimeoutPoints] == 0 {
		_, err := fmt.Fprintln(w, "sieve: no lock-held, barrier or timeout I/O sites")
		return err
	}
	fmt.Fprintln(w, "\nSieve fail-slow sites (I/O under a lock, before a barrier, under a timeout)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\tlock held\tbarrier\ttimeout\tall\tgrouped\treduction\t")
	row := func(name string, c Counts) {
		all, grouped := c[CountSieveSites], c[CountGroupedSites]
		red := "-"
		if all > 0 {
			red = fmt.Sprintf("%.0f%%", 100*float64(all-grouped)/float64(all))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name, c[CountLockHeldSites],
			c[CountBarrierSites], c[CountTimeoutSites], all, grouped, red)
	}
	prefix := commonPrefix(s.Packages)
	for _, p := range s.Packages {
		if p.Counts[CountSieveSites] == 0 {
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
		s.Totals[CountTimeoutPoints], s.Totals[CountTimeoutUncaptured])
	return err
}
