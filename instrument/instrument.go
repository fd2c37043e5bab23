// Package instrument turns a target and its catalog into an instrumented
// binary without touching the user's tree or the module cache. A build is
// three steps, sequenced by the caller (package build does it for gofault):
//
//	w, _ := instrument.Prepare(ctx, target) // the work dir
//	res, _ := analysis.Run(ctx, ...w...)     // the catalog of the prepared tree
//	out, _ := instrument.Build(ctx, w, res.Catalog, bin, opts)
//
// Prepare writes a work directory: a copy of go.mod requiring and replacing
// the agent module, and copies of the dependency modules that hold target
// packages. Build rewrites every catalog site into a call through the agent,
// writes the rewritten files (and every file of the module copies, behind a
// //line directive naming its module cache path) through overlay.json and
// runs
//
//	go build -modfile=<work>/go.mod -overlay=<work>/overlay.json \
//	    -ldflags=-X=github.com/gofault/gofault/agent.catalogHash=<hash>
//
// Sites that cannot be rewritten (a result type that cannot be named, an
// error value whose package cannot be imported, a compile error in the
// rewritten code) are dropped from the catalog (catalog.Without renumbers
// it), which is written as catalog.json next to the binary, so the
// controller only ever plans sites that exist in the binary.
package instrument

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go/ast"

	"golang.org/x/tools/go/packages"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/procgroup"
)

// Options tune Build.
type Options struct {
	// MaxRetries bounds the builds retried after dropping sites whose
	// rewritten code did not compile (default 6).
	MaxRetries int
	// Strip links without the symbol table and DWARF (-ldflags=-s -w), for
	// smaller binaries (bundles); stack traces keep their file:line.
	Strip bool
}

// Result describes a build.
type Result struct {
	// Binary is the absolute path of the built binary.
	Binary string
	// CatalogFile is catalog.json next to the binary ("" when uninstrumented).
	CatalogFile string
	// Catalog holds the instrumented sites, re-indexed (nil when
	// uninstrumented).
	Catalog *catalog.Catalog
	// Skipped maps the ID of every site, state and timeout point of the
	// analysis catalog that is not in the binary to the reason (Skip*).
	Skipped map[string]string
	// Dropped lists the same IDs with their positions, sorted by ID; those
	// dropped for a compile error carry the compiler's messages. Build also
	// writes it to <work>/dropped.json (DroppedFile).
	Dropped []Dropped
	// Work is the prepared work directory.
	Work  *Work
	Stats Stats
}

// Stats counts what a build did.
type Stats struct {
	Sites        int `json:"sites"`        // sites in the analysis catalog
	Instrumented int `json:"instrumented"` // sites rewritten and built
	ErrorSites   int `json:"error_sites"`  // of those, with an error branch
	HookOnly     int `json:"hook_only"`    // of those, delay/crash hook only
	Skipped      int `json:"skipped"`      // sites, timeout points and states dropped
	// TimeoutPoints counts the timeout expressions wrapped and built.
	TimeoutPoints int `json:"timeout_points"`
	// States counts the abstract-state hooks inserted and built.
	States int `json:"states"`
	// RoleWrites counts the role-write hooks inserted and built.
	RoleWrites int `json:"role_writes"`
	// ObservePoints counts the observation-point hooks inserted and built.
	ObservePoints int `json:"observation_points"`
	// Blocks counts the coverage counters inserted and built.
	Blocks      int            `json:"blocks"`
	SkipReasons map[string]int `json:"skip_reasons"`  // why, counted
	Files       int            `json:"files"`         // rewritten files
	Packages    int            `json:"packages"`      // packages with rewritten files
	Copies      int            `json:"module_copies"` // dependency modules copied
	Builds      int            `json:"builds"`        // go build runs (retries included)
	Seconds     Phases         `json:"seconds"`
	// PeakRSSMB is the peak resident memory of this process (analysis and
	// type-checking for the rewrite; go build runs in child processes),
	// from /proc/self/status VmHWM; 0 where unavailable.
	PeakRSSMB float64 `json:"peak_rss_mb"`
}

// Phases are wall-clock seconds per phase.
type Phases struct {
	Prepare    float64 `json:"prepare"`
	Analyze    float64 `json:"analyze"`
	Instrument float64 `json:"instrument"`
	Build      float64 `json:"build"`
	Total      float64 `json:"total"`
}

