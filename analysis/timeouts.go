package analysis

import (
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
)

// point is a timeout expression found in a target function. A point with
// no expression is a deadline whose duration cannot be captured.
type point struct {
	kind string
	fn   *ssa.Function // function whose code evaluates the expression
	pos  token.Pos     // start of the duration expression, or of the deadline
	expr ast.Expr      // the duration expression; nil when uncaptured
}

// pointAt returns the point of a duration expression evaluated in f,
// creating it once per expression. A nil expr makes an uncaptured point at
// pos.
func (s *sieve) pointAt(f *ssa.Function, kind string, expr ast.Expr, pos token.Pos) *point {
	if expr != nil {
		pos = expr.Pos()
	}
	if p, ok := s.points[pos]; ok {
		return p
	}
	p := &point{kind: kind, fn: f, pos: pos, expr: expr}
	s.points[pos] = p
	return p
}

// guard marks site i as timeout-protected by the points (none when the
// timeout's value is unknown, e.g. a caller's context).
func (s *sieve) guard(i int, pts []*point) {
	s.sites[i].Timeout = true
	g := s.guards[i]
	if g == nil {
		g = map[*point]bool{}
		s.guards[i] = g
	}
	for _, p := range pts {
		g[p] = true
	}
}

// guardCall guards the I/O site of call c and the I/O sites of its callees.
func (s *sieve) guardCall(c *ssa.Call, pts []*point) {
	for _, i := range s.reached(c) {
		s.guard(i, pts)
	}
}

// staticName returns the static callee of c as a string, or "".
func staticName(c *ssa.CallCommon) string {
	if f := c.StaticCallee(); f != nil {
		return f.String()
	}
	return ""
}

// argExpr returns argument i of the call expression at lparen in f's
// source, or nil.
func argExpr(f *ssa.Function, lparen token.Pos, i int) ast.Expr {
	call := syntaxCall(f, lparen)
	if call == nil || i >= len(call.Args) {
		return nil
	}
	return call.Args[i]
}

// nowAdd returns d when e is time.Now().Add(d), else nil.
func nowAdd(e ast.Expr) ast.Expr {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Add" {
		return nil
	}
	now, ok := ast.Unparen(sel.X).(*ast.CallExpr)
	if !ok || len(now.Args) != 0 {
		return nil
	}
	nsel, ok := now.Fun.(*ast.SelectorExpr)
	if !ok || nsel.Sel.Name != "Now" {
		return nil
	}
	if id, ok := nsel.X.(*ast.Ident); !ok || id.Name != "time" {
		return nil
	}
	return call.Args[0]
}

// deadlinePoint returns the point of a deadline argument (argument i of the
// call at lparen): its duration when it is time.Now().Add(d), else an
// uncaptured point.
func (s *sieve) deadlinePoint(f *ssa.Function, kind string, lparen token.Pos, i int) *point {
	e := argExpr(f, lparen, i)
	if d := nowAdd(e); d != nil {
		return s.pointAt(f, kind, d, token.NoPos)
	}
	pos := lparen
	if e != nil {
		pos = e.Pos()
	}
	return s.pointAt(f, kind, nil, pos)
}

