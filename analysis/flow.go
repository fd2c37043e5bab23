package analysis

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// leaf is one dynamic type a value can hold after known wrappers (bufio,
// io.LimitReader, ...) are looked through: a concrete type, or a synthetic
// name for a conn or listener made inside the standard library.
type leaf struct {
	t    types.Type
	name string // types.TypeString(t) or a synthetic leaf
}

// leafSet is a set of leaves with a completeness flag: complete means every
// way the value can be defined was followed.
type leafSet struct {
	leaves   map[string]leaf
	complete bool
}

func (s *leafSet) add(l leaf) {
	if s.leaves == nil {
		s.leaves = map[string]leaf{}
	}
	s.leaves[l.name] = l
}

func (s *leafSet) union(o leafSet) {
	for _, l := range o.leaves {
		s.add(l)
	}
	if !o.complete {
		s.complete = false
	}
}

// fieldKey identifies a struct field program-wide.
type fieldKey struct {
	strct string
	index int
}

// flow answers "which dynamic types can this value hold" by following SSA
// value flow: through interface conversions, phis, call results, struct
// fields (field-based: all stores to the field anywhere), globals, local
// cells, parameters (all call sites in the call graph) and closure
// bindings. It is bounded and conservative: anything it cannot follow makes
// the answer incomplete.
type flow struct {
	prog     *Program
	stores   map[any][]ssa.Value // field key, *ssa.Global or *ssa.Alloc -> stored values
	closures map[*ssa.Function][]*ssa.MakeClosure
	memo     map[ssa.Value]leafSet
	active   map[ssa.Value]bool
}

const maxFlowDepth = 10

func newFlow(p *Program, funcs []*ssa.Function) *flow {
	fl := &flow{
		prog:     p,
		stores:   map[any][]ssa.Value{},
		closures: map[*ssa.Function][]*ssa.MakeClosure{},
		memo:     map[ssa.Value]leafSet{},
		active:   map[ssa.Value]bool{},
	}
	for _, f := range funcs {
		for _, b := range f.Blocks {
			for _, in := range b.Instrs {
				switch in := in.(type) {
				case *ssa.Store:
					if k := addrKey(in.Addr); k != nil {
						fl.stores[k] = append(fl.stores[k], in.Val)
					}
				case *ssa.MakeClosure:
					if fn, ok := in.Fn.(*ssa.Function); ok {
						fl.closures[fn] = append(fl.closures[fn], in)
					}
				}
			}
		}
	}
	return fl
}

// addrKey returns the key under which stores to addr are indexed.
func addrKey(addr ssa.Value) any {
	switch a := addr.(type) {
	case *ssa.FieldAddr:
		return fieldKeyOf(a)
	case *ssa.Global:
		return a
	case *ssa.Alloc:
		return a
	}
	return nil
}

func fieldKeyOf(a *ssa.FieldAddr) fieldKey {
	return fieldKey{types.TypeString(pointee(a.X.Type()), nil), a.Field}
}

// pointee returns the element type of a pointer type (or of a type
// parameter whose core type is a pointer), else t.
func pointee(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	if tp, ok := t.(*types.TypeParam); ok {
		if it, ok := tp.Constraint().Underlying().(*types.Interface); ok && it.NumEmbeddeds() == 1 {
			if p, ok := it.EmbeddedType(0).Underlying().(*types.Pointer); ok {
				return p.Elem()
			}
		}
	}
	return t
}

func isInterface(t types.Type) bool { return types.IsInterface(t) }

// wrapperOf returns the wrapper description of t, if t is a known wrapper.
func wrapperOf(t types.Type) (wrapperType, bool) {
	w, ok := wrapperTypes[types.TypeString(t, nil)]
	return w, ok
}

// leaves returns the dynamic types v can hold.
func (fl *flow) leaves(v ssa.Value) leafSet {
	return fl.walk(v, 0)
}