// AllBuildFlags returns the flags every go command of the build uses: the
// work modfile flags followed by the user's build flags.
func (w *Work) AllBuildFlags() []string {
	return append(w.GoFlags(), w.BuildFlags...)
}

// BuildPlain builds the target's main package of w into out without
// instrumentation, with the same module versions as an instrumented build
// (for baselines and benchmarks).
func BuildPlain(ctx context.Context, w *Work, out string, opts Options) (*Result, error) {
	t0 := time.Now()
	bin, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	res := &Result{Binary: bin, Work: w}
	res.Stats.Copies = len(w.Copies)
	lines, err := w.lineFiles()
	if err != nil {
		return nil, err
	}
	overlay := filepath.Join(w.Dir, "overlay.json")
	ov := &overlaySet{base: lines}
	if err := ov.write(filepath.Join(w.Dir, "overlay"), overlay); err != nil {
		return nil, err
	}
	if err := w.build(ctx, bin, overlay, "", 0, opts.Strip); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	res.Stats.Builds = 1
	res.Stats.Seconds.Build = time.Since(t0).Seconds()
	res.Stats.Seconds.Total = res.Stats.Seconds.Build
	return res, nil
}

// Build rewrites every site, state and timeout point of cat in the prepared
// work dir w, builds the target's main package into out, and writes the
// catalog of what is in the binary (cat without the skipped IDs,
// renumbered) as catalog.json next to out. cat's positions may point at the
// module cache or at w's copies. Sites whose rewritten code does not
// compile are dropped and the build retried. Build fills the instrument and
// build phases of Result.Stats; the caller, which prepared and analysed,
// fills the others.
func Build(ctx context.Context, w *Work, cat *catalog.Catalog, out string, opts Options) (*Result, error) {
	t0 := time.Now()
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 6
	}
	bin, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	res := &Result{Binary: bin, Work: w, Skipped: map[string]string{}}
	res.Stats.Copies = len(w.Copies)
	res.Stats.SkipReasons = map[string]int{}
	res.Stats.Sites = len(cat.Sites)
	defer func() {
		res.Stats.Seconds.Total = time.Since(t0).Seconds()
		res.Stats.PeakRSSMB = peakRSSMB()
	}()
	lines, err := w.lineFiles()
	if err != nil {
		return nil, err
	}
	overlay := filepath.Join(w.Dir, "overlay.json")
	cat = localize(cat, w)
	// The agent reads its coverage table unsynchronised: -race would
	// report it.
	cover := !w.NoCoverage && !slices.Contains(w.BuildFlags, "-race")
	rw, err := newRewriter(ctx, w, cat, cover)
	if err != nil {
		return nil, err
	}
	res.Stats.Seconds.Instrument += time.Since(t0).Seconds()
	skipped := res.Skipped               // ID -> reason
	compileErrs := map[string][]string{} // ID -> the compiler's messages
	without := func() *catalog.Catalog {
		ids := make(map[string]bool, len(skipped))
		for id := range skipped {
			ids[id] = true
		}
		return cat.Without(ids)
	}
	for attempt := 0; ; attempt++ {
		ti := time.Now()
		kept := without()
		ov, err := rw.rewrite(kept)
		if err != nil {
			return nil, err
		}
		ov.base = lines
		if len(ov.skipped) > 0 {
			for id, r := range ov.skipped {
				skipped[id] = r
			}
			kept = without()
			if ov, err = rw.rewrite(kept); err != nil {
				return nil, err
			}
			ov.base = lines
			if len(ov.skipped) > 0 {
				return nil, fmt.Errorf("rewrite: %d sites skipped after re-indexing", len(ov.skipped))
			}
		}
		if err := ov.write(filepath.Join(w.Dir, "overlay"), overlay); err != nil {
			return nil, err
		}
		tb := time.Now()
		res.Stats.Seconds.Instrument += tb.Sub(ti).Seconds()
		kept.Blocks, kept.BlockFiles = ov.blocks, ov.blockFiles
		// The rewrite narrows some sites' kinds (a deferred call takes no
		// error): hash what is built.
		kept.Hash = kept.ComputeHash()
		err = w.build(ctx, bin, overlay, kept.Hash, kept.Blocks, opts.Strip)
		res.Stats.Builds++
		res.Stats.Seconds.Build += time.Since(tb).Seconds()
		if err == nil {
			res.Catalog = kept
			res.Stats.Instrumented = len(kept.Sites)
			res.Stats.ErrorSites, res.Stats.HookOnly = ov.errSites, ov.hookSites
			res.Stats.TimeoutPoints = ov.timeoutPoints
			res.Stats.States = ov.states
			res.Stats.RoleWrites = ov.roleWrites
			res.Stats.ObservePoints = ov.observePoints
			res.Stats.Blocks = ov.blocks
			res.Stats.Files, res.Stats.Packages = ov.files, ov.packages
			break
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("build: %w", ctx.Err())
		}
		bad := ov.blame(w, err.Error()) // the error holds the compiler's stderr
		if len(bad) == 0 || attempt >= opts.MaxRetries {
			return nil, fmt.Errorf("build: %w", err)
		}
		for _, id := range sortedKeys(bad) {
			if file, ok := strings.CutPrefix(id, coverPrefix); ok {
				rw.noCover[file] = true
				slog.Warn("coverage counters did not compile; dropping those of the file", "file", file, "error", strings.Join(bad[id], "; "))
				continue
			}
			skipped[id] = SkipCompile
			compileErrs[id] = bad[id]
			slog.Warn("rewritten code did not compile; dropping it", "id", id, "error", strings.Join(bad[id], "; "))
		}
		slog.Warn("rebuilding without the dropped sites", "dropped", len(bad))
	}
	for _, r := range skipped {
		res.Stats.SkipReasons[r]++
	}
	res.Stats.Skipped = len(skipped)
	res.Dropped = dropped(cat, skipped, compileErrs)
	if err := writeDropped(DroppedFile(w.Dir), res.Dropped); err != nil {
		return nil, err
	}
	res.CatalogFile = filepath.Join(filepath.Dir(bin), "catalog.json")
	if err := res.Catalog.Save(res.CatalogFile); err != nil {
		return nil, err
	}
	return res, nil
}

