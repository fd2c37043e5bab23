// Package analysis finds the fault sites of a Go program: it loads the
// target with go/packages, builds SSA and a VTA call graph over the whole
// program, and runs a list of passes that fill a catalog.Catalog and
// statistics. Sites are only emitted in the packages matching
// Options.Patterns; the rest of the program is analysed so that interface
// calls and errors coming out of dependencies are understood.
//
// A pass is a value (see Pass) with declared dependencies and a typed
// result, as in golang.org/x/tools/go/analysis: SitesPass finds the fault
// sites, StatesPass the abstract states, SievePass (which requires
// SitesPass) annotates the I/O sites and finds the timeout points. The
// driver orders the passes and assembles the catalog from their results;
// each pass adds its own counters to Stats.
package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"go/types"
	"log/slog"
	"reflect"
	"slices"
	"sort"
	"strings"
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
	// Role overrides RolePass's choice of the node's role field:
	// "pkg/path.Type.field", or "none" for no role; "" lets the pass
	// choose.
	Role string
	// PeerPackages are the packages of the peer transport, whose network
	// calls PartitionPass marks (import paths, "/..." patterns or last
	// path elements); empty means DefaultPeerPackages.
	PeerPackages []string
	// ObserveSend and ObserveHandled name functions that ObservePass
	// takes for observation points beside those it finds by name:
	// "pkg/path.(*T).M", "pkg.(*T).M" (the last path element), "(*T).M"
	// or "F".
	ObserveSend, ObserveHandled []string
}

// Result is what Run found.
type Result struct {
	// Catalog holds the sites, sorted by ID, indexed and hashed; its
	// Module is Options.Dir.
	Catalog *catalog.Catalog
	Stats   Stats
	// RoleSuggestion, when the catalog has no role, is RolePass's hint of
	// a role method to name in target.role (Role.Suggestion); "" if none.
	RoleSuggestion string `json:",omitempty"`
}

