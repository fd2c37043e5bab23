package analysis

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
)

// errVal is a realistic error value plus the package whose unexported
// names its Expr uses (nil when it uses exported names only): such a value
// can only be injected at sites in that package.
type errVal struct {
	catalog.ErrorValue
	private *types.Package
	// sentinel marks a package-level error variable.
	sentinel bool
}

// summary is what a function's error result can carry.
type summary struct {
	// io is the class of I/O errors the result can carry ("" if none);
	// disk wins over net when both occur.
	io     string
	ioVals []errVal
	// created are errors constructed in the function's own body.
	created []errVal
	// inherited are sentinel errors constructed in non-target callees.
	inherited []errVal
	// fallible is false when the error result is always nil.
	fallible bool
	// visits are the calls of the function's func-typed parameters whose
	// error the result can carry (bbolt's Bucket.ForEach returning its
	// visitor's error); the fields above include their callees, all the
	// call graph has for them.
	visits []visit
	// own is the summary without the visits (nil when there are none):
	// what the function returns of its own, whatever its callers pass.
	own *summary
}

func (s *summary) addIO(class string, vals []errVal) {
	if s.io == "" || class == ioDisk {
		s.io = class
	}
	s.ioVals = appendVals(s.ioVals, vals...)
	s.fallible = true
}

// maxValues bounds the error values of one site.
const maxValues = 4

func appendVals(dst []errVal, vals ...errVal) []errVal {
outer:
	for _, v := range vals {
		for _, d := range dst {
			if d.Expr == v.Expr {
				continue outer
			}
		}
		if len(dst) >= 2*maxValues {
			break
		}
		dst = append(dst, v)
	}
	return dst
}

func public(vs []catalog.ErrorValue) []errVal {
	out := make([]errVal, len(vs))
	for i, v := range vs {
		out[i] = errVal{ErrorValue: v}
	}
	return out
}

// origins computes function summaries on demand.
type origins struct {
	prog *Program
	flow *flow
	sums map[*ssa.Function]*summary
	// stack holds the functions whose summaries are being computed, the
	// outermost first; onStack maps each to its index.
	stack   []sumFrame
	onStack map[*ssa.Function]int
	// partial is what a recursive call sees of a function of a cycle that
	// is still being summarised: its summary from the cycle's previous
	// pass (none in the first).
	partial map[*ssa.Function]*summary
	// tentative maps a function whose summary in sums was computed inside
	// a cycle not yet done to the index in stack of the cycle's head.
	tentative map[*ssa.Function]int
	reach     map[[2]*types.Package]bool
}

// sumFrame is a function whose summary is being computed.
type sumFrame struct {
	f *ssa.Function
	// low is the lowest index in the stack of a function the summary so
	// far depends on while that function is unfinished (its own index
	// when none): below its own, the function is inside a cycle whose
	// head is there.
	low int
	// members are the functions summarised inside this frame's cycle,
	// which it heads: kept tentatively until the cycle is done.
	members []*ssa.Function
	// changed is set when a member's summary differs from the cycle's
	// previous pass, recursed when a call inside reached this frame's
	// function again.
	changed, recursed bool
}

// maxPasses bounds the passes over one cycle (a summary only grows, and
// appendVals bounds its values, so it settles sooner).
const maxPasses = 8

func newOrigins(p *Program, fl *flow) *origins {
	return &origins{prog: p, flow: fl, sums: map[*ssa.Function]*summary{},
		onStack: map[*ssa.Function]int{}, partial: map[*ssa.Function]*summary{}, tentative: map[*ssa.Function]int{},
		reach: map[[2]*types.Package]bool{}}
}

// lastIsError reports whether sig's last result is the error type.
func lastIsError(sig *types.Signature) bool {
	r := sig.Results()
	return r.Len() > 0 && types.Identical(r.At(r.Len()-1).Type(), errorType)
}

var errorType = types.Universe.Lookup("error").Type()

