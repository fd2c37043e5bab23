package instrument

import (
	"context"
	"fmt"
	"go/ast"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/procgroup"
)

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
	// noIgnored are the test files whose Ignored wrappers did not
	// compile: they are left as they are.
	noIgnored map[string]bool
	// testMain is where a test build adds a TestMain (testMainSource) to
	// the package under test, "" when its tests have one or the one added
	// did not compile; testMainPkg is that package's name.
	testMain, testMainPkg string
	// member is the member type of w.Member, nil for none.
	member *memberType
	// sends are the transport's send methods (w.Transport.Send), and
	// sendPeers their rules by site ID.
	sends     []*sendMethod
	sendPeers map[string]sendRule
}

type fileRef struct {
	pkg  *packages.Package
	file *ast.File
	src  []byte
	// test is set for a _test.go file of the package under test (a test
	// build: loadTests), whose discarded errors are wrapped (ignoredEdits).
	test bool
}

// newRewriter loads (parses and type-checks) the packages holding cat's
// sites, from the prepared tree, and with cover or in a test build
// (w.Test) every target package.
func newRewriter(ctx context.Context, w *Work, cat *catalog.Catalog, cover bool) (*rewriter, error) {
	rw := &rewriter{w: w, pkgs: map[string]*packages.Package{}, files: map[string]fileRef{},
		deps: map[string][]string{}, names: map[string]string{}, reach: map[string]map[string]bool{},
		cover: cover, noCover: map[string]bool{}, noIgnored: map[string]bool{}}
	seen := map[string]bool{}
	var paths []string
	// A test build loads every target package, sites or not, for the
	// runtime.Stack calls of a leak checker named in them (stackEdits).
	if cover || w.Test {
		for _, p := range w.Patterns {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	paths = addPackages(paths, seen, cat.States, stateAt)
	paths = addPackages(paths, seen, cat.TimeoutPoints, timeoutAt)
	paths = addPackages(paths, seen, roleWrites(cat), roleWriteAt)
	paths = addPackages(paths, seen, cat.Sites, siteAt)
	var rule memberRule
	if w.Member != "" {
		var err error
		if rule, err = parseMember(w.Member); err != nil {
			return nil, err
		}
		if !seen[rule.pkg] {
			seen[rule.pkg] = true
			paths = append(paths, rule.pkg)
		}
	}
	var sendRules []sendRule
	for _, send := range w.Transport.Send {
		if w.Member == "" {
			return nil, fmt.Errorf("transport send %s: needs a member rule (the members a send goes between)", send)
		}
		r, err := parseSend(send)
		if err != nil {
			return nil, err
		}
		sendRules = append(sendRules, r)
		if !seen[r.pkg] {
			seen[r.pkg] = true
			paths = append(paths, r.pkg)
		}
	}
	errImports := map[string]bool{}
	for _, s := range cat.Sites {
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
	if w.Test {
		if err := rw.loadTests(pcfg, w.Main); err != nil {
			return nil, err
		}
	}
	if w.Member != "" {
		if rw.member, err = resolveMember(rule, rw.pkgs); err != nil {
			return nil, err
		}
	}
	if len(sendRules) > 0 {
		if err := resolveAddress(rw.member, w.Transport.Address); err != nil {
			return nil, err
		}
		rw.member.addr = w.Transport.Address
		rw.sendPeers = map[string]sendRule{}
		for _, r := range sendRules {
			m, err := resolveSend(r, rw.pkgs)
			if err != nil {
				return nil, err
			}
			rw.sends = append(rw.sends, m)
			rw.sendPeers[sendSite(m, "").ID] = r
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

// loadTests loads the package under test main with its tests (cfg, with
// Tests set) and adds its _test.go files, of the package and of its
// external test package, to rw.files, marked test: their calls whose error
// the test discards are wrapped (ignoredEdits). Only the test variants'
// _test.go files are taken: the package's other files are those of the
// first load.
func (rw *rewriter) loadTests(cfg *packages.Config, main string) error {
	tcfg := *cfg
	tcfg.Tests = true
	pkgs, err := packages.Load(&tcfg, main)
	if err != nil {
		return fmt.Errorf("load %s with its tests: %w", main, err)
	}
	hasMain := false // in the package or its tests
	for _, p := range pkgs {
		if p.Types != nil && p.Types.Scope().Lookup("TestMain") != nil {
			hasMain = true
		}
		if p.PkgPath == main && p.ID == main && len(p.GoFiles) > 0 {
			rw.testMain, rw.testMainPkg = testMainPath(filepath.Dir(p.GoFiles[0])), p.Name
		}
		// The test variants are "P [P.test]" and "P_test [P.test]"; the
		// test main "P.test" is generated.
		if p.Types == nil || p.TypesInfo == nil || !strings.HasSuffix(p.ID, ".test]") {
			continue
		}
		for _, e := range p.Errors {
			slog.Warn("loading the package's tests", "pkg", p.ID, "err", e)
		}
		for _, f := range p.Syntax {
			name := filepath.Clean(p.Fset.File(f.Pos()).Name())
			if !strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				return fmt.Errorf("read %s: %w", name, err)
			}
			rw.files[name] = fileRef{pkg: p, file: f, src: src, test: true}
		}
	}
	if hasMain {
		rw.testMain = ""
	}
	return nil
}
