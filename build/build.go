// Package build is the one place that sequences gofault's build of a
// target, in this order:
//
//	instrument.Prepare(target)          → a work dir (module copies, modfile)
//	analysis.Run(work)                  → the catalog of the prepared tree
//	instrument.Build(work, catalog)     → the binary, its catalog, the IDs dropped
//
// under one lock on the work dir, plus the plain (uninstrumented) build and
// the workload program. A build whose inputs are unchanged is reused (see
// cache.go), and bundles carry builds to machines without a Go toolchain
// (bundle.go). It maps gofault.yaml to the instrumenter's own input
// (Target); the stages it calls know nothing of the config.
package build

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofault/gofault/analysis"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/instrument"
	"github.com/gofault/gofault/procgroup"
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
		Role:       cfg.Target.Role,

		PeerPackages:   cfg.Faults.Partition.Packages,
		ObserveSend:    cfg.Faults.Partition.Observe.Send,
		ObserveHandled: cfg.Faults.Partition.Observe.Handled,
		NoCoverage:     !cfg.Faults.CoverageOn(),
	}
}

// Options tune Node, Plain and Workload.
type Options struct {
	// Rebuild builds afresh even when the binary of an earlier build
	// with the same inputs (its key file) is there.
	Rebuild bool
	// Strip links without the symbol table and DWARF (-ldflags=-s -w),
	// for bundles.
	Strip bool
}

// Result is a build's outcome.
type Result struct {
	*instrument.Result
	// Reused is set when the binary of an earlier build with the same
	// inputs was reused: no analysis and no go build ran.
	Reused bool
	// Key identifies the build's inputs (see KeyFile).
	Key string
}

// Node builds the instrumented node binary of t into out: it prepares the
// work dir, analyses the prepared tree (unless cat is given: a catalog
// saved earlier for the same module versions, whose module-cache positions
// are mapped to the work dir) and instruments and builds. An earlier build
// into out whose inputs (see nodeKey) are unchanged is reused unless
// opts.Rebuild. The result's Stats cover every phase.
func Node(ctx context.Context, t instrument.Target, out string, cat *catalog.Catalog, opts Options) (*Result, error) {
	kind := "node"
	if cat != nil {
		kind += " catalog " + cat.Hash
	}
	return prepared(ctx, t, out, kind, opts, func(w *instrument.Work, inputs string) (*instrument.Result, error) {
		t0 := time.Now()
		if cat == nil {
			key := ""
			if inputs != "" && !opts.Rebuild {
				key = kindKey(inputs, "analysis", false)
			}
			res, _, err := analyzeCached(ctx, w, key)
			if err != nil {
				return nil, fmt.Errorf("analyse: %w", err)
			}
			cat = res.Catalog
		}
		analysed := time.Since(t0).Seconds()
		slog.Info("instrumenting and compiling", "sites", len(cat.Sites))
		res, err := instrument.Build(ctx, w, cat, out, instrument.Options{Strip: opts.Strip})
		if err == nil {
			res.Stats.Seconds.Analyze = analysed
		}
		return res, err
	})
}

// Plain builds t's main package into out without instrumentation, with the
// same module versions as Node (for baselines and benchmarks), reusing an
// earlier build of the same inputs like Node.
func Plain(ctx context.Context, t instrument.Target, out string, opts Options) (*Result, error) {
	return prepared(ctx, t, out, "plain", opts, func(w *instrument.Work, _ string) (*instrument.Result, error) {
		return instrument.BuildPlain(ctx, w, out, instrument.Options{Strip: opts.Strip})
	})
}

