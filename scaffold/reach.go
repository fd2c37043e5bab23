package scaffold

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// pkgInfo is one package as "go list -json" describes it.
type pkgInfo struct {
	ImportPath string
	Name       string
	Dir        string
	Standard   bool
	Imports    []string
	GoFiles    []string
	Error      *struct{ Err string }
	Module     *struct {
		Path string
		Main bool
	}
}

// goList runs "go list -e -json" with args in dir; packages that do not
// load (a dependency not downloaded, a file that does not compile) are
// still listed, so only a go command that fails outright is an error.
func goList(ctx context.Context, dir string, args ...string) ([]pkgInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"list", "-e", "-json=ImportPath,Name,Dir,Standard,Imports,GoFiles,Error,Module"}, args...)...)
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var pkgs []pkgInfo
	for dec := json.NewDecoder(&out); ; {
		var p pkgInfo
		if derr := dec.Decode(&p); derr == io.EOF {
			break
		} else if derr != nil {
			return pkgs, fmt.Errorf("go list %s: %w", strings.Join(args, " "), derr)
		}
		pkgs = append(pkgs, p)
	}
	if err != nil && len(pkgs) == 0 {
		return nil, fmt.Errorf("go list %s: %w: %s", strings.Join(args, " "), err, clip(strings.TrimSpace(stderr.String()), 200))
	}
	return pkgs, nil
}

// inModule reports whether p is a package of the main module modPath.
func inModule(p pkgInfo, modPath string) bool {
	if p.Module != nil {
		return p.Module.Main
	}
	return !p.Standard && (p.ImportPath == modPath || strings.HasPrefix(p.ImportPath, modPath+"/"))
}

// Shapes of a raft package's API, by the library it looks like.
const (
	shapeHashi = "hashicorp/raft"
	shapeEtcd  = "etcd-io/raft"
	shapeRaft  = "raft"
)

// raftShapes reads the packages among deps that may be a copy of a raft
// library — the last element of their path mentions raft, and they are
// no known library's — and returns the API shape of those that have one
// (see apiShape), by import path.
func raftShapes(deps []pkgInfo) map[string]string {
	out := map[string]string{}
	for _, p := range deps {
		if p.Standard || p.Name == "main" || !strings.Contains(strings.ToLower(path.Base(p.ImportPath)), "raft") || knownLibrary(p) != nil {
			continue
		}
		var decls []string
		fset := token.NewFileSet()
		for _, f := range p.GoFiles {
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			for _, d := range af.Decls {
				decls = append(decls, declNames(d)...)
			}
		}
		if s := apiShape(decls); s != "" {
			out[p.ImportPath] = s
		}
	}
	return out
}

// apiShape says which raft library a package's top-level declarations
// (types as "type T", functions as "func F") look like: hashicorp/raft (a
// Raft type and NewRaft), etcd-io/raft (RawNode or StartNode), a raft of
// its own (a Raft or Node type, or raft's two RPCs as types, as goraft and
// its forks such as github.com/seaweedfs/raft declare them beside a Server
// interface), or "" for none.
func apiShape(decls []string) string {
	has := func(d string) bool { return slices.Contains(decls, d) }
	switch {
	case has("type Raft") && has("func NewRaft"):
		return shapeHashi
	case has("type RawNode") || has("func StartNode"):
		return shapeEtcd
	case has("type Raft") || has("type Node"),
		has("type AppendEntriesRequest") && has("type RequestVoteRequest"):
		return shapeRaft
	}
	return ""
}

// declNames are the names a top-level declaration declares, as apiShape
// reads them: "type T", "func F" (methods left out).
func declNames(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			out = append(out, "func "+d.Name.Name)
		}
	case *ast.GenDecl:
		for _, sp := range d.Specs {
			if ts, ok := sp.(*ast.TypeSpec); ok {
				out = append(out, "type "+ts.Name.Name)
			}
		}
	}
	return out
}

// knownLibrary is the known library whose module holds p, nil when none.
func knownLibrary(p pkgInfo) *Library {
	for i, l := range libraries {
		for _, m := range l.Modules {
			if p.ImportPath == m || strings.HasPrefix(p.ImportPath, m+"/") {
				return &libraries[i]
			}
		}
	}
	return nil
}

