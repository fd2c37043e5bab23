package analysis

import (
	"fmt"
	"go/types"
	"log/slog"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// SitesPass finds error, delay and crash sites in the target packages and
// prunes invalid injections. Its result is *Sites; it adds the counters
// error_sites, delay_sites, crash_sites and pruned_invalid.
var SitesPass = &Pass{
	Name:       "sites",
	Doc:        "error, delay and crash sites at the deepest call where a fault originates",
	ResultType: reflect.TypeFor[*Sites](),
	Run:        runSites,
}

// Sites is the result of SitesPass: the fault sites in the order found,
// and the SSA call each one is at, so later passes find a site by its call.
type Sites struct {
	List   []catalog.Site
	byCall map[*ssa.Call]int
}

// At returns the index in List of the site at call c.
func (s *Sites) At(c *ssa.Call) (int, bool) {
	i, ok := s.byCall[c]
	return i, ok
}

func (s *Sites) contribute(p *catalog.Parts) { p.Sites = append(p.Sites, s.List...) }

func runSites(u *Unit) (any, error) {
	ctx, p := u.Context, u.Prog
	res := &Sites{byCall: map[*ssa.Call]int{}}
	var all []*ssa.Function
	for f := range ssautil.AllFunctions(p.SSA) {
		if f.Blocks != nil {
			all = append(all, f)
		}
	}
	fl := newFlow(p, all)
	o := newOrigins(p, fl)
	for _, sp := range p.Targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, f := range targetFunctions(sp) {
			sitesIn(o, f, u, res)
		}
	}
	return res, nil
}

// targetFunctions returns the source functions of sp (with closures),
// skipping package initialisers: init code runs before any fault plan
// arrives and is not worth a hook.
func targetFunctions(sp *ssa.Package) []*ssa.Function {
	var out []*ssa.Function
	var visit func(f *ssa.Function)
	visit = func(f *ssa.Function) {
		if f.Blocks == nil || f.Synthetic != "" {
			return
		}
		out = append(out, f)
		for _, a := range f.AnonFuncs {
			visit(a)
		}
	}
	for _, f := range packageFunctions(sp) {
		if isPackageInit(f) {
			continue
		}
		if strings.HasSuffix(sp.Prog.Fset.File(f.Pos()).Name(), "_test.go") {
			continue
		}
		visit(f)
	}
	return out
}

// sitesIn adds the sites of the calls in f to res.
func sitesIn(o *origins, f *ssa.Function, u *Unit, res *Sites) {
	first := len(res.List)
	defer func() { nextDiskCalls(res.List[first:]) }()
	pkg := pkgOf(f)
	fset := o.prog.Fset
	type call struct {
		c      *ssa.Call
		callee string
		bound  bool // a function value bound to a disk call (boundDiskCall)
	}
	var calls []call
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			c, ok := in.(*ssa.Call)
			if !ok || !c.Call.Pos().IsValid() {
				continue
			}
			if name, ok := boundDiskCall(o.prog, c); ok {
				calls = append(calls, call{c, name, true})
				continue
			}
			calls = append(calls, call{c, calleeName(c.Common()), false})
		}
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].c.Call.Pos() < calls[j].c.Call.Pos() })
	ordinal := map[string]int{}
	fname := f.RelString(pkg)
	for _, cl := range calls {
		n := ordinal[cl.callee]
		ordinal[cl.callee]++
		common := cl.c.Common()
		if !lastIsError(common.Signature()) || !cl.bound && !hookable(common) {
			continue
		}
		r := o.resolve(cl.c)
		if r.ioShaped && r.infallible {
			u.Count(pkg.Path(), CountPrunedInvalid, 1)
			slog.Debug("analysis: pruned invalid injection", "pkg", pkg.Path(), "func", fname, "callee", cl.callee,
				"pos", fset.Position(common.Pos()).String())
			continue
		}
		var kind catalog.Kind
		var vals []errVal
		if r.io != "" {
			// An I/O error: what the I/O returns, plus the sentinels the
			// (non-target) callee returns itself.
			kind |= catalog.KindDelay | catalog.KindCrash
			vals = appendVals(vals, r.ioVals...)
			vals = appendVals(vals, r.inherited...)
		} else {
			// An error constructed by a target callee. Errors that
			// non-target code constructs without I/O (parsers, codecs)
			// are not fault sites.
			vals = appendVals(vals, r.calleeCreated...)
		}
		var evs []catalog.ErrorValue
		for _, v := range vals {
			if len(evs) == maxValues {
				break
			}
			if v.private != nil && v.private != pkg {
				continue
			}
			if !o.importsOK(v.ErrorValue) || !o.importable(pkg, v.Imports) {
				continue
			}
			evs = append(evs, v.ErrorValue)
		}
		uniqueNames(evs)
		if len(evs) > 0 {
			kind |= catalog.KindError
		}
		if kind == 0 {
			continue
		}
		pos := fset.Position(common.Pos())
		file, _ := filepath.Abs(pos.Filename)
		if r.io == ioDisk && kind.Has(catalog.KindCrash) {
			// A disk call can crash after it returned too (its bytes
			// written, its sync done): the rewrite hooks its return, or
			// takes the kind back where it cannot.
			kind |= catalog.KindCrashAfter
		}
		var role string
		if d, ok := catalog.DiskCallOf(cl.callee); ok && r.io == ioDisk && kind.Has(catalog.KindCrash) {
			// A file read or write whose bytes the hook reaches.
			if d.Write {
				kind |= catalog.KindTorn
			} else {
				kind |= catalog.KindCorrupt
			}
			role = fileRole(pkg.Path(), fname, file)
		}
		s := catalog.Site{
			ID:     siteID(pkg.Path(), fname, cl.callee, n),
			Kind:   kind,
			Pkg:    pkg.Path(),
			Func:   fname,
			Callee: cl.callee,
			File:   file,
			Line:   pos.Line,
			Col:    pos.Column,
			IO:     r.io,
			Errors: evs,
			// FileRole is the guess of fileRole for a disk fault site.
			FileRole: role,
		}
		res.byCall[cl.c] = len(res.List)
		res.List = append(res.List, s)
		if kind.Has(catalog.KindError) {
			u.Count(pkg.Path(), CountErrorSites, 1)
		}
		if kind.Has(catalog.KindDelay) {
			u.Count(pkg.Path(), CountDelaySites, 1)
		}
		if kind.Has(catalog.KindCrash) {
			u.Count(pkg.Path(), CountCrashSites, 1)
		}
		if kind.Has(catalog.KindCrashAfter) {
			u.Count(pkg.Path(), CountCrashAfterSites, 1)
		}
	}
}