// summary returns the summary of f (which has a body).
//
// A recursive call — of a function whose summary is being computed, a
// cycle of the call graph — sees that function's summary from the
// cycle's previous pass (empty in the first). The summaries computed
// inside the cycle are kept tentatively, and the cycle's head (the first
// of its functions asked) summarises it again until no member's summary
// changes, so no function's summary depends on which function of its
// cycle was asked first: before, the function reached second inside a
// cycle kept the empty summary its recursive call saw, so a call of it
// offered nothing where a call of its partner offered the cycle's errors
// (TestCycles).
func (o *origins) summary(f *ssa.Function) *summary {
	if i, ok := o.onStack[f]; ok {
		o.stack[i].recursed = true
		o.depend(i)
		if p := o.partial[f]; p != nil {
			return p
		}
		return &summary{}
	}
	if s, ok := o.sums[f]; ok {
		if h, ok := o.tentative[f]; ok {
			o.depend(h)
		}
		return s
	}
	idx := len(o.stack)
	o.onStack[f] = idx
	o.stack = append(o.stack, sumFrame{f: f, low: idx})
	var s *summary
	for pass := 1; ; pass++ {
		s = o.compute(f)
		fr := &o.stack[idx]
		if fr.low < idx || !fr.recursed && len(fr.members) == 0 {
			break // inside an outer cycle, whose head iterates; or no cycle
		}
		changed := fr.changed || !s.same(o.partial[f])
		if !changed || pass >= maxPasses {
			break
		}
		// Another pass over the cycle, from what this one found.
		o.partial[f] = s
		for _, g := range fr.members {
			delete(o.sums, g)
			delete(o.tentative, g)
		}
		fr.members, fr.changed, fr.recursed = nil, false, false
	}
	fr := o.stack[idx]
	o.stack = o.stack[:idx]
	delete(o.onStack, f)
	o.sums[f] = s
	if fr.low < idx {
		// A member of the cycle headed at fr.low: tentative until it is
		// done, as is what this frame summarised.
		head := &o.stack[fr.low]
		if !s.same(o.partial[f]) {
			head.changed = true
		}
		o.partial[f] = s
		head.members = append(append(head.members, f), fr.members...)
		o.tentative[f] = fr.low
		for _, g := range fr.members {
			o.tentative[g] = fr.low
		}
		o.depend(fr.low)
		return s
	}
	// Done: this frame's cycle, if any, is settled.
	delete(o.partial, f)
	for _, g := range fr.members {
		delete(o.tentative, g)
		delete(o.partial, g)
	}
	return s
}

// depend records that the summary being computed (the stack's top)
// depends on the unfinished summary of the function at index i.
func (o *origins) depend(i int) {
	if n := len(o.stack); n > 0 && i < o.stack[n-1].low {
		o.stack[n-1].low = i
	}
}

// compute traces f's error results into a summary, with its own part
// when it calls a func parameter (the callbacks' visits).
func (o *origins) compute(f *ssa.Function) *summary {
	s := o.traceReturns(f, nil)
	if len(s.visits) > 0 {
		// Trace again with the visits' values taken as seen: what is
		// left is the function's own.
		skip := map[ssa.Value]bool{}
		for _, v := range s.visits {
			skip[v.at] = true
		}
		s.own = o.traceReturns(f, skip)
	}
	return s
}

// same reports whether s and t carry the same errors (t may be nil: the
// empty summary).
func (s *summary) same(t *summary) bool {
	if t == nil {
		t = &summary{}
	}
	if s.io != t.io || s.fallible != t.fallible || len(s.visits) != len(t.visits) ||
		!sameVals(s.ioVals, t.ioVals) || !sameVals(s.created, t.created) || !sameVals(s.inherited, t.inherited) {
		return false
	}
	if (s.own == nil) != (t.own == nil) {
		return false
	}
	return s.own == nil || s.own.same(t.own)
}

func sameVals(a, b []errVal) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Expr != b[i].Expr {
			return false
		}
	}
	return true
}

// traceReturns traces the error results of f's returns, taking the values
// of seen as traced already.
func (o *origins) traceReturns(f *ssa.Function, seen map[ssa.Value]bool) *summary {
	s := &summary{}
	if seen == nil {
		seen = map[ssa.Value]bool{}
	}
	if lastIsError(f.Signature) && f.Blocks != nil {
		idx := f.Signature.Results().Len() - 1
		for _, b := range f.Blocks {
			if r, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && idx < len(r.Results) {
				o.trace(s, f, r.Results[idx], seen)
			}
		}
	}
	return s
}