// LockWorkDir takes an exclusive lock on the build work dir for one build
// (Prepare, analysis and Build), so that concurrent builds of one config
// wait for each other instead of rewriting each other's modfile and
// overlay. Call the returned function to release it.
func LockWorkDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock work dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock work dir: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// localize returns cat with site files in the module cache moved to the
// work dir's copies of their modules.
func localize(cat *catalog.Catalog, w *Work) *catalog.Catalog {
	c := *cat
	c.Sites = append([]catalog.Site(nil), cat.Sites...)
	for i := range c.Sites {
		c.Sites[i].File = w.CopyPath(c.Sites[i].File)
	}
	c.TimeoutPoints = append([]catalog.TimeoutPoint(nil), cat.TimeoutPoints...)
	for i := range c.TimeoutPoints {
		c.TimeoutPoints[i].File = w.CopyPath(c.TimeoutPoints[i].File)
	}
	c.ObservePoints = append([]catalog.ObservePoint(nil), cat.ObservePoints...)
	for i := range c.ObservePoints {
		c.ObservePoints[i].File = w.CopyPath(c.ObservePoints[i].File)
	}
	localizeStates(&c, w)
	localizeRole(&c, w)
	return &c
}

// build runs go build of the main package into bin, with the overlay,
// catalog hash and number of coverage blocks if given, stripped if strip;
// the error holds the compiler's output.
func (w *Work) build(ctx context.Context, bin, overlay, hash string, blocks int, strip bool) error {
	args := append([]string{"build"}, w.AllBuildFlags()...)
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	var ldflags []string
	if strip {
		ldflags = append(ldflags, "-s", "-w")
	}
	if hash != "" {
		ldflags = append(ldflags, "-X="+AgentModule+".catalogHash="+hash)
	}
	if blocks > 0 {
		ldflags = append(ldflags, "-X="+AgentModule+".coverBlocks="+strconv.Itoa(blocks))
	}
	if len(ldflags) > 0 {
		args = append(args, "-ldflags="+strings.Join(ldflags, " "))
	}
	args = append(args, "-o", bin, w.Main)
	_, err := w.goCmd(ctx, args...)
	return err
}

// rewriter holds the type-checked target packages across rewrite attempts.
type rewriter struct {
	w     *Work
	pkgs  map[string]*packages.Package // by package path
	files map[string]fileRef           // by absolute file name
	// deps is the import graph of the packages the error values need,
	// and names their package names.
	deps  map[string][]string
	names map[string]string
	// reach memoizes imports: from -> to -> result.
	reach map[string]map[string]bool
	// cover: count basic blocks in every file of the loaded packages,
	// but those of noCover (their counters did not compile).
	cover   bool
	noCover map[string]bool
}

