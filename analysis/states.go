package analysis

import (
	"go/ast"
	"go/token"
	"go/types"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
)

// Counter names of the states pass.
const (
	CountStateMachines = "state_machines" // task units with at least one state
	CountStates        = "states"
)

// StatesPass infers Legolas abstract states (NSDI'24 §4, Algorithm 1):
//
//   - task units are the functions started by go statements in target
//     packages (named functions, methods and closures, resolved through the
//     call graph) that run their branches more than once: long-running
//     ones (an unbounded loop) and short ones started over and over (from
//     an unbounded loop or code a long-running unit reaches);
//   - state variables are the fields of target structs that are written
//     somewhere after construction and read through the instance (a
//     method's receiver, a captured variable, a pointer parameter of a
//     plain function), written package-level variables, the locals an
//     unbounded loop carries across iterations, and the captured variables
//     a goroutine writes; errors, functions and foreign types other than
//     sync/atomic values are not state;
//   - a branch (if/else, switch and type switch clause, select case on a
//     local channel chosen by state) inside a task unit, its closures, or a
//     method it calls on its instance (up to maxCallDepth calls deep), whose
//     condition depends on a state variable directly or through SSA def-use
//     within the function, and whose block performs an action (a call, a
//     send, a go/defer, or a state write), starts an abstract state; so
//     does the rest of a statement list after a guard clause (an if
//     without else whose block always leaves), Go's spelling of an else;
//   - every task unit with states also has an entry state at its task
//     function's first statement.
//
// See docs/analysis.md, "Abstract states".
//
// Its result is *States; it adds the counters state_machines and states.
var StatesPass = &Pass{
	Name:       "states",
	Doc:        "Legolas abstract states: state-dependent branches with actions in goroutine task units",
	ResultType: reflect.TypeFor[*States](),
	Run:        runStates,
}

// States is the result of StatesPass: the task units and their abstract
// states; a state's Task is the 1-based position of its task in Tasks.
type States struct {
	Tasks  []catalog.Task
	States []catalog.State
}

func (s *States) contribute(p *catalog.Parts) {
	base := uint32(len(p.Tasks))
	p.Tasks = append(p.Tasks, s.Tasks...)
	for _, st := range s.States {
		st.Task += base
		p.States = append(p.States, st)
	}
}

// stateInfo is the analysis state of the pass.
type stateInfo struct {
	p *Program
	// written holds the struct fields (origins) stored to outside a
	// composite literal or a fresh local, and globals stored outside init.
	written map[*types.Var]bool
	globals map[*ssa.Global]bool
	// getters memoizes whether a function's results depend on state:
	// 1 in progress, 2 yes, 3 no.
	getters map[*ssa.Function]int
	// refs maps, per function, an expression to its SSA value (debug
	// mode).
	refs map[*ssa.Function]map[ast.Expr]ssa.Value
	// done holds the block positions that already start a state, so a
	// method called from two tasks gets one hook.
	done map[token.Pos]bool
}

func runStates(u *Unit) (any, error) {
	ctx, p := u.Context, u.Prog
	res := &States{}
	s := &stateInfo{p: p, written: map[*types.Var]bool{}, globals: map[*ssa.Global]bool{},
		getters: map[*ssa.Function]int{}, refs: map[*ssa.Function]map[ast.Expr]ssa.Value{}, done: map[token.Pos]bool{}}
	var funcs []*ssa.Function
	for _, sp := range p.Targets {
		funcs = append(funcs, targetFunctions(sp)...)
	}
	for _, f := range funcs {
		if !generated(p.Fset, f) {
			s.collectWrites(f)
		}
	}
	tasks, spawns := s.findTasks(funcs)
	taskSet := map[*ssa.Function]bool{}
	for _, t := range tasks {
		taskSet[t] = true
	}
	for _, t := range s.units(tasks, spawns, taskSet) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pkg := pkgOf(t.fn)
		fname := t.fn.RelString(pkg)
		task := catalog.Task{ID: pkg.Path() + "." + fname, Pkg: pkg.Path(), Func: fname}
		var states []catalog.State
		for _, g := range t.funcs {
			states = append(states, s.statesIn(g)...)
		}
		slog.Debug("states: task unit", "task", task.ID, "long", t.long, "states", len(states))
		if len(states) == 0 {
			continue
		}
		states = append([]catalog.State{s.entryState(t.fn)}, states...)
		res.Tasks = append(res.Tasks, task)
		ti := len(res.Tasks)
		for i := range states {
			states[i].Task = uint32(ti)
		}
		res.States = append(res.States, states...)
		u.Count(pkg.Path(), CountStateMachines, 1)
		for _, st := range states {
			u.Count(st.Pkg, CountStates, 1)
		}
	}
	return res, nil
}

// EntryCond is the condition of a task unit's first abstract state, the
// one its goroutine is in from its start until it takes a state branch
// (Algorithm 1 starts asv_locations with the task method's first
// instruction).
const EntryCond = "entry"

// entryState returns the first state of task function t, at its body's
// opening brace.
func (s *stateInfo) entryState(t *ssa.Function) catalog.State {
	pkg := pkgOf(t)
	fname := t.RelString(pkg)
	lbrace := funcBody(t).Lbrace
	pos := s.p.Fset.Position(lbrace)
	file, _ := filepath.Abs(pos.Filename)
	return catalog.State{
		ID:   pkg.Path() + "." + fname + "#" + EntryCond,
		Cond: EntryCond,
		File: file, Line: pos.Line, Col: pos.Column,
		Inst: s.instExpr(t, lbrace+1),
		Pkg:  pkg.Path(),
		Func: fname,
	}
}