func (fl *flow) walk(v ssa.Value, depth int) leafSet {
	if isStdio(v) {
		// The standard streams are a terminal or a pipe, not the disk
		// or network I/O of the system under test.
		var s leafSet
		s.add(leaf{name: leafStdio})
		return s
	}
	t := v.Type()
	if !isInterface(t) {
		if _, ok := wrapperOf(t); !ok {
			var s leafSet
			s.complete = true
			s.add(leaf{t: t, name: types.TypeString(t, nil)})
			return s
		}
	}
	if depth > maxFlowDepth {
		return leafSet{}
	}
	if s, ok := fl.memo[v]; ok {
		return s
	}
	if fl.active[v] {
		return leafSet{complete: true} // a cycle adds nothing new
	}
	fl.active[v] = true
	s := fl.walk1(v, depth)
	delete(fl.active, v)
	fl.memo[v] = s
	return s
}

func (fl *flow) walk1(v ssa.Value, depth int) leafSet {
	d := depth + 1
	switch v := v.(type) {
	case *ssa.MakeInterface:
		return fl.walk(v.X, d)
	case *ssa.ChangeInterface:
		return fl.walk(v.X, d)
	case *ssa.ChangeType:
		return fl.walk(v.X, d)
	case *ssa.TypeAssert:
		return fl.walk(v.X, d)
	case *ssa.Const:
		return leafSet{complete: true} // nil
	case *ssa.Phi:
		s := leafSet{complete: true}
		for _, e := range v.Edges {
			s.union(fl.walk(e, d))
		}
		return s
	case *ssa.Call:
		return fl.callResult(v, 0, d)
	case *ssa.Extract:
		if c, ok := v.Tuple.(*ssa.Call); ok {
			return fl.callResult(c, v.Index, d)
		}
		if ta, ok := v.Tuple.(*ssa.TypeAssert); ok && v.Index == 0 {
			return fl.walk(ta.X, d)
		}
	case *ssa.UnOp:
		if v.Op == token.MUL {
			return fl.load(v.X, d)
		}
	case *ssa.Parameter:
		return fl.param(v, d)
	case *ssa.FreeVar:
		return fl.freeVar(v, d)
	}
	return leafSet{}
}

// load follows a load from addr to the values stored there.
func (fl *flow) load(addr ssa.Value, d int) leafSet {
	if fa, ok := addr.(*ssa.FieldAddr); ok {
		k := fieldKeyOf(fa)
		// The body of an HTTP response or request is a network stream.
		if (k.strct == "net/http.Response" || k.strct == "net/http.Request") && isBodyField(fa) {
			var s leafSet
			s.complete = true
			s.add(leaf{name: leafNetConn})
			return s
		}
	}
	if fv, ok := addr.(*ssa.FreeVar); ok {
		return fl.bindings(fv, func(b ssa.Value) leafSet { return fl.load(b, d) })
	}
	k := addrKey(addr)
	if k == nil {
		return leafSet{}
	}
	vals := fl.stores[k]
	if len(vals) == 0 {
		return leafSet{}
	}
	s := leafSet{complete: true}
	for _, val := range vals {
		s.union(fl.walk(val, d))
	}
	return s
}

func isBodyField(fa *ssa.FieldAddr) bool {
	st, ok := pointee(fa.X.Type()).Underlying().(*types.Struct)
	return ok && st.Field(fa.Field).Name() == "Body"
}

// callResult follows result idx of a call into the callees' returns.
func (fl *flow) callResult(c *ssa.Call, idx int, d int) leafSet {
	common := c.Common()
	if f := common.StaticCallee(); f != nil {
		name := f.String()
		rt := resultType(f.Signature, idx)
		if w, ok := wrapperOf(rt); ok {
			if arg, ok := w.ctors[name]; ok && arg < len(common.Args) {
				return fl.walk(common.Args[arg], d)
			}
		}
	}
	callees := fl.prog.Callees(c)
	s := leafSet{complete: true}
	if common.IsInvoke() && isStd(common.Method.Pkg()) {
		// A conn or listener handed out by a standard interface (e.g.
		// net.Listener.Accept) whose implementation has no body here.
		if lf, ok := stdResultLeaf[typeString(resultType(common.Signature(), idx))]; ok {
			s.add(leaf{name: lf})
		}
	}
	if len(callees) == 0 && len(s.leaves) == 0 {
		return leafSet{}
	}
	for _, f := range callees {
		if f.Blocks == nil {
			if lf, ok := stdResultLeaf[typeString(resultType(f.Signature, idx))]; ok && isStd(pkgOf(f)) {
				s.add(leaf{name: lf})
				continue
			}
			s.complete = false
			continue
		}
		for _, b := range f.Blocks {
			if r, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && idx < len(r.Results) {
				s.union(fl.walk(r.Results[idx], d))
			}
		}
	}
	return s
}