// nextDiskCalls names, for each site of one function's sites that can
// crash after its call, the next disk call of the function in source order
// (catalog.Site.Next): where the window after the call ends.
func nextDiskCalls(sites []catalog.Site) {
	for i := range sites {
		a := &sites[i]
		if !a.Kind.Has(catalog.KindCrashAfter) {
			continue
		}
		var next *catalog.Site
		for j := range sites {
			b := &sites[j]
			if b.IO != ioDisk || !after(b, a) || next != nil && !after(next, b) {
				continue
			}
			next = b
		}
		if next != nil {
			a.Next = next.Callee
		}
	}
}

// after reports whether site b's call comes after site a's in the source.
func after(b, a *catalog.Site) bool {
	return b.File == a.File && (b.Line > a.Line || b.Line == a.Line && b.Col > a.Col)
}

var opField = regexp.MustCompile(`Op: "([^"]*)"`)

// uniqueNames makes the names of a site's error values distinct: a repeated
// name gets the operation of its value, e.g. "EIO" and "EIO(sync)", or a
// number.
func uniqueNames(evs []catalog.ErrorValue) {
	seen := map[string]bool{}
	for i := range evs {
		name := evs[i].Name
		if seen[name] {
			if m := opField.FindStringSubmatch(evs[i].Expr); m != nil {
				name = fmt.Sprintf("%s(%s)", evs[i].Name, m[1])
			}
			for n := 2; seen[name]; n++ {
				name = fmt.Sprintf("%s#%d", evs[i].Name, n)
			}
		}
		seen[name] = true
		evs[i].Name = name
	}
}

// boundDiskCall returns the name of the disk call (catalog.DiskCallOf) that
// c, a call of a function value, makes when the call graph's only callee
// for it is the method value of that call: bolt's page writes,
// db.ops.writeAt(buf, off) with db.ops.writeAt = db.file.WriteAt, are
// "(*os.File).WriteAt". Such a call is a site like the method's call,
// though calls of function values in general are not (hookable).
func boundDiskCall(p *Program, c ssa.CallInstruction) (string, bool) {
	common := c.Common()
	if common.IsInvoke() || common.StaticCallee() != nil {
		return "", false
	}
	callees := p.Callees(c)
	if len(callees) != 1 {
		return "", false
	}
	f := callees[0]
	m, ok := f.Object().(*types.Func)
	if !ok || !strings.HasPrefix(f.Synthetic, "bound method wrapper for ") || len(f.FreeVars) != 1 {
		return "", false
	}
	q := func(p *types.Package) string { return p.Name() }
	name := "(" + types.TypeString(f.FreeVars[0].Type(), q) + ")." + m.Name()
	if _, ok := catalog.DiskCallOf(name); !ok {
		return "", false
	}
	return name, true
}