// unit is a task unit: a function started by go statements, the
// functions whose states it owns (itself, the closures it defines, the
// methods it calls on its instance), and whether it runs long.
type unit struct {
	fn    *ssa.Function
	funcs []*ssa.Function
	long  bool
}

// spawn is a place that starts a task: a go statement or a call of a
// wrapper that starts its argument (GoAttach, WaitGroup.Go).
type spawn struct {
	in  *ssa.Function
	pos token.Pos
}

// units returns the task units among tasks that are state machines, in
// the order they claim states (a function reached from two units gives
// its states to the first):
//
//   - first the long-running ones: a task with an unbounded loop in its
//     body or in a method it calls, whose branches see the state change
//     from one iteration to the next;
//   - then the short-lived tasks started over and over: from inside an
//     unbounded loop, or from a function a long-running task reaches (a
//     goroutine per applied entry, per lease revocation, per snapshot).
//     Each run sees the state of the system at its start, so its
//     branches are states as well (Legolas's short-lived runnables).
//
// A task started once (serving a listener, a start-up job) is dropped:
// its branches run once and follow the configuration.
func (s *stateInfo) units(tasks []*ssa.Function, spawns map[*ssa.Function][]spawn, taskSet map[*ssa.Function]bool) []unit {
	var long, short []unit
	reached := map[*ssa.Function]bool{}
	for _, t := range tasks {
		u := s.reach(t, taskSet)
		if u.long {
			long = append(long, u)
			for _, g := range u.funcs {
				reached[g] = true
			}
			continue
		}
		short = append(short, u)
	}
	out := long
	for _, u := range short {
		for _, sp := range spawns[u.fn] {
			if reached[sp.in] || s.inUnboundedLoop(sp.in, sp.pos) {
				out = append(out, u)
				break
			}
		}
	}
	return out
}

// inUnboundedLoop reports whether pos lies in one of f's unbounded loops.
func (s *stateInfo) inUnboundedLoop(f *ssa.Function, pos token.Pos) bool {
	for _, l := range s.unboundedLoops(f) {
		if l[0] <= pos && pos < l[1] {
			return true
		}
	}
	return false
}

// collectWrites records the fields and globals f writes.
func (s *stateInfo) collectWrites(f *ssa.Function) {
	initFn := isPackageInit(f)
	mark := func(addr ssa.Value) {
		switch a := addr.(type) {
		case *ssa.FieldAddr:
			if !freshBase(a) {
				if v := fieldVar(a.X.Type(), a.Field, true); v != nil {
					s.written[v.Origin()] = true
				}
			}
		case *ssa.Global:
			if !initFn {
				s.globals[a] = true
			}
		}
	}
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			switch in := in.(type) {
			case *ssa.Store:
				mark(in.Addr)
			case *ssa.MapUpdate:
				if l, ok := in.Map.(*ssa.UnOp); ok && l.Op == token.MUL {
					mark(l.X)
				}
			case ssa.CallInstruction:
				// &x.f passed to a call (atomic stores, methods
				// with pointer receivers on value fields).
				c := in.Common()
				args := c.Args
				if c.IsInvoke() {
					args = append([]ssa.Value{c.Value}, args...)
				}
				for _, a := range args {
					if fa, ok := a.(*ssa.FieldAddr); ok {
						mark(fa)
					}
				}
			}
		}
	}
}

// generated reports whether f is declared in generated code (protobuf
// messages and gateways): its branches and writes are not the target's
// state machine.
func generated(fset *token.FileSet, f *ssa.Function) bool {
	name := fset.Position(f.Pos()).Filename
	return strings.HasSuffix(name, ".pb.go") || strings.HasSuffix(name, ".pb.gw.go")
}

// freshBase reports whether a field address lies in a struct allocated by
// the same function (a composite literal or a local variable).
func freshBase(fa *ssa.FieldAddr) bool {
	x := fa.X
	for {
		switch v := x.(type) {
		case *ssa.Alloc:
			return true
		case *ssa.UnOp:
			// A local pointer variable kept on the heap (captured by
			// a closure) that only ever holds fresh structs.
			a, ok := v.X.(*ssa.Alloc)
			if !ok || v.Op != token.MUL {
				return false
			}
			fresh := false
			for _, r := range *a.Referrers() {
				if st, ok := r.(*ssa.Store); ok && st.Addr == a {
					if _, isAlloc := st.Val.(*ssa.Alloc); !isAlloc {
						return false
					}
					fresh = true
				}
			}
			return fresh
		case *ssa.FieldAddr:
			x = v.X
		case *ssa.IndexAddr:
			x = v.X
		default:
			return false
		}
	}
}