// contexts follows the contexts made by context.WithTimeout and
// context.WithDeadline through local value flow (φ-nodes, conversions,
// derived contexts, requests made with the context, closures capturing
// it) and guards the I/O of every call that receives one: the call itself
// when it is an I/O site, and the I/O of its callees.
func (s *sieve) contexts() map[ssa.Value][]*point {
	taint := map[ssa.Value][]*point{}
	var work []ssa.Value
	add := func(v ssa.Value, pts []*point) {
		if v == nil {
			return
		}
		if _, ok := taint[v]; ok {
			return
		}
		taint[v] = pts
		work = append(work, v)
	}
	for _, f := range s.funcs {
		for _, b := range f.Blocks {
			for _, in := range b.Instrs {
				c, ok := in.(*ssa.Call)
				if !ok {
					continue
				}
				switch staticName(c.Common()) {
				case "context.WithTimeout":
					add(c, []*point{s.pointAt(f, "WithTimeout", argExpr(f, c.Call.Pos(), 1), c.Call.Pos())})
				case "context.WithDeadline":
					add(c, []*point{s.deadlinePoint(f, "WithDeadline", c.Call.Pos(), 1)})
				}
			}
		}
	}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		pts := taint[v]
		refs := v.Referrers()
		if refs == nil {
			continue
		}
		for _, r := range *refs {
			switch r := r.(type) {
			case *ssa.Extract:
				if carriesContext(r.Type()) {
					add(r, pts)
				}
			case *ssa.Phi:
				add(r, pts)
			case *ssa.ChangeInterface:
				add(r, pts)
			case *ssa.MakeInterface:
				add(r, pts)
			case *ssa.ChangeType:
				add(r, pts)
			case *ssa.TypeAssert:
				add(r, pts)
			case *ssa.Store:
				if a, ok := r.Addr.(*ssa.Alloc); ok && r.Val == v {
					// A variable captured by closures: its loads here
					// and in the closures.
					for _, l := range loads(a) {
						add(l, pts)
					}
				}
			case *ssa.MakeClosure:
				fn := r.Fn.(*ssa.Function)
				for i, b := range r.Bindings {
					if b == v && i < len(fn.FreeVars) {
						add(fn.FreeVars[i], pts)
					}
				}
			case *ssa.Call:
				if r.Call.Value == v {
					continue // a method of the context itself
				}
				if derivesContext(r.Common()) {
					add(r, pts)
				}
			}
		}
	}
	for v, pts := range taint {
		for _, r := range *v.Referrers() {
			if c, ok := r.(*ssa.Call); ok && c.Call.Value != v && !derivesContext(c.Common()) {
				s.guardCall(c, pts)
			}
		}
	}
	return taint
}

// loads returns the loads of a variable's address: in its function and,
// through the free variables binding it, in closures.
func loads(addr ssa.Value) []ssa.Value {
	var out []ssa.Value
	for _, l := range *addr.Referrers() {
		switch l := l.(type) {
		case *ssa.UnOp:
			if l.Op == token.MUL {
				out = append(out, l)
			}
		case *ssa.MakeClosure:
			fn, ok := l.Fn.(*ssa.Function)
			if !ok {
				continue
			}
			for i, b := range l.Bindings {
				if b == addr && i < len(fn.FreeVars) {
					out = append(out, loads(fn.FreeVars[i])...)
				}
			}
		}
	}
	return out
}

// carriesContext reports whether a value of type t can carry a context: a
// context.Context, a pointer to a struct (e.g. *http.Request) or an
// interface; not a function (a CancelFunc) or an error.
func carriesContext(t types.Type) bool {
	if isContext(t) {
		return true
	}
	switch u := t.Underlying().(type) {
	case *types.Signature:
		return false
	case *types.Interface:
		return !types.Identical(t, types.Universe.Lookup("error").Type())
	case *types.Pointer:
		_, ok := u.Elem().Underlying().(*types.Struct)
		return ok
	}
	return false
}

func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

// derivesContext reports whether a call returns a value made from its
// context argument: a derived context (context.With*) or a request or
// client bound to it (NewRequestWithContext, (*Request).WithContext, ...).
func derivesContext(c *ssa.CallCommon) bool {
	name := staticName(c)
	if c.IsInvoke() {
		name = c.Method.Name()
	}
	sig := c.Signature()
	res := sig.Results()
	returnsCtx := false
	for i := 0; i < res.Len(); i++ {
		if isContext(res.At(i).Type()) {
			returnsCtx = true
		}
	}
	return strings.HasPrefix(name, "context.With") || strings.Contains(name, "WithContext") || returnsCtx
}

// timeouts finds the timeouts of f other than contexts: a select that
// waits for a goroutine's result against time.After, a timer or a
// context's Done; time.Since (or Now().Sub) of a time.Now() compared with
// a duration; and Set(Read|Write)Deadline on a connection.
func (s *sieve) timeouts(f *ssa.Function, taint map[ssa.Value][]*point) {
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			switch in := in.(type) {
			case *ssa.Select:
				s.selectTimeout(f, in, taint)
			case *ssa.BinOp:
				s.sinceTimeout(f, in)
			case *ssa.Call:
				s.deadlineTimeout(f, in)
			}
		}
	}
}

