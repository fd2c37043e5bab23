package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/instrument"
)

func init() {
	register(command{
		name:    "build",
		summary: "analyse and build the instrumented target binary (or the plain one)",
		run:     runBuild,
	})
}

func runBuild(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("build", os.Stderr)
	cf := addConfigFlags(fs, "target.version=v3.5.16")
	out := fs.String("o", "", "output binary (default <workdir>/bin/<name>, or <name>-plain with --uninstrumented)")
	plain := fs.Bool("uninstrumented", false, "build the plain binary with the same module versions (for baselines)")
	catPath := fs.String("catalog", "", "use this catalog.json instead of running the analysis (same module versions; module-cache positions are mapped to the work dir)")
	asJSON := fs.Bool("json", false, "print the build result as JSON")
	rebuild := fs.Bool("rebuild", false, "build afresh even when an earlier build's inputs are unchanged")
	bundle := fs.String("bundle", "", "write a bundle into this dir: stripped node and workload binaries, catalog, resolved config, manifest (runs with gofault run --bundle, no Go toolchain needed)")
	bugs := fs.String("bugs", "", "with --bundle: write one bundle per release this known-bug file needs, into DIR/<version> (DIR/default without one), for gofault bench --bundle DIR")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *bugs != "" && *bundle == "" {
		return fmt.Errorf("%w: --bugs builds bundles; give --bundle DIR too", errUsage)
	}
	cfg, err := config.Load(*cf.path, cf.sets...)
	if err != nil {
		return err
	}
	cfg.Defaults()
	release, err := lockWork(cfg)
	if err != nil {
		return err
	}
	defer release()
	if *bundle != "" {
		if *plain || *out != "" || *catPath != "" {
			return fmt.Errorf("%w: --bundle builds the instrumented binaries into the bundle; drop -o, --uninstrumented and --catalog", errUsage)
		}
		if *bugs != "" {
			return writeBenchBundles(ctx, stdout, *cf, *bundle, *bugs, build.Options{Rebuild: *rebuild}, *asJSON)
		}
		return writeBundle(ctx, stdout, *cf, *bundle, build.Options{Rebuild: *rebuild}, *asJSON)
	}
	if len(cfg.Target.Packages) == 0 && !*plain {
		return fmt.Errorf("config %s: target.packages is empty; nothing to instrument", *cf.path)
	}
	if *out == "" {
		name := cfg.Name
		if *plain {
			name += "-plain"
		}
		*out = cfg.Path(cfg.WorkDir + "/bin/" + name)
	}
	opts := build.Options{Rebuild: *rebuild}
	var res *build.Result
	if *plain {
		res, err = build.Plain(ctx, build.Target(cfg), *out, opts)
	} else {
		var cat *catalog.Catalog
		if *catPath != "" {
			if cat, err = catalog.Load(*catPath); err != nil {
				return err
			}
		}
		res, err = build.Node(ctx, build.Target(cfg), *out, cat, opts)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, struct {
			Binary  string               `json:"binary"`
			Reused  bool                 `json:"reused"`
			Catalog string               `json:"catalog,omitempty"`
			Hash    string               `json:"catalog_hash,omitempty"`
			Stats   instrument.Stats     `json:"stats"`
			Dropped []instrument.Dropped `json:"dropped,omitempty"`
		}{res.Binary, res.Reused, res.CatalogFile, catalogHash(res.Catalog), res.Stats, res.Dropped})
	}
	res.WriteText(stdout, *plain)
	return nil
}

func catalogHash(c *catalog.Catalog) string {
	if c == nil {
		return ""
	}
	return c.Hash
}

// writeBundle writes the bundle of the config cf names into dir and
// prints what it holds.
func writeBundle(ctx context.Context, stdout io.Writer, cf configFlags, dir string, opts build.Options, asJSON bool) error {
	// The bundle runs campaigns: the config must be a valid one, and it is
	// written as loaded (overrides applied, no defaults filled in).
	cfg, err := config.Open(*cf.path, known(), cf.sets...)
	if err != nil {
		return err
	}
	raw, err := config.Load(*cf.path, cf.sets...)
	if err != nil {
		return err
	}
	res, err := build.WriteBundle(ctx, cfg, raw, dir, opts)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, struct {
			Dir      string               `json:"dir"`
			Manifest build.Manifest       `json:"manifest"`
			Reused   bool                 `json:"reused"`
			Bytes    int64                `json:"bytes"`
			Stats    instrument.Stats     `json:"stats"`
			Dropped  []instrument.Dropped `json:"dropped,omitempty"`
		}{dir, res.Manifest, res.Node.Reused, res.Bytes, res.Node.Stats, res.Node.Dropped})
	}
	res.WriteText(stdout, dir)
	return nil
}