// fieldVar returns field i of the struct t points to (ptr) or is.
func fieldVar(t types.Type, i int, ptr bool) *types.Var {
	if ptr {
		p, ok := t.Underlying().(*types.Pointer)
		if !ok {
			return nil
		}
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok || i >= st.NumFields() {
		return nil
	}
	return st.Field(i)
}

func isErrorValue(t types.Type) bool {
	return types.Identical(t, errorType) || types.Implements(t, errorIface) && !isBasicType(t)
}

func isBasicType(t types.Type) bool {
	_, ok := t.Underlying().(*types.Basic)
	return ok
}

// stateField reports whether field v is a state variable.
func (s *stateInfo) stateField(v *types.Var) bool {
	if v == nil || !s.written[v.Origin()] || v.Pkg() == nil || !s.p.IsTarget(v.Pkg()) {
		return false
	}
	return s.stateType(v.Type())
}

// stateType reports whether values of type t can be state: basic values,
// slices, maps, arrays, channels, structs and pointers (a *semver.Version,
// a time.Time), sync/atomic values; not errors, functions, contexts, locks,
// loggers or foreign interfaces.
func (s *stateInfo) stateType(t types.Type) bool {
	if isErrorValue(t) {
		return false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		pkg := n.Obj().Pkg()
		if pkg.Path() == "sync/atomic" {
			return true
		}
		if _, basic := t.Underlying().(*types.Basic); basic {
			return true
		}
		if noStatePackages[pkg.Path()] || !s.p.IsTarget(pkg) && isInterface(t) {
			// Contexts, locks, loggers; and foreign interfaces
			// (an io.Closer, a grpc stream) are plumbing.
			return false
		}
	}
	switch t.Underlying().(type) {
	case *types.Signature:
		return false
	case *types.Basic:
		return t.Underlying().(*types.Basic).Kind() != types.UnsafePointer
	}
	return true
}

// noStatePackages hold types whose values are plumbing, never state.
var noStatePackages = map[string]bool{
	"context": true, "sync": true, "log": true, "log/slog": true,
	"go.uber.org/zap": true, "go.uber.org/zap/zapcore": true,
}

// findTasks returns the functions started by go statements in target
// code, sorted by name, with closures that only call a function value
// replaced by the functions passed for it (wrappers such as GoAttach),
// and the places that start each.
func (s *stateInfo) findTasks(funcs []*ssa.Function) ([]*ssa.Function, map[*ssa.Function][]spawn) {
	set := map[*ssa.Function]bool{}
	spawns := map[*ssa.Function][]spawn{}
	var from *ssa.Function
	var at token.Pos
	add := func(f *ssa.Function) {
		if f != nil && f.Blocks != nil && f.Synthetic == "" && pkgOf(f) != nil && s.p.IsTarget(pkgOf(f)) && funcBody(f) != nil {
			set[f] = true
			spawns[f] = append(spawns[f], spawn{in: from, pos: at})
		}
	}
	// wrappers maps a function to the index of its parameter that it
	// starts in a goroutine.
	wrappers := map[*ssa.Function]int{}
	for _, f := range funcs {
		for _, b := range f.Blocks {
			for _, in := range b.Instrs {
				g, ok := in.(*ssa.Go)
				if !ok {
					continue
				}
				if i := startedParam(f, g); i >= 0 {
					wrappers[f] = i
					continue
				}
				from, at = f, g.Pos()
				for _, c := range s.p.Callees(g) {
					add(c)
				}
			}
		}
	}
	for _, f := range funcs {
		for _, b := range f.Blocks {
			for _, in := range b.Instrs {
				c, ok := in.(*ssa.Call)
				if !ok {
					continue
				}
				var arg ssa.Value
				if w := c.Call.StaticCallee(); w != nil {
					if i, ok := wrappers[w]; ok && i < len(c.Call.Args) {
						arg = c.Call.Args[i]
					}
				}
				if w := c.Call.StaticCallee(); w != nil && w.Name() == "Go" && w.Signature.Recv() != nil &&
					strings.HasSuffix(w.Signature.Recv().Type().String(), "sync.WaitGroup") && len(c.Call.Args) == 2 {
					arg = c.Call.Args[1]
				}
				from, at = f, c.Pos()
				switch a := arg.(type) {
				case *ssa.Function:
					add(a)
				case *ssa.MakeClosure:
					fn := a.Fn.(*ssa.Function)
					if obj, ok := fn.Object().(*types.Func); ok && fn.Synthetic != "" {
						// A bound method value (s.purgeFile).
						fn = s.p.SSA.FuncValue(obj)
					}
					add(fn)
				}
			}
		}
	}
	out := make([]*ssa.Function, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		pi, pj := pkgOf(out[i]).Path(), pkgOf(out[j]).Path()
		if pi != pj {
			return pi < pj
		}
		return out[i].String() < out[j].String()
	})
	return out, spawns
}

// startedParam returns the index of f's parameter that the go statement g
// starts (go fn(), or go func() { fn() }() with fn captured), or -1.
func startedParam(f *ssa.Function, g *ssa.Go) int {
	v := g.Call.Value
	if mc, ok := v.(*ssa.MakeClosure); ok {
		fn := mc.Fn.(*ssa.Function)
		// The closure must call exactly one captured function value.
		for _, b := range fn.Blocks {
			for _, in := range b.Instrs {
				c, ok := in.(*ssa.Call)
				if !ok || c.Call.IsInvoke() {
					continue
				}
				cv := c.Call.Value
				if u, ok := cv.(*ssa.UnOp); ok && u.Op == token.MUL {
					cv = u.X // captured by reference
				}
				fv, ok := cv.(*ssa.FreeVar)
				if !ok {
					continue
				}
				for i, fvar := range fn.FreeVars {
					if fvar == fv {
						v = mc.Bindings[i]
					}
				}
				if a, ok := v.(*ssa.Alloc); ok {
					// The parameter, spilled to the heap.
					for _, r := range *a.Referrers() {
						if st, ok := r.(*ssa.Store); ok && st.Addr == a {
							v = st.Val
						}
					}
				}
			}
		}
	}
	for i, p := range f.Params {
		if p == v {
			if _, ok := p.Type().Underlying().(*types.Signature); ok {
				return i
			}
		}
	}
	return -1
}

// branch is a block of a conditional statement.
type branch struct {
	cond       string
	open       token.Pos // the '{' or ':' the hook goes after
	start, end token.Pos // the block's extent, for actions
	deps       []ast.Expr
	instrRange [2]token.Pos // instructions of the condition (switch compares)
}

// maxCallDepth bounds how deep the pass follows calls on the task's
// instance: the task function is depth 0, the methods it calls depth 1.
const maxCallDepth = 6

