package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

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
		return fmt.Errorf("config %s: target.packages is empty; nothing to analyse: list the packages that hold the node's code (e.g. target.packages: [./server/...]), or run gofault init in the module to write a config", *cf.path)
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
	if err := res.Stats.WriteTable(stdout); err != nil {
		return err
	}
	if err := res.Stats.WriteSieveTable(stdout); err != nil {
		return err
	}
	if res.Catalog.Role == nil && res.RoleSuggestion != "" {
		_, err := fmt.Fprintln(stdout, "role: "+res.RoleSuggestion)
		return err
	}
	return catalog.WriteRole(stdout, res.Catalog, "")
}