func typeString(t types.Type) string {
	if t == nil {
		return ""
	}
	return types.TypeString(t, nil)
}

func resultType(sig *types.Signature, idx int) types.Type {
	if idx < sig.Results().Len() {
		return sig.Results().At(idx).Type()
	}
	return nil
}

// param follows a parameter to the arguments of every call site.
func (fl *flow) param(p *ssa.Parameter, d int) leafSet {
	fn := p.Parent()
	idx := paramIndex(p)
	var s leafSet
	if typeString(p.Type()) == "net/http.ResponseWriter" {
		// A handler's response writer is made by net/http around the
		// client's conn; callers in the program may add others.
		s.add(leaf{name: leafHTTPResponse})
	}
	n := fl.prog.Graph.Nodes[fn]
	if idx < 0 || n == nil || len(n.In) == 0 || len(n.In) > 64 {
		return s
	}
	s.complete = true
	for _, e := range n.In {
		if e.Site == nil {
			s.complete = false
			continue
		}
		arg := argAt(e.Site.Common(), idx)
		if arg == nil {
			s.complete = false
			continue
		}
		s.union(fl.walk(arg, d))
	}
	return s
}

// paramIndex returns the index of p in its function's Params, or -1.
func paramIndex(p *ssa.Parameter) int {
	for i, q := range p.Parent().Params {
		if q == p {
			return i
		}
	}
	return -1
}

// argAt returns the argument a call passes for the callee's parameter idx
// (an invoked method's receiver being its parameter 0), or nil.
func argAt(common *ssa.CallCommon, idx int) ssa.Value {
	switch {
	case common.IsInvoke() && idx == 0:
		return common.Value
	case common.IsInvoke():
		if idx-1 < len(common.Args) {
			return common.Args[idx-1]
		}
	case idx >= 0 && idx < len(common.Args):
		return common.Args[idx]
	}
	return nil
}

// freeVar follows a closure's free variable to the bindings of every
// MakeClosure of the closure.
func (fl *flow) freeVar(v *ssa.FreeVar, d int) leafSet {
	return fl.bindings(v, func(b ssa.Value) leafSet { return fl.walk(b, d) })
}

func (fl *flow) bindings(v *ssa.FreeVar, follow func(ssa.Value) leafSet) leafSet {
	fn := v.Parent()
	idx := freeVarIndex(v)
	mcs := fl.closures[fn]
	if idx < 0 || len(mcs) == 0 {
		return leafSet{}
	}
	s := leafSet{complete: true}
	for _, mc := range mcs {
		if idx < len(mc.Bindings) {
			s.union(follow(mc.Bindings[idx]))
		}
	}
	return s
}

// freeVarIndex returns the index of v in its function's FreeVars, or -1.
func freeVarIndex(v *ssa.FreeVar) int {
	for i, q := range v.Parent().FreeVars {
		if q == v {
			return i
		}
	}
	return -1
}

// isStdio reports whether v is a load of os.Stdin, os.Stdout or os.Stderr.
func isStdio(v ssa.Value) bool {
	ld, ok := v.(*ssa.UnOp)
	if !ok || ld.Op != token.MUL {
		return false
	}
	g, ok := ld.X.(*ssa.Global)
	return ok && g.Pkg != nil && g.Pkg.Pkg.Path() == "os" &&
		(g.Name() == "Stdout" || g.Name() == "Stderr" || g.Name() == "Stdin")
}

// isStd reports whether pkg belongs to the standard library.
func isStd(pkg *types.Package) bool {
	if pkg == nil {
		return false
	}
	p := pkg.Path()
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			break
		}
		if p[i] == '.' {
			return false
		}
	}
	return true
}