// reach returns task t as a unit: t, the closures it defines (jobs it
// schedules), and the target methods it calls on its instance or on
// components of it, up to maxCallDepth calls deep, other tasks excluded;
// long when t or a function it calls directly has an unbounded loop.
func (s *stateInfo) reach(t *ssa.Function, tasks map[*ssa.Function]bool) unit {
	u := unit{fn: t}
	seen := map[*ssa.Function]bool{t: true}
	level := []*ssa.Function{t}
	for d := 0; len(level) > 0; d++ {
		var next []*ssa.Function
		for _, g := range level {
			u.funcs = append(u.funcs, g)
			if d <= 1 && len(s.unboundedLoops(g)) > 0 {
				u.long = true
			}
			if d == maxCallDepth {
				continue
			}
			for _, c := range s.instanceCallees(g, pkgOf(t)) {
				if seen[c] || tasks[c] {
					continue
				}
				seen[c] = true
				next = append(next, c)
			}
		}
		level = next
	}
	return u
}

// unboundedLoops returns the extents of f's long-running loops: for loops
// without a condition or with a condition on state, and ranges over
// channels.
func (s *stateInfo) unboundedLoops(f *ssa.Function) [][2]token.Pos {
	body := funcBody(f)
	if body == nil {
		return nil
	}
	refs := s.debugRefs(f)
	var loops [][2]token.Pos
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt:
			if n.Cond == nil || s.depends(f, branch{deps: []ast.Expr{n.Cond}}) {
				loops = append(loops, [2]token.Pos{n.Pos(), n.End()})
			}
		case *ast.RangeStmt:
			if v, ok := refs[ast.Unparen(n.X)]; ok {
				if _, ch := v.Type().Underlying().(*types.Chan); ch {
					loops = append(loops, [2]token.Pos{n.Pos(), n.End()})
				}
			}
		}
		return true
	})
	return loops
}

// instanceCallees returns, in call order, the target functions g calls on
// its instance (methods whose receiver is g's receiver, a captured variable
// or a pointer parameter: s.applyAll()) or on a component of it declared in
// the task's package pkg (a receiver reached through fields: s.r.tick(),
// n.rn.raft.Step(), s.applyV3.Apply()), then the closures g defines.
// Components of other packages (a transport, a stats queue) are other
// state machines, not this task's.
func (s *stateInfo) instanceCallees(g *ssa.Function, pkg *types.Package) []*ssa.Function {
	var calls []*ssa.Call
	for _, b := range g.Blocks {
		for _, in := range b.Instrs {
			if c, ok := in.(*ssa.Call); ok {
				calls = append(calls, c)
			}
		}
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].Pos() < calls[j].Pos() })
	ok := func(f *ssa.Function) bool {
		return f != nil && f.Blocks != nil && pkgOf(f) != nil && s.p.IsTarget(pkgOf(f)) && funcBody(f) != nil
	}
	// own reports whether a call on receiver x to f stays in the task's
	// state machine.
	own := func(x ssa.Value, f *ssa.Function) bool {
		r, viaField := rootOf(g, x)
		return r && (!viaField || pkgOf(f) == pkg)
	}
	var out []*ssa.Function
	for _, c := range calls {
		common := c.Common()
		if common.IsInvoke() {
			for _, f := range s.p.Callees(c) {
				if ok(f) && own(common.Value, f) {
					out = append(out, f)
				}
			}
			continue
		}
		f := common.StaticCallee()
		if f == nil {
			// A function-valued field of the instance (raft's
			// r.step = stepLeader), called on the instance.
			for _, f := range s.p.Callees(c) {
				if ok(f) && pkgOf(f) == pkg && len(common.Args) > 0 && rooted(g, common.Value) && rooted(g, common.Args[0]) {
					out = append(out, f)
				}
			}
			continue
		}
		if !ok(f) || f.Signature.Recv() == nil || len(common.Args) == 0 || !own(common.Args[0], f) {
			continue
		}
		out = append(out, f)
	}
	for _, a := range g.AnonFuncs {
		if ok(a) {
			out = append(out, a)
		}
	}
	return out
}

// funcBody returns f's syntax body.
func funcBody(f *ssa.Function) *ast.BlockStmt {
	switch n := f.Syntax().(type) {
	case *ast.FuncDecl:
		return n.Body
	case *ast.FuncLit:
		return n.Body
	}
	return nil
}