// libCand is a consensus library the node program reaches.
type libCand struct {
	lib       Library
	module    string          // the known library's module path, or the copy's package
	importers []string        // the main module's packages that import it
	files     map[string]bool // their files that import it, by path
	via       string          // a reached package that imports it, when none of the module's does
	fork      bool
	order     int
}

// chooseLibrary picks the consensus library among the packages the node
// program main reaches (deps, with the API shapes of raft copies from
// raftShapes): a known library, or a fork or vendored copy of one (a
// package named like raft with a raft API that wraps no other one);
// the one the module's own packages import most, then the one more of
// their files import (a library used behind a flag has fewer), known
// libraries first on a tie. It returns the library (nil when none is reached), why, and
// the runner-up with why it lost ("" when there is none): another reached
// library, or a known one go.mod requires but main does not reach.
func chooseLibrary(modPath, main string, deps []pkgInfo, shapes map[string]string, requires []string) (*Library, string, string) {
	byPath := map[string]pkgInfo{}
	for _, p := range deps {
		byPath[p.ImportPath] = p
	}
	cands := map[string]*libCand{}
	var order []string
	add := func(key string, c *libCand) {
		if cands[key] == nil {
			cands[key] = c
			order = append(order, key)
		}
	}
	for i, l := range libraries {
		for _, p := range deps {
			if k := knownLibrary(p); k != nil && k.Name == l.Name {
				m := p.ImportPath
				if p.Module != nil {
					m = p.Module.Path
				}
				add(l.Name, &libCand{lib: l, module: m, order: i})
			}
		}
	}
	for _, p := range deps {
		shape := shapes[p.ImportPath]
		if shape == "" || wraps(p, shapes) {
			continue
		}
		add(p.ImportPath, &libCand{lib: forkOf(p.ImportPath, shape), module: p.ImportPath, fork: true, order: len(libraries)})
	}
	// Who imports each candidate.
	for _, p := range deps {
		for _, imp := range p.Imports {
			ip, ok := byPath[imp]
			if !ok {
				continue
			}
			var key string
			var self bool // p is a package of the candidate itself
			if k := knownLibrary(ip); k != nil {
				key, self = k.Name, knownLibrary(p) == k
			} else if key = forkHolding(cands, imp); key != "" {
				self = within(p.ImportPath, key)
			}
			c := cands[key]
			if c == nil || self {
				continue // not a candidate, or the library importing itself
			}
			if inModule(p, modPath) && p.ImportPath != imp {
				if !slices.Contains(c.importers, p.ImportPath) {
					c.importers = append(c.importers, p.ImportPath)
				}
				c.addFiles(p, imp)
			} else if c.via == "" && p.ImportPath != imp {
				c.via = p.ImportPath
			}
		}
	}
	var list []*libCand
	for _, k := range order {
		list = append(list, cands[k])
	}
	slices.SortStableFunc(list, func(a, b *libCand) int {
		if len(a.importers) != len(b.importers) {
			return len(b.importers) - len(a.importers)
		}
		if len(a.files) != len(b.files) {
			return len(b.files) - len(a.files)
		}
		return a.order - b.order
	})
	if len(list) == 0 {
		return nil, "", ""
	}
	c := list[0]
	runnerUp := ""
	if len(list) > 1 {
		runnerUp = list[1].lib.Name + ": " + list[1].reason(main)
	} else if l := libraryOf(requires); l != nil && l.Name != c.lib.Name {
		runnerUp = l.Module + ": in go.mod, not reached from " + main
	}
	lib := c.lib
	if !c.fork {
		lib.Module = c.module
		lib.Packages = slices.Clone(lib.Packages)
		if lib.Packages == nil {
			lib.Packages = []string{lib.Module}
		}
		for _, comp := range companions[lib.Module] {
			if reachesModule(deps, comp) {
				lib.Packages = append(lib.Packages, comp)
			}
		}
	}
	return &lib, c.reason(main), runnerUp
}