// trace follows an error value of fn back to where it comes from.
func (o *origins) trace(s *summary, fn *ssa.Function, v ssa.Value, seen map[ssa.Value]bool) {
	if seen[v] {
		return
	}
	seen[v] = true
	switch v := v.(type) {
	case *ssa.Const:
		if !v.IsNil() {
			s.fallible = true
		}
	case *ssa.Phi:
		for _, e := range v.Edges {
			o.trace(s, fn, e, seen)
		}
	case *ssa.ChangeInterface:
		o.trace(s, fn, v.X, seen)
	case *ssa.TypeAssert:
		o.trace(s, fn, v.X, seen)
	case *ssa.MakeInterface:
		s.fallible = true
		if ev, ok := typeValue(v.X); ok {
			s.created = appendVals(s.created, ev)
		}
	case *ssa.UnOp:
		s.fallible = true
		if v.Op != token.MUL {
			return
		}
		switch x := v.X.(type) {
		case *ssa.Global:
			if ev, ok := globalValue(x); ok {
				s.created = appendVals(s.created, ev)
			}
		case *ssa.Alloc:
			for _, val := range o.flow.stores[x] {
				o.trace(s, fn, val, seen)
			}
		}
	case *ssa.Call:
		s.visit(fn, v, v)
		o.call(s, v, seen)
	case *ssa.Extract:
		if c, ok := v.Tuple.(*ssa.Call); ok && v.Index == c.Call.Signature().Results().Len()-1 {
			s.visit(fn, v, c)
			o.call(s, c, seen)
		} else {
			s.fallible = true
		}
	default:
		// Parameters, fields, channel receives: propagated from elsewhere.
		s.fallible = true
	}
}

// call adds what the error result of a call can carry.
func (o *origins) call(s *summary, c *ssa.Call, seen map[ssa.Value]bool) {
	s.fallible = true
	r := o.resolve(c)
	if r.io != "" {
		s.addIO(r.io, r.ioVals)
	}
	s.created = appendVals(s.created, r.created...)
	s.inherited = appendVals(s.inherited, r.inherited...)
	for _, w := range r.wrapped {
		o.trace(s, c.Parent(), w, seen)
	}
}

// resolved is what one call can return, seen from the caller.
type resolved struct {
	io     string
	ioVals []errVal
	// created is the new error of a call to errors.New or fmt.Errorf.
	created []errVal
	// calleeCreated are the errors target callees construct in their own
	// bodies.
	calleeCreated []errVal
	// inherited are sentinels of non-target callees.
	inherited []errVal
	// wrapped are error values that fmt.Errorf wraps with %w.
	wrapped []ssa.Value
	// ioShaped marks a call that looks like I/O by its static form (an
	// I/O interface method, a reader/writer wrapper).
	ioShaped bool
	// infallible is set for an I/O-shaped call whose dynamic types all
	// cannot fail.
	infallible bool
}

func (r *resolved) addIO(class string, vals []errVal) {
	if r.io == "" || class == ioDisk {
		r.io = class
	}
	r.ioVals = appendVals(r.ioVals, vals...)
}