// statesIn returns the states of the branches in f's body (not in its
// closures) that no other task unit claimed first.
func (s *stateInfo) statesIn(f *ssa.Function) []catalog.State {
	body := funcBody(f)
	if body == nil || generated(s.p.Fset, f) {
		return nil
	}
	var branches []branch
	str := types.ExprString
	loops := s.unboundedLoops(f)
	inLoop := func(p token.Pos) bool {
		for _, l := range loops {
			if l[0] <= p && p < l[1] {
				return true
			}
		}
		return false
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BlockStmt:
			branches = append(branches, guards(n.List)...)
		case *ast.CaseClause:
			branches = append(branches, guards(n.Body)...)
		case *ast.CommClause:
			branches = append(branches, guards(n.Body)...)
		case *ast.IfStmt:
			c := str(n.Cond)
			branches = append(branches, branch{cond: c, open: n.Body.Lbrace, start: n.Body.Lbrace, end: n.Body.Rbrace, deps: []ast.Expr{n.Cond}})
			if e, ok := n.Else.(*ast.BlockStmt); ok {
				branches = append(branches, branch{cond: negate(n.Cond), open: e.Lbrace, start: e.Lbrace, end: e.Rbrace, deps: []ast.Expr{n.Cond}})
			}
		case *ast.SwitchStmt:
			for _, st := range n.Body.List {
				cc := st.(*ast.CaseClause)
				var deps []ast.Expr
				if n.Tag != nil {
					deps = append(deps, n.Tag)
				}
				deps = append(deps, cc.List...)
				branches = append(branches, branch{cond: caseText(n.Tag, cc.List), open: cc.Colon, start: cc.Colon, end: cc.End(), deps: deps,
					instrRange: [2]token.Pos{cc.Case, cc.Colon}})
			}
		case *ast.TypeSwitchStmt:
			var x ast.Expr
			switch a := n.Assign.(type) {
			case *ast.AssignStmt:
				x = a.Rhs[0].(*ast.TypeAssertExpr).X
			case *ast.ExprStmt:
				x = a.X.(*ast.TypeAssertExpr).X
			}
			for _, st := range n.Body.List {
				cc := st.(*ast.CaseClause)
				var types []string
				for _, e := range cc.List {
					types = append(types, str(e))
				}
				cond := str(x) + ".(type) is " + strings.Join(types, ", ")
				if cc.List == nil {
					cond = str(x) + ".(type): default"
				}
				branches = append(branches, branch{cond: cond, open: cc.Colon, start: cc.Colon, end: cc.End(), deps: []ast.Expr{x}})
			}
		case *ast.SelectStmt:
			if !inLoop(n.Pos()) {
				// A local channel switches a case only in a
				// loop that selects again.
				return true
			}
			for _, st := range n.Body.List {
				cc := st.(*ast.CommClause)
				ch := commChan(cc.Comm)
				if _, local := ast.Unparen(ch).(*ast.Ident); !local {
					// Only a local channel can be switched by
					// state (nil disables the case); a field or
					// a call is always the same stream.
					continue
				}
				branches = append(branches, branch{cond: "case " + commText(cc.Comm), open: cc.Colon, start: cc.Colon, end: cc.End(), deps: []ast.Expr{ch}})
			}
		}
		return true
	})
	sort.SliceStable(branches, func(i, j int) bool { return branches[i].open < branches[j].open })
	pkg := pkgOf(f)
	fname := f.RelString(pkg)
	var out []catalog.State
	for i, b := range branches {
		if s.done[b.open] || !s.depends(f, b) || !s.action(f, b.start, b.end) {
			continue
		}
		s.done[b.open] = true
		pos := s.p.Fset.Position(b.open)
		file, _ := filepath.Abs(pos.Filename)
		out = append(out, catalog.State{
			ID:   pkg.Path() + "." + fname + "#" + itoa(i),
			Cond: b.cond,
			File: file, Line: pos.Line, Col: pos.Column,
			Inst: s.instExpr(f, b.open+1),
			Pkg:  pkg.Path(),
			Func: fname,
		})
	}
	return out
}

// guards returns the branches that the guard clauses of a statement list
// lead to: after an if statement without else whose block always leaves
// (if !s.isLeader() { continue }), the rest of the list runs only when
// the condition is false, so it is a block of its own, Go's spelling of
// an else. Its hook goes after the if statement's closing brace.
func guards(list []ast.Stmt) []branch {
	var out []branch
	for i, st := range list[:max(len(list)-1, 0)] {
		n, ok := st.(*ast.IfStmt)
		if !ok || n.Else != nil || !leaves(n.Body) {
			continue
		}
		out = append(out, branch{cond: negate(n.Cond), open: n.Body.Rbrace,
			start: list[i+1].Pos(), end: list[len(list)-1].End(), deps: []ast.Expr{n.Cond}})
	}
	return out
}

// negate renders the negation of condition c: !x is x, a != b is a == b,
// other conditions are !(c).
func negate(c ast.Expr) string {
	switch c := ast.Unparen(c).(type) {
	case *ast.UnaryExpr:
		if c.Op == token.NOT {
			return types.ExprString(c.X)
		}
	case *ast.BinaryExpr:
		if op, ok := inverse[c.Op]; ok {
			return types.ExprString(c.X) + " " + op.String() + " " + types.ExprString(c.Y)
		}
	case *ast.Ident, *ast.SelectorExpr, *ast.CallExpr, *ast.IndexExpr:
		return "!" + types.ExprString(c)
	}
	return "!(" + types.ExprString(c) + ")"
}

// inverse maps a comparison to its negation.
var inverse = map[token.Token]token.Token{
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.LSS: token.GEQ, token.GEQ: token.LSS,
	token.GTR: token.LEQ, token.LEQ: token.GTR,
}

// leaves reports whether a block always leaves the statement list it is
// in: it ends in a return, a break, continue or goto, or a call of panic,
// os.Exit or a logger's Fatal or Panic.
func leaves(b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	switch st := b.List[len(b.List)-1].(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.ExprStmt:
		call, ok := st.X.(*ast.CallExpr)
		if !ok {
			return false
		}
		switch fn := ast.Unparen(call.Fun).(type) {
		case *ast.Ident:
			return fn.Name == "panic"
		case *ast.SelectorExpr:
			name := fn.Sel.Name
			return name == "Exit" || strings.HasPrefix(name, "Fatal") || strings.HasPrefix(name, "Panic")
		}
	}
	return false
}

// caseText renders a switch clause's condition.
func caseText(tag ast.Expr, list []ast.Expr) string {
	var vals []string
	for _, e := range list {
		vals = append(vals, types.ExprString(e))
	}
	switch {
	case list == nil && tag != nil:
		return types.ExprString(tag) + ": default"
	case list == nil:
		return "default"
	case tag == nil:
		return strings.Join(vals, " || ")
	}
	return types.ExprString(tag) + " == " + strings.Join(vals, ", ")
}

