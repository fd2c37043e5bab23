package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/gofault/gofault/analysis"
	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
)

func init() {
	register(command{
		name:    "analyze",
		summary: "find the fault sites of the target and print statistics",
		run:     runAnalyze,
	})
}

func runAnalyze(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("analyze", os.Stderr)
	cf := addConfigFlags(fs, "target.packages=example.com/x/...")
	asJSON := fs.Bool("json", false, "print the statistics as one JSON object")
	catPath := fs.String("catalog", "", "also write the catalog (catalog.json) to this file")
	sites := fs.Bool("sites", false, "also list every site with its error values (not with --json)")
	states := fs.Bool("states", false, "also list every task unit with its abstract states (not with --json)")
	invariants := fs.Bool("invariants", false, "only list the invariants the newest cofi campaign in the store mined from its fault-free trials")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*cf.path, cf.sets...)
	if err != nil {
		return err
	}
	if len(cfg.Target.Packages) == 0 {
		return fmt.Errorf("config %s: target.packages is empty; nothing to analyse", *cf.path)
	}
	cfg.Defaults()
	if *invariants {
		return writeInvariants(ctx, cfg, *asJSON, stdout)
	}
	// The tree build compiles: target.version applied, dependency modules
	// read from the work dir's copies.
	res, err := build.AnalyzeTarget(ctx, build.Target(cfg))
	if err != nil {
		return err
	}
	if *catPath != "" {
		if err := res.Catalog.Save(*catPath); err != nil {
			return err
		}
	}
	if *asJSON {
		// The state counters are always reported, zero or not.
		res.Stats.Totals[analysis.CountStateMachines] += 0
		res.Stats.Totals[analysis.CountStates] += 0
		res.Stats.Totals[analysis.CountRoleWrites] += 0
		return json.NewEncoder(stdout).Encode(res.Stats)
	}
	if *sites {
		if err := catalog.WriteSites(stdout, res.Catalog, ""); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	if *states {
		if err := catalog.WriteStates(stdout, res.Catalog, ""); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	if err := writeStatsTable(stdout, res.Stats); err != nil {
		return err
	}
	if err := writeSieveTable(stdout, res.Stats); err != nil {
		return err
	}
	return catalog.WriteRole(stdout, res.Catalog, "")
}

// writeStatsTable prints the statistics like Legolas's Table 2: one row
// per package, then the totals and the time.
func writeStatsTable(w io.Writer, s analysis.Stats) error {
	names := s.CounterNames()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"package"}
	for _, n := range names {
		header = append(header, strings.ReplaceAll(n, "_", " "))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	row := func(name string, c analysis.Counts) {
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
	row(fmt.Sprintf("total (%d packages)", s.Totals[analysis.CountPackages]), s.Totals)
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
func commonPrefix(rows []analysis.PackageStats) string {
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