// resolve classifies a call instruction.
func (o *origins) resolve(c ssa.CallInstruction) resolved {
	var r resolved
	common := c.Common()
	if f := common.StaticCallee(); f != nil {
		name := f.String()
		switch name {
		case "errors.New":
			if ev, ok := errorsNew(common.Args[0]); ok {
				r.created = append(r.created, ev)
			}
			return r
		case "fmt.Errorf":
			o.errorf(&r, common)
			return r
		}
		if p, ok := prims[name]; ok {
			r.addIO(p.io, public(p.values))
			return r
		}
		if w, ok := wrapperFuncs[name]; ok {
			r.ioShaped = true
			all := true
			for i, a := range w.args {
				if a >= len(common.Args) {
					continue
				}
				if complete, inf := o.viaLeaves(&r, common.Args[a], opMethod(w.ops[i])); !complete || !inf {
					all = false
				}
			}
			if r.io != "" {
				r.ioVals = appendVals(r.ioVals, public(w.extra)...)
			}
			r.infallible = all && r.io == ""
			return r
		}
		if recv := f.Signature.Recv(); recv != nil && len(common.Args) > 0 {
			if wt, ok := wrapperOf(recv.Type()); ok {
				if op, ok := wt.ops[f.Name()]; ok {
					r.ioShaped = true
					complete, inf := o.viaLeaves(&r, common.Args[0], opMethod(op))
					r.infallible = complete && inf && r.io == ""
				}
				return r
			}
		}
		o.viaCall(&r, f, common.Args)
		return r
	}
	if common.IsInvoke() {
		m := common.Method.Name()
		r.ioShaped = ioMethods[m]
		complete, inf := o.viaLeaves(&r, common.Value, m)
		if complete {
			r.infallible = inf && r.io == "" && len(r.calleeCreated) == 0
			return r
		}
		// The local value flow was incomplete: add the call graph's
		// callees to the dynamic types it found.
		callees := o.prog.Callees(c)
		all := len(callees) > 0 && inf
		for _, f := range callees {
			if !o.viaFunc(&r, f) {
				all = false
			}
		}
		r.infallible = all && r.io == "" && len(r.calleeCreated) == 0
		return r
	}
	// Calls of function values: the call graph's callees.
	for _, f := range o.prog.Callees(c) {
		o.viaFunc(&r, f)
	}
	return r
}

func opMethod(op string) string {
	if op == "read" {
		return "Read"
	}
	return "Write"
}

// viaLeaves adds what method m of the dynamic types of v can return. It
// reports whether the value flow was complete (every dynamic type known)
// and whether every leaf it found cannot fail.
func (o *origins) viaLeaves(r *resolved, v ssa.Value, m string) (complete, infallibleAll bool) {
	ls := o.flow.leaves(v)
	complete = ls.complete && len(ls.leaves) > 0
	infallibleAll = true
	for _, name := range sortedLeafNames(ls) {
		l := ls.leaves[name]
		if p, ok := syntheticOp(l.name, m); ok {
			r.addIO(p.io, public(p.values))
			infallibleAll = false
			continue
		}
		if infallible[l.name] {
			continue
		}
		if l.t == nil {
			infallibleAll = false
			continue
		}
		f := o.method(l.t, m)
		if f == nil {
			infallibleAll = false
			continue
		}
		if !o.viaFunc(r, f) {
			infallibleAll = false
		}
	}
	return complete, infallibleAll
}

// method returns method m of type t, or nil.
func (o *origins) method(t types.Type, m string) *ssa.Function {
	sel := o.prog.SSA.MethodSets.MethodSet(t).Lookup(nil, m)
	if sel == nil {
		return nil
	}
	return o.prog.SSA.MethodValue(sel)
}

// viaFunc adds what callee f can return and reports whether f cannot fail.
func (o *origins) viaFunc(r *resolved, f *ssa.Function) bool {
	name := f.String()
	if p, ok := prims[name]; ok {
		r.addIO(p.io, public(p.values))
		return false
	}
	if recv := f.Signature.Recv(); recv != nil && infallible[types.TypeString(recv.Type(), nil)] {
		return true
	}
	if f.Blocks == nil || !lastIsError(f.Signature) {
		return false
	}
	return o.addSummary(r, f, o.summary(f))
}

// addSummary adds what summary s of callee f carries to r and reports
// whether s cannot fail.
func (o *origins) addSummary(r *resolved, f *ssa.Function, s *summary) bool {
	if o.prog.IsTarget(pkgOf(f)) {
		// I/O errors coming out of a target function are hooked deeper,
		// at the I/O call inside it.
		r.calleeCreated = appendVals(r.calleeCreated, s.created...)
	} else {
		if s.io != "" {
			r.addIO(s.io, s.ioVals)
		}
		for _, v := range append(s.created, s.inherited...) {
			if v.sentinel && v.private == nil {
				r.inherited = appendVals(r.inherited, v)
			}
		}
	}
	return !s.fallible
}

func pkgOf(f *ssa.Function) *types.Package {
	if f.Pkg != nil {
		return f.Pkg.Pkg
	}
	if o := f.Origin(); o != nil && o.Pkg != nil {
		return o.Pkg.Pkg
	}
	return nil
}

func sortedLeafNames(ls leafSet) []string {
	names := make([]string, 0, len(ls.leaves))
	for n := range ls.leaves {
		names = append(names, n)
	}
	sortStrings(names)
	return names
}

