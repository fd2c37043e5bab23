// Package build is the one place that sequences gofault's build of a
// target, in this order:
//
//	instrument.Prepare(target)          → a work dir (module copies, modfile)
//	analysis.Run(work)                  → the catalog of the prepared tree
//	instrument.Build(work, catalog)     → the binary, its catalog, the IDs dropped
//
// under one lock on the work dir, plus the plain (uninstrumented) build and
// the workload program. It maps gofault.yaml to the instrumenter's own
// input (Target); the stages it calls know nothing of the config.
package build

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gofault/gofault/analysis"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/instrument"
)

// Target returns the instrumenter's input for cfg: its main module, target
// packages and release, and the build work dir <workdir>/build (workdir is
// cfg.WorkDir or ".gofault" next to the config file).
func Target(cfg *config.Config) instrument.Target {
	wd := cfg.WorkDir
	if wd == "" {
		wd = ".gofault"
	}
	return instrument.Target{
		Module:     cmp.Or(cfg.Path(cfg.Target.Module), cfg.Dir),
		Main:       cfg.Target.Main,
		Packages:   cfg.Target.Packages,
		BuildFlags: cfg.Target.BuildFlags,
		Version:    cfg.Target.Version,
		Versioned:  cfg.Target.Versioned,
		WorkDir:    filepath.Join(cfg.Path(wd), "build"),
	}
}

// Node builds the instrumented node binary of t into out: it prepares the
// work dir, analyses the prepared tree (unless cat is given: a catalog
// saved earlier for the same module versions, whose module-cache positions
// are mapped to the work dir) and instruments and builds. The result's
// Stats cover every phase.
func Node(ctx context.Context, t instrument.Target, out string, cat *catalog.Catalog) (*instrument.Result, error) {
	return prepared(ctx, t, func(w *instrument.Work) (*instrument.Result, error) {
		t0 := time.Now()
		if cat == nil {
			res, err := Analyze(ctx, w)
			if err != nil {
				return nil, fmt.Errorf("analyse: %w", err)
			}
			cat = res.Catalog
		}
		analysed := time.Since(t0).Seconds()
		res, err := instrument.Build(ctx, w, cat, out, instrument.Options{})
		if err == nil {
			res.Stats.Seconds.Analyze = analysed
		}
		return res, err
	})
}

// Plain builds t's main package into out without instrumentation, with the
// same module versions as Node (for baselines and benchmarks).
func Plain(ctx context.Context, t instrument.Target, out string) (*instrument.Result, error) {
	return prepared(ctx, t, func(w *instrument.Work) (*instrument.Result, error) {
		return instrument.BuildPlain(ctx, w, out)
	})
}

// prepared locks t's work dir, prepares it and runs build on it, timing
// the preparation and the whole.
func prepared(ctx context.Context, t instrument.Target, build func(*instrument.Work) (*instrument.Result, error)) (*instrument.Result, error) {
	t0 := time.Now()
	var res *instrument.Result
	var t1 time.Time
	err := withWork(ctx, t, func(w *instrument.Work) (err error) {
		t1 = time.Now()
		res, err = build(w)
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Stats.Seconds.Prepare = t1.Sub(t0).Seconds()
	res.Stats.Seconds.Total = time.Since(t0).Seconds()
	return res, nil
}

// withWork locks t's work dir, prepares it and calls f with it.
func withWork(ctx context.Context, t instrument.Target, f func(*instrument.Work) error) error {
	unlock, err := instrument.LockWorkDir(t.WorkDir)
	if err != nil {
		return err
	}
	defer unlock()
	w, err := instrument.Prepare(ctx, t)
	if err != nil {
		return err
	}
	return f(w)
}

// AnalyzeTarget prepares t's work dir (under its lock) and analyses the
// prepared tree: exactly what Node builds, with target.version applied and
// dependency modules read from their copies, so the catalog's positions
// name the release under test.
func AnalyzeTarget(ctx context.Context, t instrument.Target) (*analysis.Result, error) {
	var res *analysis.Result
	err := withWork(ctx, t, func(w *instrument.Work) (err error) {
		res, err = Analyze(ctx, w)
		return err
	})
	return res, err
}

// Analyze runs gofault's analysis on a prepared work tree: the target
// packages as the instrumented build compiles them (the work modfile, the
// module copies, the user's build flags).
func Analyze(ctx context.Context, w *instrument.Work) (*analysis.Result, error) {
	return analysis.Run(ctx, analysis.Options{
		Dir:        w.ModuleDir,
		Patterns:   w.Patterns,
		BuildFlags: w.AllBuildFlags(),
		Env:        w.Env,
	})
}

// Workload builds the Go main package pkg of the module in dir into out
// with the module's own go.mod (the workload is not instrumented).
func Workload(ctx context.Context, dir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build workload %s: %w\n%s", pkg, err, b)
	}
	return nil
}
