// Package analysis finds the fault sites of a Go program: it loads the
// target with go/packages, builds SSA and a VTA call graph over the whole
// program, and runs a list of passes that fill a catalog.Catalog and
// statistics. Sites are only emitted in the packages matching
// Options.Patterns; the rest of the program is analysed so that interface
// calls and errors coming out of dependencies are understood.
//
// A pass is plain data plus a function (see Pass); later passes (abstract
// states, lock-held and timeout-protected I/O) are added to Passes and add
// their own counters to Stats.
package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"go/types"
	"log/slog"
	"slices"
	"sort"
	"time"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
)

// Options say what to analyse.
type Options struct {
	// Dir is the module directory where go/packages runs.
	Dir string
	// Patterns are the packages whose call sites become fault sites, e.g.
	// "go.etcd.io/etcd/server/v3/...".
	Patterns []string
	// BuildFlags are passed to the go command, e.g. "-modfile=/x/go.mod",
	// "-tags=foo".
	BuildFlags []string
	// Env is the go command's environment; empty means the current one.
	Env []string
	// Passes to run, in order; nil means DefaultPasses().
	Passes []*Pass
}

// Result is what Run found.
type Result struct {
	// Catalog holds the sites, sorted by ID, indexed and hashed; its
	// Module is Options.Dir.
	Catalog *catalog.Catalog
	Stats   Stats
}

// Counter names used by the built-in passes. Later passes add their own
// (e.g. "state_machines", "lock_held_sites").
const (
	CountPackages      = "packages"
	CountFunctions     = "functions"
	CountErrorSites    = "error_sites"
	CountDelaySites    = "delay_sites"
	CountCrashSites    = "crash_sites"
	CountPrunedInvalid = "pruned_invalid"
)

// Counts maps a counter name to its value.
type Counts map[string]int

// PackageStats is one row of the statistics: the counters of one target
// package.
type PackageStats struct {
	Package string `json:"package"` // import path
	Counts  Counts `json:"counts"`
}

// Stats summarises an analysis: one row per target package, totals over
// all of them, and the wall time. Its JSON form is one flat object of the
// totals plus "seconds" and "per_package".
type Stats struct {
	Packages []PackageStats // one row per target package, sorted by path
	Totals   Counts         // sums of the rows, plus "packages"
	Seconds  float64        // wall time of Run
}

// MarshalJSON writes the totals as top-level keys, e.g.
// {"packages":3,"functions":40,"error_sites":12,...,"seconds":1.2,"per_package":[...]}.
func (s Stats) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	for k, v := range s.Totals {
		m[k] = v
	}
	for _, k := range append([]string{CountPackages, CountFunctions, CountErrorSites, CountDelaySites, CountCrashSites, CountPrunedInvalid}, SieveCounters...) {
		if _, ok := m[k]; !ok {
			m[k] = 0
		}
	}
	m["seconds"] = s.Seconds
	rows := s.Packages
	if rows == nil {
		rows = []PackageStats{}
	}
	m["per_package"] = rows
	return json.Marshal(m)
}