// commChan returns the channel of a select case, nil for default.
func commChan(st ast.Stmt) ast.Expr {
	var e ast.Expr
	switch st := st.(type) {
	case *ast.SendStmt:
		return st.Chan
	case *ast.ExprStmt:
		e = st.X
	case *ast.AssignStmt:
		e = st.Rhs[0]
	default:
		return nil
	}
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
		return u.X
	}
	return nil
}

func commText(st ast.Stmt) string {
	switch st := st.(type) {
	case *ast.SendStmt:
		return types.ExprString(st.Chan) + " <- " + types.ExprString(st.Value)
	case *ast.ExprStmt:
		return types.ExprString(st.X)
	case *ast.AssignStmt:
		return types.ExprString(st.Rhs[0])
	}
	return ""
}

// debugRefs returns f's map from expressions to values.
func (s *stateInfo) debugRefs(f *ssa.Function) map[ast.Expr]ssa.Value {
	if m, ok := s.refs[f]; ok {
		return m
	}
	m := map[ast.Expr]ssa.Value{}
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			if r, ok := in.(*ssa.DebugRef); ok && !r.IsAddr {
				m[r.Expr] = r.X
			}
		}
	}
	s.refs[f] = m
	return m
}

// depends reports whether b's condition depends on state.
func (s *stateInfo) depends(f *ssa.Function, b branch) bool {
	refs := s.debugRefs(f)
	seen := map[ssa.Value]bool{}
	for _, d := range b.deps {
		found := false
		ast.Inspect(d, func(n ast.Node) bool {
			if found {
				return false
			}
			if _, ok := n.(*ast.FuncLit); ok {
				return false
			}
			if e, ok := n.(ast.Expr); ok {
				if v, ok := refs[e]; ok && s.dep(f, v, seen) {
					found = true
				}
			}
			return true
		})
		if found {
			return true
		}
	}
	if b.instrRange[0].IsValid() {
		for _, bl := range f.Blocks {
			for _, in := range bl.Instrs {
				if op, ok := in.(*ssa.BinOp); ok && op.Pos() >= b.instrRange[0] && op.Pos() < b.instrRange[1] && s.dep(f, op, seen) {
					return true
				}
			}
		}
	}
	return false
}

// dep reports whether value v of function f depends on a state read,
// following SSA def-use edges backwards within f.
func (s *stateInfo) dep(f *ssa.Function, v ssa.Value, seen map[ssa.Value]bool) bool {
	if v == nil || seen[v] {
		return false
	}
	seen[v] = true
	if _, tuple := v.Type().(*types.Tuple); !tuple && isErrorValue(v.Type()) {
		return false
	}
	switch v := v.(type) {
	case *ssa.UnOp:
		switch v.Op {
		case token.MUL:
			return s.load(f, v.X, seen)
		case token.ARROW:
			return false
		}
		return s.dep(f, v.X, seen)
	case *ssa.Field:
		if s.stateField(fieldVar(v.X.Type(), v.Field, false)) && stateObject(f, v.X) {
			return true
		}
		return false
	case *ssa.FieldAddr:
		return s.stateField(fieldVar(v.X.Type(), v.Field, true)) && stateObject(f, v.X)
	case *ssa.BinOp:
		return s.dep(f, v.X, seen) || s.dep(f, v.Y, seen)
	case *ssa.Phi:
		if loopCarried(v) && s.localStateType(v.Type()) {
			// A local the goroutine's loop carries from one
			// iteration to the next (islead, prevSoftState,
			// propc): the loop's own state.
			return true
		}
		for _, e := range v.Edges {
			if s.dep(f, e, seen) {
				return true
			}
		}
		// Control dependence: a local chosen by a branch on state
		// (var propc chan T; if leader { propc = n.propc }).
		if d := v.Block().Idom(); d != nil && len(d.Instrs) > 0 {
			if br, ok := d.Instrs[len(d.Instrs)-1].(*ssa.If); ok && v.Block().Comment != "for.body" {
				return s.dep(f, br.Cond, seen)
			}
		}
	case *ssa.Convert:
		return s.dep(f, v.X, seen)
	case *ssa.ChangeType:
		return s.dep(f, v.X, seen)
	case *ssa.MakeInterface:
		return s.dep(f, v.X, seen)
	case *ssa.ChangeInterface:
		return s.dep(f, v.X, seen)
	case *ssa.TypeAssert:
		return s.dep(f, v.X, seen)
	case *ssa.Slice:
		return s.dep(f, v.X, seen)
	case *ssa.Index:
		return s.dep(f, v.X, seen) || s.dep(f, v.Index, seen)
	case *ssa.Lookup:
		return s.dep(f, v.X, seen) || s.dep(f, v.Index, seen)
	case *ssa.Next:
		// Ranging over a state map: its keys and values are state.
		return s.dep(f, v.Iter, seen)
	case *ssa.Range:
		return s.dep(f, v.X, seen)
	case *ssa.Extract:
		if c, ok := v.Tuple.(*ssa.Call); ok {
			return s.callDep(f, c, seen)
		}
		return s.dep(f, v.Tuple, seen)
	case *ssa.Call:
		return s.callDep(f, v, seen)
	}
	return false
}