type fileRef struct {
	pkg  *packages.Package
	file *ast.File
	src  []byte
}

// newRewriter loads (parses and type-checks) the packages holding cat's
// sites, from the prepared tree, and with cover every target package.
func newRewriter(ctx context.Context, w *Work, cat *catalog.Catalog, cover bool) (*rewriter, error) {
	rw := &rewriter{w: w, pkgs: map[string]*packages.Package{}, files: map[string]fileRef{},
		deps: map[string][]string{}, names: map[string]string{}, reach: map[string]map[string]bool{},
		cover: cover, noCover: map[string]bool{}}
	seen := map[string]bool{}
	var paths []string
	if cover {
		for _, p := range w.Patterns {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	errImports := map[string]bool{}
	for _, s := range cat.States {
		if !seen[s.Pkg] && s.Pkg != "" {
			seen[s.Pkg] = true
			paths = append(paths, s.Pkg)
		}
	}
	for _, p := range cat.TimeoutPoints {
		if !seen[p.Pkg] {
			seen[p.Pkg] = true
			paths = append(paths, p.Pkg)
		}
	}
	if cat.Role != nil {
		for _, w := range cat.Role.Writes {
			if !seen[w.Pkg] {
				seen[w.Pkg] = true
				paths = append(paths, w.Pkg)
			}
		}
	}
	for _, s := range cat.Sites {
		if !seen[s.Pkg] {
			seen[s.Pkg] = true
			paths = append(paths, s.Pkg)
		}
		for _, e := range s.Errors {
			for _, p := range e.Imports {
				errImports[p] = true
			}
		}
	}
	if len(paths) == 0 {
		return rw, nil
	}
	if err := rw.loadDeps(ctx, sortedKeys(errImports)); err != nil {
		return nil, err
	}
	sort.Strings(paths)
	env, cleanup, err := procgroup.PrivateTmp(w.Env)
	if err != nil {
		return nil, fmt.Errorf("load target packages: %w", err)
	}
	defer cleanup()
	pcfg := &packages.Config{
		Context:    ctx,
		Mode:       packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:        w.ModuleDir,
		Env:        env,
		BuildFlags: w.AllBuildFlags(),
	}
	pkgs, err := packages.Load(pcfg, paths...)
	if err != nil {
		return nil, fmt.Errorf("load target packages: %w", err)
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			slog.Warn("loading target package", "pkg", p.PkgPath, "err", e)
		}
		if p.Types == nil || p.TypesInfo == nil {
			continue
		}
		rw.pkgs[p.PkgPath] = p
		for _, f := range p.Syntax {
			name := p.Fset.File(f.Pos()).Name()
			src, err := os.ReadFile(name)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", name, err)
			}
			rw.files[filepath.Clean(name)] = fileRef{pkg: p, file: f, src: src}
		}
	}
	return rw, nil
}

// loadDeps lists the import graph below the packages the error values
// import, so that rewriting can refuse an error value whose package imports
// the site's package (an import cycle).
func (rw *rewriter) loadDeps(ctx context.Context, roots []string) error {
	if len(roots) == 0 {
		return nil
	}
	args := append([]string{"list", "-e", "-deps", "-f", "{{.ImportPath}} {{.Name}} {{join .Imports \" \"}}"}, rw.w.AllBuildFlags()...)
	out, err := rw.w.goCmd(ctx, append(args, roots...)...)
	if err != nil {
		return fmt.Errorf("list error value packages: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			rw.names[f[0]] = f[1]
			rw.deps[f[0]] = f[2:]
		}
	}
	return nil
}

// imports reports whether package from imports package to, directly or
// through other packages.
func (rw *rewriter) imports(from, to string) bool {
	m := rw.reach[to]
	if m == nil {
		m = map[string]bool{}
		rw.reach[to] = m
	}
	var visit func(p string) bool
	visit = func(p string) bool {
		if r, ok := m[p]; ok {
			return r
		}
		m[p] = false // cuts cycles while visiting
		for _, d := range rw.deps[p] {
			if d == to || visit(d) {
				m[p] = true
				return true
			}
		}
		return false
	}
	return visit(from)
}