// chooseGossip picks, for a node program that reaches no consensus
// library, the gossip library the module's own packages import (the first
// of gossipLibraries that any imports), and returns it with why and the
// module's packages around it: those that import it and those that import
// one of these, main packages left out (the replicated state and its
// callers, not every package the program reaches). It returns nil when
// the module imports none.
func chooseGossip(modPath string, deps []pkgInfo) (*Library, string, []string) {
	for _, l := range gossipLibraries {
		var importers []string
		for _, p := range deps {
			if inModule(p, modPath) && slices.ContainsFunc(p.Imports, func(imp string) bool { return within(imp, l.Modules[0]) }) {
				importers = append(importers, p.ImportPath)
			}
		}
		if len(importers) == 0 {
			continue
		}
		around := slices.Clone(importers)
		for _, p := range deps {
			if inModule(p, modPath) && p.Name != "main" && !slices.Contains(around, p.ImportPath) &&
				slices.ContainsFunc(p.Imports, func(imp string) bool { return slices.Contains(importers, imp) }) {
				around = append(around, p.ImportPath)
			}
		}
		lib := l
		lib.Module = l.Modules[0]
		c := libCand{importers: importers}
		return &lib, c.reason(""), around
	}
	return nil, "", nil
}

// forkHolding is the fork or copy among cands that holds package imp
// (the copy's own package or one under it, such as
// github.com/seaweedfs/raft/protobuf), the innermost one; "" when none.
func forkHolding(cands map[string]*libCand, imp string) string {
	key := ""
	for k, c := range cands {
		if c.fork && within(imp, k) && len(k) > len(key) {
			key = k
		}
	}
	return key
}

// within reports whether package p is pkg or under it.
func within(p, pkg string) bool {
	return p == pkg || strings.HasPrefix(p, pkg+"/")
}

// addFiles records the files of p, a package of the main module, that
// import imp, a package of c; a file that does not parse counts as none.
func (c *libCand) addFiles(p pkgInfo, imp string) {
	fset := token.NewFileSet()
	for _, f := range p.GoFiles {
		name := filepath.Join(p.Dir, f)
		af, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, is := range af.Imports {
			if strings.Trim(is.Path.Value, "`\"") == imp {
				if c.files == nil {
					c.files = map[string]bool{}
				}
				c.files[name] = true
			}
		}
	}
}

// reason says how main reaches c.
func (c *libCand) reason(main string) string {
	var why string
	switch n := len(c.importers); {
	case n == 1:
		why = "imported by " + c.importers[0]
	case n > 1:
		why = fmt.Sprintf("imported by %d of the module's packages (%s, ...)", n, c.importers[0])
		if len(c.files) > n {
			why += fmt.Sprintf(" in %d files", len(c.files))
		}
	case c.via != "":
		why = "reached from " + main + " through " + c.via
	default:
		why = "reached from " + main
	}
	switch {
	case c.fork && c.lib.Like != "":
		why += "; its API looks like " + c.lib.Like + "'s"
	case c.fork:
		why += "; its API is a raft's (a Raft or Node type, or AppendEntriesRequest and RequestVoteRequest)"
	}
	return why
}

// wraps reports whether p imports a known library's package or another
// package with a raft API (shapes): a wrapper around it, not a copy.
func wraps(p pkgInfo, shapes map[string]string) bool {
	for _, imp := range p.Imports {
		if shapes[imp] != "" || knownLibrary(pkgInfo{ImportPath: imp}) != nil {
			return true
		}
	}
	return false
}

// reachesModule reports whether deps hold a package of module mod.
func reachesModule(deps []pkgInfo, mod string) bool {
	return slices.ContainsFunc(deps, func(p pkgInfo) bool {
		return p.Module != nil && p.Module.Path == mod || p.ImportPath == mod || strings.HasPrefix(p.ImportPath, mod+"/")
	})
}

// forkOf is the library entry for the raft copy at pkg whose API looks
// like shape: the wiring of the library it looks like, named after pkg.
func forkOf(pkg, shape string) Library {
	l := Library{Ports: []string{"peer", "client"}, Ready: `"http://{{.Host}}:{{.Port.client}}/health"`}
	for _, k := range libraries {
		if k.Name == shape {
			l = k
		}
	}
	l.Name, l.Module, l.Modules, l.Packages = pkg, pkg, nil, []string{pkg}
	role := []string{"a fork may keep its role in a string or a bool (isLeader): if gofault", "analyze finds no role, name the field in target.role (docs/analysis.md)."}
	if shape == shapeRaft {
		l.Notes = role
		return l
	}
	l.Like = shape
	l.Notes = append(append([]string{pkg + " looks like a copy of " + shape + "; what holds for " + shape + ":"}, l.Notes...), role...)
	return l
}