// prepared locks t's work dir, prepares it and runs build on it unless the
// build recorded in out's key file has the same inputs, timing the
// preparation and the whole.
func prepared(ctx context.Context, t instrument.Target, out, kind string, opts Options, build func(w *instrument.Work, inputs string) (*instrument.Result, error)) (*Result, error) {
	t0 := time.Now()
	var res *Result
	var t1 time.Time
	err := withWork(ctx, t, func(w *instrument.Work) (err error) {
		t1 = time.Now()
		inputs, err := inputsKey(ctx, w, t)
		if ctx.Err() != nil {
			return fmt.Errorf("build key: %w", ctx.Err())
		}
		key := ""
		if err != nil {
			slog.Warn("cannot key the build; building afresh", "err", err)
		} else {
			key = kindKey(inputs, kind, opts.Strip)
		}
		if key != "" && !opts.Rebuild {
			if r, ok := reuse(out, key); ok {
				r.Work = w
				res = &Result{Result: r, Reused: true, Key: key}
				return nil
			}
		}
		if err := forget(out); err != nil {
			return err
		}
		r, err := build(w, inputs)
		if err != nil {
			return err
		}
		res = &Result{Result: r, Key: key}
		if key != "" {
			return record(r, key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Stats.Seconds.Prepare = t1.Sub(t0).Seconds()
	res.Stats.Seconds.Total = time.Since(t0).Seconds()
	if res.Reused {
		res.Stats.Seconds.Analyze, res.Stats.Seconds.Instrument, res.Stats.Seconds.Build = 0, 0, 0
		res.Stats.Builds = 0
	}
	return res, nil
}

// withWork locks t's work dir, prepares it and calls f with it.
func withWork(ctx context.Context, t instrument.Target, f func(*instrument.Work) error) error {
	unlock, err := instrument.WaitForBuildDir(t.WorkDir)
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
		inputs, err := inputsKey(ctx, w, t)
		key := ""
		if err != nil {
			slog.Warn("cannot key the analysis; a build will analyse again", "err", err)
		} else {
			key = kindKey(inputs, "analysis", false)
		}
		res, _, err = analyzeCached(ctx, w, key)
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
		Role:       w.Role,

		PeerPackages:   w.PeerPackages,
		ObserveSend:    w.ObserveSend,
		ObserveHandled: w.ObserveHandled,
	})
}

// CheckWorkload checks, with one go list, that pkg names a main package of
// the module in dir, so that a wrong workload.package fails before the
// target is built, naming the field and the fix.
func CheckWorkload(ctx context.Context, dir, pkg string) error {
	cmd := procgroup.Command(ctx, "go", "list", "-f", "{{.Name}}", pkg)
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := procgroup.Run(cmd); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("workload.package: %w", ctx.Err())
		}
		return fmt.Errorf("workload.package: %q is not a package of the module in %s (%w: %s); set it to the import path or ./dir of the workload's main package, relative to target.module, e.g. \"package: ./workload\"",
			pkg, dir, err, strings.TrimSpace(stderr.String()))
	}
	if name := strings.TrimSpace(out.String()); name != "main" {
		return fmt.Errorf("workload.package: %q is package %s, not a main package; set it to the workload's main package (one with func main), e.g. \"package: ./workload\"", pkg, name)
	}
	return nil
}

// Workload builds the Go main package pkg of the module in dir into out
// with the module's own go.mod (the workload is not instrumented). An
// earlier build into out whose inputs (the sources of pkg and its
// dependencies outside the module cache, go.mod, go.sum, the Go version)
// are unchanged is reused unless opts.Rebuild; reused reports it.
func Workload(ctx context.Context, dir, pkg, out string, opts Options) (reused bool, err error) {
	key, err := workloadKey(ctx, dir, pkg, opts.Strip)
	if ctx.Err() != nil {
		return false, fmt.Errorf("build workload %s: %w", pkg, ctx.Err())
	}
	if err != nil {
		slog.Warn("cannot key the workload build; building afresh", "err", err)
	}
	if key != "" && !opts.Rebuild {
		if _, ok := reuse(out, key); ok {
			return true, nil
		}
	}
	if err := forget(out); err != nil {
		return false, err
	}
	args := []string{"build"}
	if opts.Strip {
		args = append(args, "-ldflags=-s -w")
	}
	cmd := procgroup.Command(ctx, "go", append(args, "-o", out, pkg)...)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := procgroup.Run(cmd); err != nil {
		return false, fmt.Errorf("build workload %s: %w\n%s", pkg, err, b.Bytes())
	}
	if key == "" {
		return false, nil
	}
	bin, err := filepath.Abs(out)
	if err != nil {
		return false, fmt.Errorf("workload: %w", err)
	}
	return false, record(&instrument.Result{Binary: bin}, key)
}