// errorsNew builds the value of errors.New(arg) for a constant message.
func errorsNew(arg ssa.Value) (errVal, bool) {
	c, ok := arg.(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.String {
		return errVal{}, false
	}
	msg := constant.StringVal(c.Value)
	return errVal{ErrorValue: catalog.ErrorValue{
		Name:    shortName(msg),
		Expr:    "errors.New(" + strconv.Quote(msg) + ")",
		Imports: []string{"errors"},
	}}, true
}

func shortName(msg string) string {
	if len(msg) > 40 {
		msg = msg[:40] + "…"
	}
	return strconv.Quote(msg)
}

// errorf handles fmt.Errorf: with a constant format and no %w it creates
// an error; with %w of sentinels it creates an error wrapping them; with
// %w of other errors it propagates (wraps) them.
func (o *origins) errorf(r *resolved, common *ssa.CallCommon) {
	c, ok := common.Args[0].(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.String {
		return
	}
	format := constant.StringVal(c.Value)
	verbs := parseVerbs(format)
	var args []ssa.Value
	if len(common.Args) > 1 {
		args = varargs(common.Args[1])
	}
	var wrapped []ssa.Value
	var sentinels []errVal
	for i, vb := range verbs {
		if vb != 'w' {
			continue
		}
		if i >= len(args) || args[i] == nil {
			return
		}
		a := args[i]
		if ld, ok := a.(*ssa.UnOp); ok && ld.Op == token.MUL {
			if g, ok := ld.X.(*ssa.Global); ok {
				if ev, ok := globalValue(g); ok {
					sentinels = append(sentinels, ev)
					continue
				}
			}
		}
		wrapped = append(wrapped, a)
	}
	if len(wrapped) > 0 {
		r.wrapped = append(r.wrapped, wrapped...)
		return
	}
	if len(sentinels) == 0 {
		r.created = append(r.created, errVal{ErrorValue: catalog.ErrorValue{
			Name:    shortName(format),
			Expr:    "errors.New(" + strconv.Quote(format) + ")",
			Imports: []string{"errors"},
		}})
		return
	}
	// Keep %w, print the other verbs literally.
	var b strings.Builder
	names := []string{}
	exprs := []string{}
	imports := []string{"fmt"}
	var private *types.Package
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[j]) >= 0 {
			j++
		}
		if j < len(format) && format[j] == 'w' {
			b.WriteString("%w")
			i = j
			continue
		}
		b.WriteString("%%")
	}
	for _, s := range sentinels {
		names = append(names, s.Name)
		exprs = append(exprs, s.Expr)
		imports = append(imports, s.Imports...)
		if s.private != nil {
			private = s.private
		}
	}
	r.created = append(r.created, errVal{ErrorValue: catalog.ErrorValue{
		Name:    strings.Join(names, "+"),
		Expr:    fmt.Sprintf("fmt.Errorf(%s, %s)", strconv.Quote(b.String()), strings.Join(exprs, ", ")),
		Imports: imports,
	}, private: private})
}

// parseVerbs returns the verb letters of a format string, one per
// argument consumed ('*' widths count as their own argument).
func parseVerbs(format string) []byte {
	var vs []byte
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[j]) >= 0 {
			if format[j] == '*' {
				vs = append(vs, '*')
			}
			j++
		}
		if j >= len(format) {
			break
		}
		if format[j] != '%' {
			vs = append(vs, format[j])
		}
		i = j
	}
	return vs
}

// varargs recovers the elements of a variadic ...any slice built by SSA
// (an array Alloc filled by Stores through IndexAddr), unwrapping the
// conversions to any.
func varargs(v ssa.Value) []ssa.Value {
	sl, ok := v.(*ssa.Slice)
	if !ok {
		return nil
	}
	alloc, ok := sl.X.(*ssa.Alloc)
	if !ok {
		return nil
	}
	var out []ssa.Value
	for _, ref := range *alloc.Referrers() {
		ia, ok := ref.(*ssa.IndexAddr)
		if !ok {
			continue
		}
		ic, ok := ia.Index.(*ssa.Const)
		if !ok {
			continue
		}
		i := int(ic.Int64())
		for _, r2 := range *ia.Referrers() {
			st, ok := r2.(*ssa.Store)
			if !ok {
				continue
			}
			for len(out) <= i {
				out = append(out, nil)
			}
			val := st.Val
			if mi, ok := val.(*ssa.MakeInterface); ok {
				val = mi.X
			} else if ci, ok := val.(*ssa.ChangeInterface); ok {
				val = ci.X
			}
			out[i] = val
		}
	}
	return out
}