// timerChan reports whether a select state's channel is a timeout: the
// channel of time.After(d) or of time.NewTimer(d), or ctx.Done() of a
// context with a deadline, with the points of the timeout.
func (s *sieve) timerChan(f *ssa.Function, ch ssa.Value, taint map[ssa.Value][]*point) ([]*point, bool) {
	switch ch := ch.(type) {
	case *ssa.Call:
		if staticName(ch.Common()) == "time.After" {
			return []*point{s.pointAt(f, "After", argExpr(f, ch.Call.Pos(), 0), ch.Call.Pos())}, true
		}
		if ch.Call.IsInvoke() && ch.Call.Method.Name() == "Done" && isContext(ch.Call.Value.Type()) {
			if pts, ok := taint[ch.Call.Value]; ok {
				return pts, true
			}
			// A caller's context: its deadline is set elsewhere.
			_, param := ch.Call.Value.(*ssa.Parameter)
			return nil, param
		}
	case *ssa.UnOp:
		if fa, ok := ch.X.(*ssa.FieldAddr); ok && ch.Op == token.MUL {
			if t, ok := fa.X.(*ssa.Call); ok && staticName(t.Common()) == "time.NewTimer" {
				return []*point{s.pointAt(f, "NewTimer", argExpr(f, t.Call.Pos(), 0), t.Call.Pos())}, true
			}
		}
	}
	return nil, false
}

// selectTimeout handles a select that receives both a timeout and the
// result of a goroutine started in f: the goroutine's I/O is awaited under
// the timeout.
func (s *sieve) selectTimeout(f *ssa.Function, sel *ssa.Select, taint map[ssa.Value][]*point) {
	var pts []*point
	timed := false
	var results []ssa.Value
	for _, st := range sel.States {
		if st.Dir != types.RecvOnly {
			continue
		}
		if p, ok := s.timerChan(f, st.Chan, taint); ok {
			timed = true
			pts = append(pts, p...)
			continue
		}
		results = append(results, st.Chan)
	}
	if !timed || len(results) == 0 {
		return
	}
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			g, ok := in.(*ssa.Go)
			if !ok {
				continue
			}
			args := append([]ssa.Value(nil), g.Call.Args...)
			var fn *ssa.Function
			if mc, ok := g.Call.Value.(*ssa.MakeClosure); ok {
				fn, _ = mc.Fn.(*ssa.Function)
				args = append(args, mc.Bindings...)
			} else {
				fn = g.Call.StaticCallee()
			}
			if fn == nil || !sharesChan(args, results) {
				continue
			}
			for _, i := range s.sitesWithin(fn, calleeDepth-1) {
				s.guard(i, pts)
			}
		}
	}
}

// sharesChan reports whether one of args is (or denotes the same object
// as) one of the channels.
func sharesChan(args, chans []ssa.Value) bool {
	for _, a := range args {
		for _, c := range chans {
			if a == c || valueKey(a) == valueKey(c) || valueKey(c) == "*"+valueKey(a) {
				return true
			}
		}
	}
	return false
}

// elapsed returns the time.Now() call whose elapsed time v is:
// time.Since(start) or t.Sub(start) with start := time.Now().
func elapsed(v ssa.Value) *ssa.Call {
	c, ok := v.(*ssa.Call)
	if !ok {
		return nil
	}
	var start ssa.Value
	switch staticName(c.Common()) {
	case "time.Since":
		start = c.Call.Args[0]
	case "(time.Time).Sub":
		start = c.Call.Args[1]
	default:
		return nil
	}
	if now, ok := start.(*ssa.Call); ok && staticName(now.Common()) == "time.Now" {
		return now
	}
	return nil
}