// narrowPackages turns the module's packages that main reaches (reached,
// import paths) into package patterns relative to the module: "./d/..."
// for a directory whose every package (of all, the module's) is reached
// and that holds more than one, else each package; "./..." only when the
// whole module is reached.
func narrowPackages(modPath string, all, reached []string) []string {
	rel := func(p string) string {
		if p == modPath {
			return "."
		}
		return strings.TrimPrefix(p, modPath+"/")
	}
	isReached := map[string]bool{}
	for _, p := range reached {
		isReached[rel(p)] = true
	}
	under := func(d, p string) bool { return d == "." || p == d || strings.HasPrefix(p, d+"/") }
	covered := func(d string) bool {
		n := 0
		for _, p := range all {
			if r := rel(p); under(d, r) {
				if !isReached[r] {
					return false
				}
				n++
			}
		}
		return n > 1 || d == "." && n > 0
	}
	var out []string
	for _, p := range reached {
		r := rel(p)
		pat := "./" + r
		if r == "." {
			pat = "."
		}
		ancestors := []string{"."}
		if r != "." {
			parts := strings.Split(r, "/")
			for i := range parts {
				ancestors = append(ancestors, strings.Join(parts[:i+1], "/"))
			}
		}
		for _, d := range ancestors {
			if covered(d) {
				pat = "./" + d + "/..."
				if d == "." {
					pat = "./..."
				}
				break
			}
		}
		if !slices.Contains(out, pat) {
			out = append(out, pat)
		}
	}
	slices.Sort(out)
	return out
}

// apiCallers narrows, for a node program that reaches most of a large
// module (one binary for every command, as seaweedfs's weed), the packages
// worth analysing to those that call the consensus library lib: the
// module's packages (main left out) among deps that import one of its API
// packages (lib.Module or one of lib.Packages, not a subpackage only, such
// as its protobuf messages) directly — where the consensus's storage,
// transport and state-machine calls are. It returns them (nil when none
// does) and, for the runner-up line, the next wider sets with their sizes:
// those that import only a subpackage of lib too, then the packages on
// import paths from main to lib, then all that main reaches.
func apiCallers(modPath string, deps []pkgInfo, lib *Library, reached int) (core []string, runnerUp string) {
	isAPI := func(imp string) bool {
		if imp == lib.Module {
			return true
		}
		for _, p := range lib.Packages {
			if d, ok := strings.CutSuffix(p, "/..."); ok && within(imp, d) || imp == p {
				return true
			}
		}
		return false
	}
	inLib := func(imp string) bool {
		if within(imp, lib.Module) {
			return true
		}
		return slices.ContainsFunc(lib.Packages, func(p string) bool { return within(imp, strings.TrimSuffix(p, "/...")) })
	}
	byPath := map[string]pkgInfo{}
	for _, p := range deps {
		byPath[p.ImportPath] = p
	}
	var subOnly []string
	for _, p := range deps {
		if !inModule(p, modPath) || p.Name == "main" || inLib(p.ImportPath) {
			continue
		}
		switch {
		case slices.ContainsFunc(p.Imports, isAPI):
			core = append(core, p.ImportPath)
		case slices.ContainsFunc(p.Imports, inLib):
			subOnly = append(subOnly, p.ImportPath)
		}
	}
	if len(core) == 0 {
		return nil, ""
	}
	// The packages on import paths from main to lib: those that reach it.
	reaches := map[string]bool{}
	var walk func(string) bool
	walk = func(ip string) bool {
		if r, ok := reaches[ip]; ok {
			return r
		}
		reaches[ip] = false
		r := false
		for _, imp := range byPath[ip].Imports {
			if inLib(imp) || byPath[imp].ImportPath != "" && inModule(byPath[imp], modPath) && walk(imp) {
				r = true
			}
		}
		reaches[ip] = r
		return r
	}
	onPath := 0
	for _, p := range deps {
		if inModule(p, modPath) && !inLib(p.ImportPath) && walk(p.ImportPath) {
			onPath++
		}
	}
	var wider []string
	if len(subOnly) > 0 {
		wider = append(wider, fmt.Sprintf("%d with those that import only its subpackages (%s)", len(core)+len(subOnly), strings.Join(subOnly, ", ")))
	}
	wider = append(wider, fmt.Sprintf("%d on import paths from the node program to it", onPath), fmt.Sprintf("all %d it reaches", reached))
	return core, strings.Join(wider, "; ")
}

// clip is s cut to n bytes with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