// globalValue is the value of a package-level error variable.
func globalValue(g *ssa.Global) (errVal, bool) {
	t := g.Type().Underlying().(*types.Pointer).Elem()
	if !types.Implements(t, errorIface) || g.Pkg == nil {
		return errVal{}, false
	}
	pkg := g.Pkg.Pkg
	ev := errVal{ErrorValue: catalog.ErrorValue{
		Name:    g.Name(),
		Expr:    pkg.Name() + "." + g.Name(),
		Imports: []string{pkg.Path()},
	}, sentinel: true}
	if !token.IsExported(g.Name()) {
		ev.private = pkg
	}
	return ev, true
}

var errorIface = errorType.Underlying().(*types.Interface)

// typeValue is a value of a custom error type built with default fields:
// constants keep their value, error-typed fields get a stand-in error.
func typeValue(x ssa.Value) (errVal, bool) {
	t := x.Type()
	ptr := false
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
		ptr = true
	}
	named, ok := t.(*types.Named)
	if !ok || named.TypeParams().Len() > 0 || named.TypeArgs().Len() > 0 {
		return errVal{}, false
	}
	obj := named.Obj()
	pkg := obj.Pkg()
	if pkg == nil {
		return errVal{}, false
	}
	ev := errVal{ErrorValue: catalog.ErrorValue{Name: obj.Name(), Imports: []string{pkg.Path()}}}
	if !obj.Exported() {
		ev.private = pkg
	}
	q := pkg.Name() + "." + obj.Name()
	switch u := named.Underlying().(type) {
	case *types.Struct:
		var fields []string
		consts := constFields(x)
		for i := range u.NumFields() {
			f := u.Field(i)
			if c, ok := consts[i]; ok && !f.Embedded() {
				if !f.Exported() && ev.private == nil {
					ev.private = pkg
				}
				fields = append(fields, f.Name()+": "+c)
				continue
			}
			if !types.Identical(f.Type(), errorType) || f.Embedded() || pkg.Name() == "errors" {
				continue
			}
			if !f.Exported() {
				if ev.private == nil && pkg.Path() != "" {
					ev.private = pkg
				}
			}
			fields = append(fields, fmt.Sprintf("%s: errors.New(%q)", f.Name(), strings.ToLower(obj.Name())))
		}
		if len(fields) > 0 {
			ev.Imports = append(ev.Imports, "errors")
		}
		ev.Expr = q + "{" + strings.Join(fields, ", ") + "}"
		if ptr {
			ev.Expr = "&" + ev.Expr
		}
	default:
		if ptr {
			return errVal{}, false
		}
		c, ok := x.(*ssa.Const)
		if !ok || c.Value == nil {
			return errVal{}, false
		}
		ev.Expr = q + "(" + c.Value.ExactString() + ")"
	}
	return ev, true
}

// constFields returns the fields of a composite literal &T{...} (an SSA
// Alloc) that are set to basic constants, as Go literals by field index.
func constFields(x ssa.Value) map[int]string {
	alloc, ok := x.(*ssa.Alloc)
	if !ok {
		return nil
	}
	out := map[int]string{}
	for _, ref := range *alloc.Referrers() {
		fa, ok := ref.(*ssa.FieldAddr)
		if !ok {
			continue
		}
		for _, r2 := range *fa.Referrers() {
			st, ok := r2.(*ssa.Store)
			if !ok || st.Addr != fa {
				continue
			}
			c, ok := st.Val.(*ssa.Const)
			if !ok || c.Value == nil {
				continue
			}
			if _, basic := c.Type().(*types.Basic); !basic {
				continue // a named constant type would need its package
			}
			if c.Value.Kind() == constant.String {
				out[fa.Field] = strconv.Quote(constant.StringVal(c.Value))
			} else {
				out[fa.Field] = c.Value.ExactString()
			}
		}
	}
	return out
}