// sinceTimeout handles elapsed-time checks: the I/O between the time.Now()
// and the comparison of the elapsed time with a duration is guarded by
// that duration.
func (s *sieve) sinceTimeout(f *ssa.Function, cmp *ssa.BinOp) {
	switch cmp.Op {
	case token.GTR, token.GEQ, token.LSS, token.LEQ:
	default:
		return
	}
	now, left := elapsed(cmp.X), true
	if now == nil {
		now, left = elapsed(cmp.Y), false
	}
	if now == nil {
		return
	}
	var expr ast.Expr
	if be := syntaxBinary(f, cmp.Pos()); be != nil {
		expr = be.Y
		if !left {
			expr = be.X
		}
	}
	pts := []*point{s.pointAt(f, "Since", expr, cmp.Pos())}
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			c, ok := in.(*ssa.Call)
			if ok && c != now && reachesFrom(now, c) && reachesFrom(c, cmp) {
				s.guardCall(c, pts)
			}
		}
	}
}

// deadlineTimeout handles conn.SetDeadline(t) (and the read and write
// variants): the I/O that follows on the same connection, or on calls
// that receive it, is guarded by the deadline.
func (s *sieve) deadlineTimeout(f *ssa.Function, c *ssa.Call) {
	var name string
	var conn ssa.Value
	if c.Call.IsInvoke() {
		name, conn = c.Call.Method.Name(), c.Call.Value
	} else if fn := c.Call.StaticCallee(); fn != nil && fn.Signature.Recv() != nil && len(c.Call.Args) == 2 {
		name, conn = fn.Name(), c.Call.Args[0]
	}
	switch name {
	case "SetDeadline", "SetReadDeadline", "SetWriteDeadline":
	default:
		return
	}
	args := c.Call.Args
	if len(args) == 0 {
		return
	}
	if _, zero := args[len(args)-1].(*ssa.Const); zero {
		return // time.Time{}: clears the deadline
	}
	pts := []*point{s.deadlinePoint(f, "SetDeadline", c.Call.Pos(), 0)}
	key := valueKey(conn)
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			d, ok := in.(*ssa.Call)
			if !ok || d == c || !reachesFrom(c, d) {
				continue
			}
			uses := d.Call.IsInvoke() && valueKey(d.Call.Value) == key
			for _, a := range d.Call.Args {
				if valueKey(a) == key {
					uses = true
				}
			}
			if uses {
				s.guardCall(d, pts)
			}
		}
	}
}

// finishPoints turns every timeout expression found in the target (those
// that guard I/O and the others, so that the controller sees every timeout
// value the target uses) into catalog TimeoutPoints with stable IDs (package, function, kind and ordinal of
// the kind in the function) and dense indices in ID order, and lists them
// on the sites they guard.
func (s *sieve) finishPoints() {
	var ps []*point
	for _, p := range s.points {
		if p.expr == nil {
			s.u.Count(pkgOf(p.fn).Path(), CountTimeoutUncaptured, 1)
			continue
		}
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].pos < ps[j].pos })
	ordinal := map[string]int{}
	ids := map[*point]string{}
	for _, p := range ps {
		pkg := pkgOf(p.fn)
		k := pkg.Path() + "." + p.fn.RelString(pkg) + ":timeout:" + p.kind
		ids[p] = k + "#" + itoa(ordinal[k])
		ordinal[k]++
	}
	sort.Slice(ps, func(i, j int) bool { return ids[ps[i]] < ids[ps[j]] })
	index := map[*point]uint32{}
	fset := s.p.Fset
	for i, p := range ps {
		pkg := pkgOf(p.fn)
		pos := fset.Position(p.pos)
		file, _ := filepath.Abs(pos.Filename)
		index[p] = uint32(i)
		s.tpoints = append(s.tpoints, catalog.TimeoutPoint{
			Index: uint32(i), ID: ids[p], Pkg: pkg.Path(), Func: p.fn.RelString(pkg), Kind: p.kind,
			File: file, Line: pos.Line, Col: pos.Column,
		})
		s.u.Count(pkg.Path(), CountTimeoutPoints, 1)
	}
	for i, g := range s.guards {
		var idx []int
		for p := range g {
			if x, ok := index[p]; ok {
				idx = append(idx, int(x))
			}
		}
		sort.Ints(idx)
		st := &s.sites[i]
		st.Timeouts = nil
		for _, x := range idx {
			st.Timeouts = append(st.Timeouts, uint32(x))
		}
	}
}