// overlaySet is the result of one rewrite: the replaced and added files.
type overlaySet struct {
	base map[string][]byte // files of module copies behind a //line directive

	replace   map[string][]byte // target file -> content
	edits     map[string][]siteEdit
	errFiles  map[string]*errFile // target file -> generated errors file
	lineNames map[string]string   // target file -> name in //line directives
	skipped   map[string]string   // site ID -> reason
	written   map[string]string   // target file -> overlay file, set by write
	errSites  int
	hookSites int
	// timeoutPoints counts the wrapped timeout expressions.
	timeoutPoints int
	states        int
	roleWrites    int
	observePoints int
	// blocks counts the coverage counters, blockFiles locate them.
	blocks     int
	blockFiles []catalog.BlockFile
	files      int
	packages   int
}

// rewrite rewrites the files holding cat's sites.
func (rw *rewriter) rewrite(cat *catalog.Catalog) (*overlaySet, error) {
	ov := &overlaySet{
		replace:   map[string][]byte{},
		edits:     map[string][]siteEdit{},
		errFiles:  map[string]*errFile{},
		lineNames: map[string]string{},
		skipped:   map[string]string{},
	}
	byFile := map[string][]*catalog.Site{}
	touched := map[string]bool{} // the files with anything to rewrite
	points := map[string][]*catalog.TimeoutPoint{}
	for i := range cat.TimeoutPoints {
		p := &cat.TimeoutPoints[i]
		f := filepath.Clean(p.File)
		if _, ok := rw.files[f]; !ok {
			ov.skipped[p.ID] = SkipTimeoutNotFound
			continue
		}
		touched[f] = true
		points[f] = append(points[f], p)
	}
	for i := range cat.Sites {
		s := &cat.Sites[i]
		f := filepath.Clean(s.File)
		if _, ok := rw.files[f]; !ok {
			ov.skipped[s.ID] = SkipNotFound
			continue
		}
		touched[f] = true
		byFile[f] = append(byFile[f], s)
	}
	states := statesByFile(cat)
	for f, sts := range states {
		if _, ok := rw.files[f]; !ok {
			for _, s := range sts {
				ov.skipped[s.ID] = SkipStateNotFound
			}
			continue
		}
		touched[f] = true
	}
	roles := roleWritesByFile(cat)
	for f, ws := range roles {
		if _, ok := rw.files[f]; !ok {
			for _, w := range ws {
				ov.skipped[w.ID] = SkipRoleNotFound
			}
			continue
		}
		touched[f] = true
	}
	observe := observeByFile(cat)
	for f, pts := range observe {
		if _, ok := rw.files[f]; !ok {
			for _, p := range pts {
				ov.skipped[p.ID] = SkipObserveNotFound
			}
			continue
		}
		touched[f] = true
	}
	if rw.cover {
		for f := range rw.files {
			if !rw.noCover[f] {
				touched[f] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(touched))
	errSites := map[*packages.Package][]*catalog.Site{}
	for _, name := range names {
		ref := rw.files[name]
		lineName := rw.w.OrigPath(name)
		out := rewriteFile(fileInput{
			src: ref.src, file: ref.file, fset: ref.pkg.Fset, info: ref.pkg.TypesInfo, pkg: ref.pkg.Types,
			lineName: lineName, renamed: lineName != name, imports: rw.imports, timeouts: points[name],
			states: states[name], roles: roles[name], observe: observe[name],
			cover: rw.cover && !rw.noCover[name], firstBlock: ov.blocks,
		}, byFile[name])
		if len(out.blocks) > 0 {
			ov.blockFiles = append(ov.blockFiles, catalog.BlockFile{File: lineName, First: ov.blocks, Lines: out.blocks})
			ov.blocks += len(out.blocks)
		}
		for idx, r := range out.skipped {
			ov.skipped[cat.Sites[idx].ID] = r
		}
		for _, m := range []map[string]string{out.skippedPoints, out.skippedStates, out.skippedRoles, out.skippedObserve} {
			maps.Copy(ov.skipped, m)
		}
		if out.src == nil {
			continue
		}
		ov.replace[name] = out.src
		ov.edits[name] = out.edits
		ov.lineNames[name] = lineName
		for _, e := range out.edits {
			switch {
			case e.block: // counted in ov.blocks
			case e.point != nil:
				ov.timeoutPoints++
			case e.state != nil:
				ov.states++
			case e.role != nil:
				ov.roleWrites++
			case e.observe != nil:
				ov.observePoints++
			case e.errBranch:
				ov.errSites++
				errSites[ref.pkg] = append(errSites[ref.pkg], e.site)
			default:
				ov.hookSites++
			}
		}
	}
	ov.files = len(ov.replace)
	pkgs := map[string]bool{}
	for name := range ov.replace {
		pkgs[rw.files[name].pkg.PkgPath] = true
	}
	ov.packages = len(pkgs)
	for p, sites := range errSites {
		files, err := errorFiles(p.Types.Name(), p.PkgPath, sites, rw.names)
		if err != nil {
			return nil, fmt.Errorf("package %s: %w", p.PkgPath, err)
		}
		dir := filepath.Dir(p.CompiledGoFiles[0])
		for _, f := range files {
			ov.errFiles[filepath.Join(dir, f.name)] = f
		}
	}
	return ov, nil
}

// write stores the overlay's files under dir and writes the overlay JSON.
func (ov *overlaySet) write(dir, jsonPath string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	repl := map[string]string{}
	ov.written = repl
	n := 0
	put := func(target string, data []byte) error {
		n++
		p := filepath.Join(dir, fmt.Sprintf("%04d_%s", n, filepath.Base(target)))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("overlay: %w", err)
		}
		repl[target] = p
		return nil
	}
	for _, t := range sortedKeys(ov.base) {
		if _, ok := ov.replace[t]; ok {
			continue
		}
		if err := put(t, ov.base[t]); err != nil {
			return err
		}
	}
	for _, t := range sortedKeys(ov.replace) {
		if err := put(t, ov.replace[t]); err != nil {
			return err
		}
	}
	for _, t := range sortedKeys(ov.errFiles) {
		if err := put(t, ov.errFiles[t].src); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(struct{ Replace map[string]string }{repl}, "", "\t")
	if err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	if err := os.WriteFile(jsonPath, data, 0o644); err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var errLine = regexp.MustCompile(`(?m)^(\S+\.go):(\d+)(?::\d+)?: .*$`)

// blame maps compiler errors in build output to the IDs of the sites whose
// rewritten code they lie in, each with its error lines (file:line: message).
func (ov *overlaySet) blame(w *Work, out string) map[string][]string {
	type span struct {
		id         string
		start, end int
	}
	byName := map[string][]span{}
	for name, edits := range ov.edits {
		ln := ov.lineNames[name]
		for _, e := range edits {
			id := ""
			if e.site != nil {
				id = e.site.ID
			} else if e.point != nil {
				id = e.point.ID
			} else if e.state != nil {
				id = e.state.ID
			} else if e.role != nil {
				id = e.role.ID
			} else if e.observe != nil {
				id = e.observe.ID
			} else if e.block {
				id = coverID(name)
			}
			sp := span{id, e.startLine, e.endLine}
			byName[ln] = append(byName[ln], sp)
			byName[name] = append(byName[name], sp)
		}
	}
	for name, f := range ov.errFiles {
		for idx, r := range f.lineOf {
			id := ""
			for _, edits := range ov.edits {
				for _, e := range edits {
					if e.site != nil && e.site.Index == idx {
						id = e.site.ID
					}
				}
			}
			byName[name] = append(byName[name], span{id, r[0], r[1]})
		}
	}
	// The compiler names the overlay's file where no //line directive
	// says otherwise (e.g. in generated error files).
	for target, file := range ov.written {
		byName[file] = append(byName[file], byName[target]...)
	}
	bad := map[string][]string{}
	for _, m := range errLine.FindAllStringSubmatch(out, -1) {
		file := m[1]
		if !filepath.IsAbs(file) {
			file = filepath.Join(w.ModuleDir, file)
		}
		line, _ := strconv.Atoi(m[2])
		for _, sp := range byName[filepath.Clean(file)] {
			if sp.id != "" && sp.start <= line && line <= sp.end && !slices.Contains(bad[sp.id], m[0]) {
				bad[sp.id] = append(bad[sp.id], m[0])
			}
		}
	}
	return bad
}

// peakRSSMB returns the process's peak resident set size in MiB (Linux).
func peakRSSMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}

// SkipSummary formats the skip reasons for humans, e.g. "go/defer call: 3".
func (s Stats) SkipSummary() string {
	var parts []string
	for _, r := range sortedKeys(s.SkipReasons) {
		parts = append(parts, fmt.Sprintf("%s: %d", r, s.SkipReasons[r]))
	}
	return strings.Join(parts, ", ")
}