// load reports whether a load from addr reads state.
func (s *stateInfo) load(f *ssa.Function, addr ssa.Value, seen map[ssa.Value]bool) bool {
	switch a := addr.(type) {
	case *ssa.FieldAddr:
		return s.stateField(fieldVar(a.X.Type(), a.Field, true)) && stateObject(f, a.X)
	case *ssa.Global:
		return s.globals[a] && s.stateType(derefType(a.Type()))
	case *ssa.IndexAddr:
		return s.dep(f, a.X, seen) || s.load(f, a.X, seen)
	case *ssa.FreeVar:
		// A variable the closure captured and writes (the last
		// compacted revision of a compaction loop): state the
		// goroutine carries from one run of its body to the next.
		return s.localStateType(derefType(a.Type())) && storesTo(f, a)
	case *ssa.Alloc:
		// A local whose address is taken: follow its stores.
		if seen[a] {
			return false
		}
		seen[a] = true
		for _, r := range *a.Referrers() {
			if st, ok := r.(*ssa.Store); ok && st.Addr == a && s.dep(f, st.Val, seen) {
				return true
			}
		}
	}
	return false
}

// storesTo reports whether f stores to addr.
func storesTo(f *ssa.Function, addr ssa.Value) bool {
	for _, r := range *addr.Referrers() {
		if st, ok := r.(*ssa.Store); ok && st.Addr == addr && st.Parent() == f {
			return true
		}
	}
	return false
}

// loopCarried reports whether phi merges a value from a back edge of an
// unbounded loop (for {...} or a range over a channel).
func loopCarried(phi *ssa.Phi) bool {
	b := phi.Block()
	if b.Comment != "for.body" && b.Comment != "rangechan.loop" {
		return false
	}
	for i, pred := range b.Preds {
		if b.Dominates(pred) && phi.Edges[i] != phi {
			if _, isConst := phi.Edges[i].(*ssa.Const); !isConst {
				return true
			}
		}
	}
	return false
}

// localStateType reports whether a loop-carried local of type t is state:
// as for fields, plus channels (a channel set to nil disables a select
// case).
func (s *stateInfo) localStateType(t types.Type) bool {
	if _, ok := t.Underlying().(*types.Chan); ok {
		return true
	}
	return s.stateType(t)
}