// CounterNames returns the names of all counters in s, the built-in ones
// first in a fixed order, then the others sorted.
func (s Stats) CounterNames() []string {
	fixed := []string{CountFunctions, CountErrorSites, CountDelaySites, CountCrashSites, CountPrunedInvalid}
	names := slices.Clone(fixed)
	var extra []string
	for k := range s.Totals {
		if k != CountPackages && !slices.Contains(fixed, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}

// Facts is what passes fill: candidate sites and per-package counters.
// Passes run in order and may read what earlier passes wrote.
type Facts struct {
	// Sites are the fault sites found so far, unsorted; Run sorts them and
	// assigns indices.
	Sites []catalog.Site
	// Tasks and States are the task units and abstract states found so
	// far (see StatesPass); Run assigns their 1-based indices in order,
	// and a state's Task is the 1-based position of its task in Tasks.
	Tasks  []catalog.Task
	States []catalog.State
	// Counts are per-package counters, keyed by package path.
	Counts map[string]Counts
	// TimeoutPoints are the timeout expressions found so far, indexed
	// by the pass that adds them (SievePass); Run copies them into the
	// catalog as they are.
	TimeoutPoints []catalog.TimeoutPoint
}

// Add adds n to counter name of package pkg.
func (f *Facts) Add(pkg, name string, n int) {
	c := f.Counts[pkg]
	if c == nil {
		c = Counts{}
		f.Counts[pkg] = c
	}
	c[name] += n
}

// Pass is one analysis pass. Run reads the program and adds to facts.
type Pass struct {
	// Name is short, e.g. "sites".
	Name string
	// Doc says what the pass finds.
	Doc string
	// Run reads prog and adds sites and counters to facts.
	Run func(ctx context.Context, prog *Program, facts *Facts) error
}

// DefaultPasses returns the built-in passes: fault sites (error, delay and
// crash sites with invalid-injection pruning), abstract states, and the
// Sieve annotations of the I/O sites (lock-held, barrier, timeout,
// grouping).
func DefaultPasses() []*Pass {
	return []*Pass{SitesPass, StatesPass, SievePass}
}

// Run loads the target and runs the passes.
func Run(ctx context.Context, opts Options) (*Result, error) {
	start := time.Now()
	prog, err := load(ctx, opts)
	if err != nil {
		return nil, err
	}
	slog.Debug("analysis: loaded", "targets", len(prog.Targets), "elapsed", time.Since(start))
	passes := opts.Passes
	if passes == nil {
		passes = DefaultPasses()
	}
	facts := &Facts{Counts: map[string]Counts{}}
	for _, sp := range prog.Targets {
		facts.Add(sp.Pkg.Path(), CountFunctions, countFunctions(sp))
	}
	for _, p := range passes {
		t := time.Now()
		if err := p.Run(ctx, prog, facts); err != nil {
			return nil, fmt.Errorf("pass %s: %w", p.Name, err)
		}
		slog.Debug("analysis: pass done", "pass", p.Name, "elapsed", time.Since(t))
	}
	cat := &catalog.Catalog{Module: opts.Dir, Sites: facts.Sites, TimeoutPoints: facts.TimeoutPoints}
	sortSites(cat.Sites)
	for i := range cat.Sites {
		cat.Sites[i].Index = uint32(i)
		if i > 0 && cat.Sites[i].ID == cat.Sites[i-1].ID {
			return nil, fmt.Errorf("two sites with ID %s (%s:%d and %s:%d)", cat.Sites[i].ID,
				cat.Sites[i-1].File, cat.Sites[i-1].Line, cat.Sites[i].File, cat.Sites[i].Line)
		}
	}
	cat.Tasks, cat.States = facts.Tasks, facts.States
	for i := range cat.Tasks {
		cat.Tasks[i].Index = uint32(i + 1)
	}
	ids := map[string]bool{}
	for i := range cat.States {
		cat.States[i].Index = uint32(i + 1)
		if ids[cat.States[i].ID] {
			return nil, fmt.Errorf("two states with ID %s", cat.States[i].ID)
		}
		ids[cat.States[i].ID] = true
	}
	cat.Hash = cat.ComputeHash()
	if err := cat.Check(); err != nil {
		return nil, err
	}
	res := &Result{Catalog: cat}
	res.Stats.Totals = Counts{CountPackages: len(prog.Targets)}
	for _, sp := range prog.Targets {
		path := sp.Pkg.Path()
		c := facts.Counts[path]
		if c == nil {
			c = Counts{}
		}
		for _, k := range []string{CountFunctions, CountErrorSites, CountDelaySites, CountCrashSites, CountPrunedInvalid} {
			c[k] += 0
		}
		res.Stats.Packages = append(res.Stats.Packages, PackageStats{Package: path, Counts: c})
		for k, v := range c {
			res.Stats.Totals[k] += v
		}
	}
	res.Stats.Seconds = time.Since(start).Seconds()
	return res, nil
}

// countFunctions counts the source functions of a package with bodies:
// package-level functions, methods and closures, not synthetic wrappers.
func countFunctions(sp *ssa.Package) int {
	n := 0
	var visit func(f *ssa.Function)
	visit = func(f *ssa.Function) {
		if f.Blocks == nil || f.Synthetic != "" {
			return
		}
		n++
		for _, a := range f.AnonFuncs {
			visit(a)
		}
	}
	for _, f := range packageFunctions(sp) {
		visit(f)
	}
	return n
}

// packageFunctions returns the package-level functions and methods of sp
// declared in its source, sorted by name, without closures.
func packageFunctions(sp *ssa.Package) []*ssa.Function {
	var fs []*ssa.Function
	for _, m := range sp.Members {
		switch m := m.(type) {
		case *ssa.Function:
			fs = append(fs, m)
		case *ssa.Type:
			named, ok := types.Unalias(m.Type()).(*types.Named)
			if !ok {
				continue
			}
			// Declared methods only (no promoted wrappers); methods of
			// generic types are their generic bodies.
			for i := range named.NumMethods() {
				f := sp.Prog.FuncValue(named.Method(i))
				if f != nil && f.Synthetic == "" && !slices.Contains(fs, f) {
					fs = append(fs, f)
				}
			}
		}
	}
	sortFuncs(fs)
	return fs
}

func sortFuncs(fs []*ssa.Function) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].String() < fs[j].String() })
}

func sortPackages(ps []*ssa.Package) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Pkg.Path() < ps[j].Pkg.Path() })
}

func sortSites(ss []catalog.Site) {
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].ID < ss[j].ID })
}