// hookable reports whether a call can be a site: calls of function values
// are not (the call graph over-approximates them and they are mostly
// middleware), nor are the error constructors themselves.
func hookable(c *ssa.CallCommon) bool {
	if c.IsInvoke() {
		return true
	}
	f := c.StaticCallee()
	if f == nil {
		return false
	}
	switch f.String() {
	case "errors.New", "fmt.Errorf", "errors.Join":
		return false
	}
	return true
}

// importable reports whether a file in package from may import every path
// of imports: not into another module's internal tree, and not a package
// that imports from (directly or not), which would be a cycle.
func (o *origins) importable(from *types.Package, imports []string) bool {
	for _, path := range imports {
		if path == from.Path() {
			continue
		}
		if i := strings.LastIndex(path, "/internal"); i >= 0 && (i+len("/internal") == len(path) || path[i+len("/internal")] == '/') {
			if parent := path[:i]; from.Path() != parent && !strings.HasPrefix(from.Path(), parent+"/") {
				return false
			}
		}
		if strings.HasPrefix(path, "internal/") || path == "internal" {
			return false
		}
		sp := o.prog.SSA.ImportedPackage(path)
		if sp == nil {
			continue
		}
		if o.reaches(sp.Pkg, from) {
			return false
		}
	}
	return true
}

// reaches reports whether package a imports b, directly or not.
func (o *origins) reaches(a, b *types.Package) bool {
	key := [2]*types.Package{a, b}
	if r, ok := o.reach[key]; ok {
		return r
	}
	seen := map[*types.Package]bool{}
	var dfs func(p *types.Package) bool
	dfs = func(p *types.Package) bool {
		if p == b {
			return true
		}
		if seen[p] {
			return false
		}
		seen[p] = true
		for _, q := range p.Imports() {
			if dfs(q) {
				return true
			}
		}
		return false
	}
	r := dfs(a)
	o.reach[key] = r
	return r
}

// importsOK reports whether no two imports of v share a package name.
func (o *origins) importsOK(v catalog.ErrorValue) bool {
	seen := map[string]string{}
	for _, p := range v.Imports {
		name := pathName(p)
		if sp := o.prog.SSA.ImportedPackage(p); sp != nil {
			name = sp.Pkg.Name()
		}
		if q, ok := seen[name]; ok && q != p {
			return false
		}
		seen[name] = p
	}
	return true
}

// pathName guesses the package name of an import path the way the
// instrumenter's generated file sees it: the last element, without a
// major-version suffix.
func pathName(p string) string {
	parts := strings.Split(p, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		last = parts[len(parts)-2]
	}
	return last
}

// siteID is the stable identity of a site: package, enclosing function,
// callee and the ordinal of that callee among the calls of the function.
func siteID(pkg, fn, callee string, ordinal int) string {
	return pkg + "." + fn + ":" + callee + "#" + itoa(ordinal)
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}

// calleeName names the callee of a call, qualified by package names:
// "(*os.File).Write", "os.Open", "(io.Writer).Write", "(*raftNode).start$1".
func calleeName(c *ssa.CallCommon) string {
	q := func(p *types.Package) string { return p.Name() }
	if c.IsInvoke() {
		return "(" + types.TypeString(c.Value.Type(), q) + ")." + c.Method.Name()
	}
	if f := c.StaticCallee(); f != nil {
		if o := f.Origin(); o != nil {
			f = o
		}
		if recv := f.Signature.Recv(); recv != nil {
			return "(" + types.TypeString(recv.Type(), q) + ")." + f.Name()
		}
		if f.Parent() != nil {
			return f.Name()
		}
		if f.Pkg != nil {
			return f.Pkg.Pkg.Name() + "." + f.Name()
		}
		return f.Name()
	}
	return "func(" + types.TypeString(c.Value.Type(), q) + ")"
}

func sortStrings(s []string) { sort.Strings(s) }

// isPackageInit reports whether f is a package's initializer or one of its
// func init()s: they run before the node connects to its controller, so
// they hold no sites. A method named init is an ordinary method.
func isPackageInit(f *ssa.Function) bool {
	return f.Signature.Recv() == nil && f.Parent() == nil && (f.Name() == "init" || strings.HasPrefix(f.Name(), "init#"))
}
