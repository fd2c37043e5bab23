package analysis

import (
	"context"
	"fmt"
	"go/token"
	"go/types"
	"log/slog"
	"strings"
	"time"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"

	"github.com/gofault/gofault/procgroup"
)

// Program is a loaded target: its packages as SSA, the call graph over the
// whole program, and the set of target packages whose call sites become fault
// sites. Passes read it and never modify it.
type Program struct {
	// Fset holds the positions of all loaded files.
	Fset *token.FileSet
	// SSA is the whole program: target and dependency packages with
	// bodies, the standard library without.
	SSA *ssa.Program
	// Targets are the SSA packages matching Options.Patterns, sorted by path.
	Targets []*ssa.Package
	// Graph is the VTA call graph (seeded by CHA) of all functions with
	// bodies.
	Graph *callgraph.Graph

	target map[*types.Package]bool
	// callees maps a call instruction to its resolved callees.
	callees map[ssa.CallInstruction][]*ssa.Function
}

// IsTarget reports whether pkg is one of the target packages.
func (p *Program) IsTarget(pkg *types.Package) bool { return p.target[pkg] }

// Callees returns the functions a call instruction may call: the static
// callee, or for dynamic calls the call graph's answer.
func (p *Program) Callees(call ssa.CallInstruction) []*ssa.Function {
	if f := call.Common().StaticCallee(); f != nil {
		return []*ssa.Function{f}
	}
	return p.callees[call]
}

// load loads the packages matching opts.Patterns and their dependencies.
// Non-standard-library packages are type-checked from source so their
// bodies can be analysed; the standard library comes from export data and is
// described by the I/O tables in table.go instead.
func load(ctx context.Context, opts Options) (*Program, error) {
	t0 := time.Now()
	cfg := &packages.Config{
		Context:    ctx,
		Dir:        opts.Dir,
		Env:        opts.Env,
		BuildFlags: opts.BuildFlags,
		Mode:       packages.NeedName | packages.NeedImports | packages.NeedDeps | packages.NeedModule,
	}
	if len(cfg.Env) == 0 {
		cfg.Env = nil
	}
	// go list, stopped by go/packages on cancellation, would leave its
	// go-build dir behind.
	env, cleanup, err := procgroup.PrivateTmp(cfg.Env)
	if err != nil {
		return nil, fmt.Errorf("list packages: %w", err)
	}
	defer cleanup()
	cfg.Env = env
	// Pass 1: the import graph only (go list), to find every non-standard
	// package the targets depend on.
	roots, err := packages.Load(cfg, opts.Patterns...)
	if err != nil {
		return nil, fmt.Errorf("list packages %v in %s: %w", opts.Patterns, opts.Dir, err)
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("no packages match %v in %s", opts.Patterns, opts.Dir)
	}
	// named are the patterns that name one package by its import path.
	named := map[string]bool{}
	for _, p := range opts.Patterns {
		if !strings.Contains(p, "...") {
			named[p] = true
		}
	}
	targetPaths := map[string]bool{}
	var errs []string
	var kept []*packages.Package
	for _, r := range roots {
		for _, e := range r.Errors {
			errs = append(errs, e.Error())
		}
		if isTestPackage(r) || r.Imports["testing"] != nil && !named[r.PkgPath] {
			// Test variants and test helpers (packages importing
			// "testing") never run in a deployed node. A package the
			// patterns name exactly is analysed even if it imports
			// "testing": hashicorp/raft ships its test cluster helpers
			// (testing.go) in the library package itself.
			if !isTestPackage(r) {
				slog.Debug("analysis: skipping a package that imports \"testing\" (a test helper); name it exactly in target.packages to analyse it", "package", r.PkgPath)
			}
			continue
		}
		targetPaths[r.PkgPath] = true
		kept = append(kept, r)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("load %v: %s", opts.Patterns, strings.Join(errs, "; "))
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("every package matching %v imports \"testing\" and is skipped as a test helper; name the package exactly (no \"...\") in target.packages to analyse it", opts.Patterns)
	}
	var source []string
	packages.Visit(kept, nil, func(p *packages.Package) {
		if p.Module != nil && !isTestPackage(p) {
			source = append(source, p.PkgPath)
		}
	})
	slog.Debug("analysis: listed packages", "targets", len(targetPaths), "source", len(source), "elapsed", time.Since(t0))

	// Pass 2: syntax and types for every module package; the standard
	// library from export data.
	cfg2 := *cfg
	cfg2.Mode = packages.NeedName | packages.NeedImports | packages.NeedTypes | packages.NeedSyntax |
		packages.NeedTypesInfo | packages.NeedFiles | packages.NeedModule
	pkgs, err := packages.Load(&cfg2, source...)
	if err != nil {
		return nil, fmt.Errorf("load packages: %w", err)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("load %d packages in %s: go list returned none", len(source), opts.Dir)
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	}
	if len(errs) > 0 {
		if len(errs) > 5 {
			errs = append(errs[:5], fmt.Sprintf("and %d more", len(errs)-5))
		}
		return nil, fmt.Errorf("type-check: %s", strings.Join(errs, "; "))
	}
	slog.Debug("analysis: type-checked", "packages", len(pkgs), "elapsed", time.Since(t0))
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	prog, spkgs := ssautil.AllPackages(pkgs, ssa.InstantiateGenerics)
	for _, sp := range spkgs {
		// Debug references map the target's expressions to SSA values
		// (the states pass reads branch conditions through them).
		if sp != nil && targetPaths[sp.Pkg.Path()] {
			sp.SetDebugMode(true)
		}
	}
	prog.Build()
	slog.Debug("analysis: built SSA", "elapsed", time.Since(t0))
	p := &Program{Fset: prog.Fset, SSA: prog, target: map[*types.Package]bool{}}
	for _, sp := range spkgs {
		if sp != nil && targetPaths[sp.Pkg.Path()] {
			p.target[sp.Pkg] = true
			p.Targets = append(p.Targets, sp)
		}
	}
	sortPackages(p.Targets)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	funcs := map[*ssa.Function]bool{}
	for f := range ssautil.AllFunctions(prog) {
		if f.Blocks != nil {
			funcs[f] = true
		}
	}
	p.Graph = vta.CallGraph(funcs, cha.CallGraph(prog))
	slog.Debug("analysis: call graph", "functions", len(funcs), "elapsed", time.Since(t0))
	p.callees = map[ssa.CallInstruction][]*ssa.Function{}
	for _, n := range p.Graph.Nodes {
		for _, e := range n.Out {
			if e.Site != nil && e.Site.Common().StaticCallee() == nil {
				p.callees[e.Site] = append(p.callees[e.Site], e.Callee.Func)
			}
		}
	}
	for site, fs := range p.callees {
		sortFuncs(fs)
		p.callees[site] = fs
	}
	return p, nil
}

// isTestPackage reports whether p is a test variant or test main.
func isTestPackage(p *packages.Package) bool {
	return strings.HasSuffix(p.PkgPath, ".test") || strings.Contains(p.ID, " [") || strings.HasSuffix(p.PkgPath, "_test")
}
