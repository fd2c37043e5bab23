package build

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
)

// Built is what a campaign runs: the instrumented node binary, its catalog
// and the workload's command line, from Binaries or a bundle
// (Bundle.Built).
type Built struct {
	// Binary is the instrumented node binary; Catalog its catalog.
	Binary  string
	Catalog *catalog.Catalog
	// Workload is the workload's command line.
	Workload []string
	Seconds  float64
	// Key identifies the node build's inputs, sources included (build
	// Result.Key; "" when they could not be keyed): a replay whose build
	// has the campaign's key runs the very same code, line for line.
	Key string
}

// Binaries builds the instrumented node binary and the workload of cfg,
// reusing earlier builds whose inputs are unchanged unless opts.Rebuild.
func Binaries(ctx context.Context, cfg *config.Config, opts Options, log *slog.Logger) (*Built, error) {
	start := time.Now()
	bin := nodeBinary(cfg)
	if cfg.Workload.Package != "" {
		// Seconds, and it spares a target build when the field is wrong.
		if err := CheckWorkload(ctx, cfg.Path(cfg.Target.Module), cfg.Workload.Package); err != nil {
			return nil, err
		}
	}
	if cfg.Release != "" {
		log.Info("target.version chooses a releases entry of the config", "version", cfg.Target.Version, "entry", cfg.Release)
	}
	log.Info("building instrumented target", "config", cfg.Name)
	res, err := Node(ctx, Target(cfg), bin, nil, opts)
	if err != nil {
		return nil, fmt.Errorf("build target: %w", err)
	}
	if res.Reused {
		log.Info("reusing build "+res.Binary+" (inputs unchanged)", "sites", len(res.Catalog.Sites))
	}
	b := &Built{Binary: res.Binary, Catalog: res.Catalog, Key: res.Key}
	switch {
	case cfg.Workload.Package != "":
		wl := bin + "-workload"
		reused, err := Workload(ctx, cfg.Path(cfg.Target.Module), cfg.Workload.Package, wl, opts)
		if err != nil {
			return nil, err
		}
		if reused {
			log.Info("reusing build " + wl + " (inputs unchanged)")
		}
		b.Workload = []string{wl}
	case len(cfg.Workload.Command) > 0:
		b.Workload = cfg.Workload.Command
	default:
		return nil, errors.New("workload: set workload.package (a Go main package) or workload.command")
	}
	b.Seconds = time.Since(start).Seconds()
	log.Info("built", "binary", b.Binary, "sites", len(b.Catalog.Sites), "seconds", fmt.Sprintf("%.1f", b.Seconds))
	return b, nil
}

// nodeBinary is where Binaries builds cfg's instrumented node binary, in
// its work dir.
func nodeBinary(cfg *config.Config) string {
	return filepath.Join(cfg.Path(cfg.WorkDir), "bin", cfg.Name)
}

// LastCatalog returns the catalog of the last node build of cfg in its
// work dir (the one gofault run builds, Binaries) and that build's key
// (build.Result.Key, which a campaign stores: store.BuildKey), read from
// the build's key file.
func LastCatalog(cfg *config.Config) (*catalog.Catalog, string, error) {
	bin := nodeBinary(cfg)
	rec, err := readKey(bin)
	if err != nil {
		return nil, "", fmt.Errorf("last build of %s: %w", cfg.Name, err)
	}
	if rec.CatalogFile == "" {
		return nil, "", fmt.Errorf("last build of %s: %s names no catalog", cfg.Name, KeyFile(bin))
	}
	cat, err := catalog.Load(rec.CatalogFile)
	if err != nil {
		return nil, "", fmt.Errorf("last build of %s: %w", cfg.Name, err)
	}
	return cat, rec.Key, nil
}

// Built is what a campaign of cfg runs from the bundle: its binaries, and
// cfg's workload.command when the bundle has no workload binary.
func (b *Bundle) Built(cfg *config.Config) (*Built, error) {
	bt := &Built{Binary: b.Node, Catalog: b.Catalog}
	switch {
	case b.Workload != "":
		bt.Workload = []string{b.Workload}
	case len(cfg.Workload.Command) > 0:
		bt.Workload = cfg.Workload.Command
	default:
		return nil, errors.New("bundle " + b.Dir + " has no workload binary and the config no workload.command")
	}
	m := b.Manifest
	slog.Info("running bundle", "dir", b.Dir, "target", m.Target, "version", m.TargetVersion, "catalog", m.CatalogHash, "sites", len(b.Catalog.Sites))
	return bt, nil
}
