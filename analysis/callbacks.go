package analysis

import (
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A callback is a function argument whose errors a callee returns: bbolt's
// (*Bucket).ForEach(fn) returns what fn returns, (*DB).View(fn) and
// Update(fn) too, besides their own errors. The call graph is
// context-insensitive: the dynamic call of fn inside the callee has every
// function passed to it anywhere in the program as callee, so a summary
// of the callee carries the errors of all of them. At a static call of a
// non-target callee, viaCall takes the callee's own summary and the
// errors of the functions this call passes instead.

// visit is a call, in a function's body, of one of its func-typed
// parameters, whose error the function can return.
type visit struct {
	// param is the parameter's index in the function's Params (a
	// method's receiver is 0), which is the index of the argument at a
	// static call.
	param int
	// at is the value the error was traced from: the call, or the
	// Extract of its error result.
	at ssa.Value
}

// visit records at as a visit when c calls one of fn's parameters.
func (s *summary) visit(fn *ssa.Function, at ssa.Value, c *ssa.Call) {
	p, ok := c.Call.Value.(*ssa.Parameter)
	if !ok || c.Call.IsInvoke() || p.Parent() != fn {
		return
	}
	if i := paramIndex(p); i >= 0 {
		s.visits = append(s.visits, visit{param: i, at: at})
	}
}

// viaCall is viaFunc at a static call of f with args: where f is a
// non-target function whose errors come in part from calling its function
// parameters, the functions this call passes for them stand for their
// callees. Where any of those arguments cannot be resolved (an interface
// method's result, a caller's parameter no call in the program binds) it
// is viaFunc. A nil args is viaFunc too.
func (o *origins) viaCall(r *resolved, f *ssa.Function, args []ssa.Value) bool {
	if args == nil || f.Blocks == nil || !lastIsError(f.Signature) || o.prog.IsTarget(pkgOf(f)) {
		return o.viaFunc(r, f)
	}
	if _, ok := prims[f.String()]; ok {
		return o.viaFunc(r, f)
	}
	if recv := f.Signature.Recv(); recv != nil && infallible[types.TypeString(recv.Type(), nil)] {
		return o.viaFunc(r, f)
	}
	s := o.summary(f)
	if s.own == nil {
		return o.addSummary(r, f, s)
	}
	w := callbackWalk{o: o, seen: map[ssa.Value]bool{}, fns: map[*ssa.Function]bool{}}
	for _, v := range s.visits {
		if v.param >= len(args) || !w.funcs(args[v.param], 0, false) {
			return o.viaFunc(r, f)
		}
	}
	cannotFail := o.addSummary(r, f, s.own)
	for _, g := range w.sorted() {
		if w.fns[g] && o.prog.IsTarget(pkgOf(g)) {
			// A target function the caller's caller passes: its I/O is
			// hooked inside it, and its constructed errors are offered
			// only where it is passed itself, not at a call every caller
			// of the caller shares.
			cannotFail = false
			continue
		}
		if !o.viaFunc(r, g) {
			cannotFail = false
		}
	}
	return cannotFail
}

// callbackWalk finds the functions a func-typed value can be (funcs).
type callbackWalk struct {
	o    *origins
	seen map[ssa.Value]bool
	// fns are the functions found, true for those found only through a
	// parameter of the caller (forwarded from the caller's callers).
	fns map[*ssa.Function]bool
}

func (w *callbackWalk) add(f *ssa.Function, forwarded bool) {
	if fw, ok := w.fns[f]; !ok || fw && !forwarded {
		w.fns[f] = forwarded
	}
}

// sorted returns the functions found in a stable order.
func (w *callbackWalk) sorted() []*ssa.Function {
	out := make([]*ssa.Function, 0, len(w.fns))
	for f := range w.fns {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// funcs adds the functions v can be, following the local value flow:
// function literals and closures, method values, phis, local cells,
// struct fields and globals (every store in the program to them:
// forwarded), closures' free variables (their bindings) and parameters
// (the arguments of every call of the function in the call graph:
// forwarded). It reports
// false when some way the value is made was not followed, or a parameter
// has no caller in the program.
func (w *callbackWalk) funcs(v ssa.Value, depth int, forwarded bool) bool {
	if w.seen[v] {
		return true // a cycle adds nothing new
	}
	w.seen[v] = true
	if depth > maxFlowDepth {
		return false
	}
	d := depth + 1
	switch v := v.(type) {
	case *ssa.Function:
		w.add(w.o.boundMethod(v), forwarded)
		return true
	case *ssa.MakeClosure:
		return w.funcs(v.Fn, d, forwarded)
	case *ssa.Const:
		return v.IsNil() // calling a nil func panics: no error
	case *ssa.ChangeType:
		return w.funcs(v.X, d, forwarded)
	case *ssa.Phi:
		all := true
		for _, e := range v.Edges {
			if !w.funcs(e, d, forwarded) {
				all = false
			}
		}
		return all
	case *ssa.Parameter:
		n := w.o.prog.Graph.Nodes[v.Parent()]
		idx := paramIndex(v)
		if n == nil || idx < 0 || len(n.In) == 0 || len(n.In) > 64 {
			return false
		}
		all := true
		for _, e := range n.In {
			if e.Site == nil {
				return false
			}
			arg := argAt(e.Site.Common(), idx)
			if arg == nil || !w.funcs(arg, d, true) {
				all = false
			}
		}
		return all
	case *ssa.FreeVar:
		return w.o.bindings(v, func(b ssa.Value) bool { return w.funcs(b, d, forwarded) })
	case *ssa.UnOp:
		if v.Op != token.MUL {
			return false
		}
		if fv, ok := v.X.(*ssa.FreeVar); ok {
			// A captured variable: the stores to the cells bound to it.
			return w.o.bindings(fv, func(b ssa.Value) bool { return w.stored(b, d, forwarded) })
		}
		return w.stored(v.X, d, forwarded)
	}
	return false
}

// stored follows the functions stored at addr: a local cell, a global or
// a struct field (all stores to the field in the program).
func (w *callbackWalk) stored(addr ssa.Value, d int, forwarded bool) bool {
	if _, local := addr.(*ssa.Alloc); !local {
		// A field or a global: stores anywhere in the program, like a
		// parameter's callers.
		forwarded = true
	}
	k := addrKey(addr)
	if k == nil {
		return false
	}
	vals := w.o.flow.stores[k]
	if len(vals) == 0 {
		return false
	}
	all := true
	for _, val := range vals {
		if !w.funcs(val, d, forwarded) {
			all = false
		}
	}
	return all
}

// bindings calls follow with what every MakeClosure of fv's function binds
// to fv, and reports whether all of them were followed.
func (o *origins) bindings(fv *ssa.FreeVar, follow func(ssa.Value) bool) bool {
	idx := freeVarIndex(fv)
	mcs := o.flow.closures[fv.Parent()]
	if idx < 0 || len(mcs) == 0 {
		return false
	}
	all := true
	for _, mc := range mcs {
		if idx >= len(mc.Bindings) || !follow(mc.Bindings[idx]) {
			all = false
		}
	}
	return all
}

// boundMethod returns the method a bound method wrapper (the function of
// a method value x.M) calls, where it has a body; else f.
func (o *origins) boundMethod(f *ssa.Function) *ssa.Function {
	if !strings.HasPrefix(f.Synthetic, "bound method wrapper for ") {
		return f
	}
	m, ok := f.Object().(*types.Func)
	if !ok {
		return f
	}
	if g := o.prog.SSA.FuncValue(m); g != nil && g.Blocks != nil {
		return g
	}
	return f
}