// Counter names used by the built-in passes. Later passes add their own
// (e.g. "state_machines", "lock_held_sites").
const (
	CountPackages   = "packages"
	CountFunctions  = "functions"
	CountErrorSites = "error_sites"
	CountDelaySites = "delay_sites"
	CountCrashSites = "crash_sites"
	// CountCrashAfterSites counts the disk sites that can also crash
	// right after their call returned (catalog.KindCrashAfter).
	CountCrashAfterSites = "crash_after_sites"
	CountPrunedInvalid   = "pruned_invalid"
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
	for _, k := range append([]string{CountPackages, CountFunctions, CountErrorSites, CountDelaySites, CountCrashSites, CountCrashAfterSites, CountPrunedInvalid, CountPartitionSites, CountObservationPoints}, SieveCounters...) {
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

// UnmarshalJSON reads what MarshalJSON writes back (a kept analysis,
// build's analysis record): every number but "seconds" is a total.
func (s *Stats) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*s = Stats{Totals: Counts{}}
	for k, v := range m {
		var err error
		switch k {
		case "seconds":
			err = json.Unmarshal(v, &s.Seconds)
		case "per_package":
			err = json.Unmarshal(v, &s.Packages)
		default:
			var n int
			err = json.Unmarshal(v, &n)
			s.Totals[k] = n
		}
		if err != nil {
			return fmt.Errorf("analysis stats %s: %w", k, err)
		}
	}
	return nil
}

// CounterNames returns the names of all counters in s, the built-in ones
// first in a fixed order, then the others sorted.
func (s Stats) CounterNames() []string {
	fixed := []string{CountFunctions, CountErrorSites, CountDelaySites, CountCrashSites, CountCrashAfterSites, CountPrunedInvalid}
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

// Pass is one analysis pass, a value in the manner of
// golang.org/x/tools/go/analysis: it names the passes whose results it
// needs (Requires) and returns a result of type ResultType. The driver (Run)
// alone orders the passes; a pass reads earlier results through
// Unit.ResultOf and never calls another pass.
type Pass struct {
	// Name is short, e.g. "sites".
	Name string
	// Doc says what the pass finds.
	Doc string
	// Requires are the passes that must run first; their results are in
	// Unit.ResultOf.
	Requires []*Pass
	// ResultType is the type of Run's result, checked by the driver.
	ResultType reflect.Type
	// Run analyses u.Prog and returns the pass's result. It may add
	// per-package counters (Unit.Count) and must not modify the program
	// or the results of other passes.
	Run func(u *Unit) (any, error)
}

// Unit is what one run of a pass sees: the loaded program and the results
// of the passes it requires.
type Unit struct {
	Context context.Context
	Prog    *Program
	// Options are the options of the run (RolePass reads Options.Role).
	Options Options
	// ResultOf holds the results of the passes in Pass.Requires.
	ResultOf map[*Pass]any
	counts   map[string]Counts
}

// Count adds n to counter name of package pkg.
func (u *Unit) Count(pkg, name string, n int) {
	c := u.counts[pkg]
	if c == nil {
		c = Counts{}
		u.counts[pkg] = c
	}
	c[name] += n
}

// contributor is a result that adds to the catalog's parts; results
// contribute in the order the driver ran their passes, so a pass that
// annotates another's sites (Sieve) contributes after it.
type contributor interface {
	contribute(*catalog.Parts)
}

// DefaultPasses returns the built-in passes: fault sites (error, delay and
// crash sites with invalid-injection pruning), abstract states, and the
// Sieve annotations of the I/O sites (lock-held, barrier, timeout,
// grouping), the node's role variable, and the peer-network calls a
// partition cuts, and the observation points of peer messages.
func DefaultPasses() []*Pass {
	return []*Pass{SitesPass, StatesPass, SievePass, RolePass, PartitionPass, ObservePass}
}

// order returns the passes and everything they require, each after what
// it requires and otherwise in the order given.
func order(passes []*Pass) ([]*Pass, error) {
	var out []*Pass
	state := map[*Pass]int{} // 1 visiting, 2 done
	var visit func(p *Pass, path []string) error
	visit = func(p *Pass, path []string) error {
		switch state[p] {
		case 1:
			return fmt.Errorf("analysis: passes require each other: %s", strings.Join(append(path, p.Name), " → "))
		case 2:
			return nil
		}
		state[p] = 1
		for _, r := range p.Requires {
			if err := visit(r, append(path, p.Name)); err != nil {
				return err
			}
		}
		state[p] = 2
		out = append(out, p)
		return nil
	}
	for _, p := range passes {
		if err := visit(p, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// slowStep is how long an analysis step takes before it is logged at
// info: on a large module the steps take minutes, and a user should see
// them go by; on a small one they stay in the debug log.
const slowStep = 5 * time.Second

// progress logs a finished analysis step that took elapsed.
func progress(msg string, elapsed time.Duration, args ...any) {
	args = append(args, "seconds", elapsed.Round(100*time.Millisecond).Seconds())
	if elapsed >= slowStep {
		slog.Info(msg, args...)
		return
	}
	slog.Debug(msg, args...)
}

// Run loads the target and runs the passes.
func Run(ctx context.Context, opts Options) (*Result, error) {
	start := time.Now()
	passes := opts.Passes
	if passes == nil {
		passes = DefaultPasses()
	}
	passes, err := order(passes)
	if err != nil {
		return nil, err
	}
	prog, err := load(ctx, opts)
	if err != nil {
		return nil, err
	}
	progress("analysis: loaded and typed the packages, built SSA", time.Since(start), "targets", len(prog.Targets))
	counts := map[string]Counts{}
	for _, sp := range prog.Targets {
		counts[sp.Pkg.Path()] = Counts{CountFunctions: countFunctions(sp)}
	}
	results := map[*Pass]any{}
	var pt catalog.Parts
	for _, p := range passes {
		t := time.Now()
		u := &Unit{Context: ctx, Prog: prog, Options: opts, ResultOf: map[*Pass]any{}, counts: counts}
		for _, r := range p.Requires {
			u.ResultOf[r] = results[r]
		}
		res, err := p.Run(u)
		if err != nil {
			return nil, fmt.Errorf("pass %s: %w", p.Name, err)
		}
		if got := reflect.TypeOf(res); p.ResultType != nil && got != p.ResultType {
			return nil, fmt.Errorf("pass %s returned a %v, want %v", p.Name, got, p.ResultType)
		}
		results[p] = res
		if c, ok := res.(contributor); ok {
			c.contribute(&pt)
		}
		progress("analysis: pass done", time.Since(t), "pass", p.Name)
	}
	cat, err := assemble(opts.Dir, pt)
	if err != nil {
		return nil, err
	}
	res := &Result{Catalog: cat}
	if r, ok := results[RolePass].(*Role); ok {
		res.RoleSuggestion = r.Suggestion
	}
	res.Stats.Totals = Counts{CountPackages: len(prog.Targets)}
	for _, sp := range prog.Targets {
		path := sp.Pkg.Path()
		c := counts[path]
		for _, k := range []string{CountFunctions, CountErrorSites, CountDelaySites, CountCrashSites, CountCrashAfterSites, CountPrunedInvalid} {
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

// assemble makes the catalog of module from the passes' parts: sites
// sorted by ID (stable across edits that move code), then every part
// numbered and hashed at once (catalog.New).
func assemble(module string, pt catalog.Parts) (*catalog.Catalog, error) {
	sortSites(pt.Sites)
	for i := 1; i < len(pt.Sites); i++ {
		if a, b := pt.Sites[i-1], pt.Sites[i]; a.ID == b.ID {
			return nil, fmt.Errorf("two sites with ID %s (%s:%d and %s:%d)", a.ID, a.File, a.Line, b.File, b.Line)
		}
	}
	pt.Module = module
	return catalog.New(pt)
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