func derefType(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// callDep reports whether the result of call c depends on state: len and
// cap of state, atomic loads of state fields, target getters reading their
// receiver's state, and standard-library computations (time.Since,
// bytes.Equal, ...) on state.
func (s *stateInfo) callDep(f *ssa.Function, c *ssa.Call, seen map[ssa.Value]bool) bool {
	common := c.Common()
	if b, ok := common.Value.(*ssa.Builtin); ok {
		switch b.Name() {
		case "len", "cap", "min", "max":
			for _, a := range common.Args {
				if s.dep(f, a, seen) {
					return true
				}
			}
		}
		return false
	}
	if common.IsInvoke() {
		// A query on a component of the instance (s.v2store.HasTTLKeys()).
		if !rooted(f, common.Value) {
			return false
		}
		for _, callee := range s.p.Callees(c) {
			if pkgOf(callee) != nil && s.p.IsTarget(pkgOf(callee)) && s.getter(callee) {
				return true
			}
		}
		return false
	}
	callee := common.StaticCallee()
	if callee == nil {
		return false
	}
	pkg := pkgOf(callee)
	if pkg == nil {
		return false
	}
	if pkg.Path() == "sync/atomic" {
		for _, a := range common.Args {
			if fa, ok := a.(*ssa.FieldAddr); ok && s.stateField(fieldVar(fa.X.Type(), fa.Field, true)) && stateObject(f, fa.X) {
				return true
			}
		}
		return false
	}
	if s.p.IsTarget(pkg) {
		if callee.Signature.Recv() == nil || len(common.Args) == 0 || !rooted(f, common.Args[0]) {
			return false
		}
		return s.getter(callee)
	}
	{
		// A function outside the target (time.Since, bytes.Equal,
		// semver comparisons): a computation on its arguments. An
		// error result was cut above.
		for _, a := range common.Args {
			if s.dep(f, a, seen) {
				return true
			}
		}
	}
	return false
}

// getter reports whether a small target method's results depend on the
// state of its receiver.
func (s *stateInfo) getter(f *ssa.Function) bool {
	switch s.getters[f] {
	case 1, 3:
		return false
	case 2:
		return true
	}
	if len(f.Blocks) > 8 || f.Blocks == nil {
		s.getters[f] = 3
		return false
	}
	s.getters[f] = 1
	ok := false
	seen := map[ssa.Value]bool{}
	for _, b := range f.Blocks {
		switch last := b.Instrs[len(b.Instrs)-1].(type) {
		case *ssa.Return:
			for _, v := range last.Results {
				if s.dep(f, v, seen) {
					ok = true
				}
			}
		case *ssa.If:
			// The result is chosen by a branch on state
			// (if c.version == nil { return nil }).
			if f.Signature.Results().Len() > 0 && s.dep(f, last.Cond, seen) {
				ok = true
			}
		}
	}
	if ok {
		s.getters[f] = 2
	} else {
		s.getters[f] = 3
	}
	return ok
}

// stateObject reports whether the struct x is, or points to, holds state
// of f's task: anything but a request or message passed to a method as a
// non-receiver parameter. Objects the instance reaches through locals (a
// watcher taken from a map of the store, a peer's progress) are part of
// its state.
func stateObject(f *ssa.Function, x ssa.Value) bool {
	for {
		switch v := x.(type) {
		case *ssa.FieldAddr:
			x = v.X
		case *ssa.Field:
			x = v.X
		case *ssa.UnOp:
			if v.Op != token.MUL {
				return true
			}
			x = v.X
		case *ssa.Parameter:
			return rooted(f, v)
		default:
			return true
		}
	}
}

// rooted reports whether x is (a field path from) the instance of f: a
// method's receiver, a pointer parameter of a plain function, a captured
// variable, or a global.
func rooted(f *ssa.Function, x ssa.Value) bool {
	r, _ := rootOf(f, x)
	return r
}

// rootOf reports whether x is rooted (see rooted) and whether the path
// from the root goes through a field.
func rootOf(f *ssa.Function, x ssa.Value) (rooted, viaField bool) {
	for {
		switch v := x.(type) {
		case *ssa.FieldAddr:
			x, viaField = v.X, true
		case *ssa.Field:
			x, viaField = v.X, true
		case *ssa.UnOp:
			if v.Op != token.MUL {
				return false, false
			}
			x = v.X
		case *ssa.Parameter:
			if f.Signature.Recv() != nil {
				// A method's instance is its receiver; its
				// other parameters are requests and messages.
				return len(f.Params) > 0 && f.Params[0] == v, viaField
			}
			_, ok := v.Type().Underlying().(*types.Pointer)
			return ok, viaField
		case *ssa.FreeVar, *ssa.Global:
			return true, viaField
		case *ssa.Alloc:
			// A receiver or parameter spilled to the heap because a
			// closure captures it.
			var next ssa.Value
			for _, r := range *v.Referrers() {
				if st, ok := r.(*ssa.Store); ok && st.Addr == v {
					if _, isParam := st.Val.(*ssa.Parameter); isParam {
						next = st.Val
					}
				}
			}
			if next == nil {
				return false, false
			}
			x = next
		default:
			return false, false
		}
	}
}

// action reports whether the instructions of f within [start, end) perform
// an action: a call (not len/cap/append), a send, a go or defer, a panic,
// or a write of a state field or global.
func (s *stateInfo) action(f *ssa.Function, start, end token.Pos) bool {
	in := func(p token.Pos) bool { return p >= start && p < end }
	for _, b := range f.Blocks {
		for _, ins := range b.Instrs {
			switch ins := ins.(type) {
			case *ssa.Call:
				if !in(ins.Pos()) {
					continue
				}
				if bi, ok := ins.Call.Value.(*ssa.Builtin); ok {
					switch bi.Name() {
					case "len", "cap", "append", "min", "max", "new", "make", "complex", "real", "imag", "ssa:wrapnilchk":
						continue
					}
				}
				return true
			case *ssa.Go, *ssa.Defer, *ssa.Send, *ssa.Panic:
				if in(ins.Pos()) {
					return true
				}
			case *ssa.Store:
				if !in(ins.Pos()) {
					continue
				}
				switch a := ins.Addr.(type) {
				case *ssa.FieldAddr:
					if s.stateField(fieldVar(a.X.Type(), a.Field, true)) && rooted(f, a.X) {
						return true
					}
				case *ssa.Global:
					if s.globals[a] {
						return true
					}
				}
			}
		}
	}
	return false
}

// instExpr returns the expression naming f's task instance at pos: the
// receiver of a method, the first captured pointer to a target struct of
// a closure, the first such pointer parameter, or "" when none is in scope
// under its name at pos.
func (s *stateInfo) instExpr(f *ssa.Function, pos token.Pos) string {
	scope := pkgOf(f).Scope().Innermost(pos)
	if scope == nil {
		return ""
	}
	isPtr := func(t types.Type) bool {
		p, ok := t.Underlying().(*types.Pointer)
		if !ok {
			return false
		}
		n, ok := types.Unalias(p.Elem()).(*types.Named)
		return ok && n.Obj().Pkg() != nil && s.p.IsTarget(n.Obj().Pkg())
	}
	if f.Signature.Recv() != nil && len(f.Params) > 0 {
		r := f.Params[0]
		if r.Name() == "" || r.Name() == "_" {
			return ""
		}
		if _, obj := scope.LookupParent(r.Name(), pos); obj != nil && obj == r.Object() {
			return r.Name()
		}
		return ""
	}
	lit, _ := f.Syntax().(*ast.FuncLit)
	for _, fv := range s.freeVarsByUse(f) {
		// Captured variables are free variables by reference.
		t := derefType(fv.Type())
		if !isPtr(t) || lit == nil {
			continue
		}
		_, obj := scope.LookupParent(fv.Name(), pos)
		if v, ok := obj.(*types.Var); ok && (v.Pos() < lit.Pos() || v.Pos() >= lit.End()) && isPtr(v.Type()) {
			return fv.Name()
		}
	}
	for _, p := range f.Params {
		if !isPtr(p.Type()) {
			continue
		}
		if _, obj := scope.LookupParent(p.Name(), pos); obj != nil && obj == p.Object() {
			return p.Name()
		}
	}
	return ""
}

// freeVarsByUse returns f's free variables, those whose state fields f
// uses most first: the instance of a closure is the struct it works on.
func (s *stateInfo) freeVarsByUse(f *ssa.Function) []*ssa.FreeVar {
	uses := map[*ssa.FreeVar]int{}
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			var x ssa.Value
			var v *types.Var
			switch in := in.(type) {
			case *ssa.FieldAddr:
				x, v = in.X, fieldVar(in.X.Type(), in.Field, true)
			case *ssa.Field:
				x, v = in.X, fieldVar(in.X.Type(), in.Field, false)
			default:
				continue
			}
			if !s.stateField(v) {
				continue
			}
			for {
				if u, ok := x.(*ssa.UnOp); ok && u.Op == token.MUL {
					x = u.X
					continue
				}
				break
			}
			if fv, ok := x.(*ssa.FreeVar); ok {
				uses[fv]++
			}
		}
	}
	out := slices.Clone(f.FreeVars)
	sort.SliceStable(out, func(i, j int) bool { return uses[out[i]] > uses[out[j]] })
	return out
}
