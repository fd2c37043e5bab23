package analysis

import (
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
)

// CountObservationPoints is ObservePass's counter.
const CountObservationPoints = "observation_points"

// ObservePass finds CoFI's observation points: the methods of the target
// packages that send peer messages (Send, taking a slice of messages) and
// that handle one (Process or Step, taking a message), where a message is
// a struct with integer fields Type, From and To (etcd's raftpb.Message),
// and the functions Options.ObserveSend and ObserveHandled name.
// Messages of other shapes are found where they go on the wire
// (peerMessages): a struct of the target with integer fields and a field
// naming its sender, encoded by a method of its own (nats-server's
// appendEntry, voteRequest) or passed to a method of one of the target's
// interfaces (hashicorp/raft's Transport). Their send points are the
// encoders and the interfaces' implementations; their handled points are
// methods of node types, named like handlers (process…, handle…) or like
// the message type (appendEntries of AppendEntriesRequest), that take one
// and have state variables to observe.
// The observed variables are the message's other integer fields and, after
// handling, the node's state: the receiver's integer fields and its
// argument-less integer getters whose names speak of terms, votes,
// leaders, commit and applied indices.
var ObservePass = &Pass{
	Name:       "observe",
	Doc:        "observation points: where peer messages are sent and handled, with the variables to observe",
	ResultType: reflect.TypeFor[*Observe](),
	Run:        runObserve,
}

// Observe is ObservePass's result.
type Observe struct {
	Points []catalog.ObservePoint
}

func (r *Observe) contribute(p *catalog.Parts) {
	p.ObservePoints = append(p.ObservePoints, r.Points...)
}

// observeMethods are the method names of observation points and what they
// do with messages.
var observeMethods = map[string]string{
	"Send":    catalog.ObserveSend,
	"Process": catalog.ObserveHandled,
	"Step":    catalog.ObserveHandled,
}

// stateName matches the names of a node's state variables worth observing,
// hashicorp/raft's getCurrentTerm and getLastApplied among them.
var stateName = regexp.MustCompile(`(?i)^(get)?(current)?(term|vote|lead|commit(ted)?(index)?|(last)?applied(index)?|lastindex)$`)

func runObserve(u *Unit) (any, error) {
	res := &Observe{}
	msgs := handledMessages(u.Prog, sortedMessages(peerMessages(u.Prog)))
	for _, sp := range u.Prog.Targets {
		for _, f := range packageFunctions(sp) {
			if pt, ok := observeFunc(u.Prog, f, u.Options, msgs); ok {
				res.Points = append(res.Points, pt)
				u.Count(sp.Pkg.Path(), CountObservationPoints, 1)
			}
		}
	}
	sort.Slice(res.Points, func(i, j int) bool { return res.Points[i].ID < res.Points[j].ID })
	return res, nil
}

// observeFunc makes the observation point of f, if it is one: a
// raftpb-shaped point (observePoint), else one of a peer message
// (structPoint), sent or handled.
func observeFunc(p *Program, f *ssa.Function, opts Options, msgs []*peerMessage) (catalog.ObservePoint, bool) {
	when, named := observeWhen(f, opts)
	if pt, ok := observePoint(p, f, when); ok {
		return pt, true
	}
	decl, ok := f.Syntax().(*ast.FuncDecl)
	if !ok || decl.Body == nil {
		return catalog.ObservePoint{}, false
	}
	sig := f.Signature
	// A send: an encoder of a message or an implementation of a
	// transport interface's method that takes one.
	if !named || when == catalog.ObserveSend {
		for _, m := range msgs {
			if !named && !m.sendsVia(f) {
				continue
			}
			if recv := sig.Recv(); recv != nil && isMessageType(recv.Type(), m) {
				return structPoint(p, f, decl, catalog.ObserveSend, m, -1)
			}
			if i := messageParamIndex(sig, m); i >= 0 {
				return structPoint(p, f, decl, catalog.ObserveSend, m, i)
			}
		}
	}
	// A handler: a method of another type, named like one, that takes
	// a message.
	if named && when != catalog.ObserveHandled || !named && (sig.Recv() == nil || isAnyMessage(sig.Recv().Type(), msgs)) {
		return catalog.ObservePoint{}, false
	}
	for _, m := range msgs {
		if i := messageParamIndex(sig, m); i >= 0 && (named || handler(f, m, msgs) != nil) {
			return structPoint(p, f, decl, catalog.ObserveHandled, m, i)
		}
	}
	return catalog.ObservePoint{}, false
}

// observeWhen is what f does with messages if it may be a raftpb-shaped
// observation point: named in opts (named is true), or a method named
// like observeMethods; "" when it is neither.
func observeWhen(f *ssa.Function, opts Options) (when string, named bool) {
	names := []string{funcName(f)}
	if f.Pkg != nil {
		names = append(names, f.Pkg.Pkg.Path()+"."+funcName(f), path.Base(f.Pkg.Pkg.Path())+"."+funcName(f))
	}
	in := func(list []string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(list, n) })
	}
	switch {
	case in(opts.ObserveSend):
		return catalog.ObserveSend, true
	case in(opts.ObserveHandled):
		return catalog.ObserveHandled, true
	case f.Signature.Recv() != nil:
		return observeMethods[f.Name()], false
	}
	return "", false
}

// observePoint makes the raftpb-shaped observation point of function f,
// if it is one; when is what f does with messages (observeWhen).
func observePoint(p *Program, f *ssa.Function, when string) (catalog.ObservePoint, bool) {
	var pt catalog.ObservePoint
	sig := f.Signature
	if when == "" {
		return pt, false
	}
	decl, ok := f.Syntax().(*ast.FuncDecl)
	if !ok || decl.Body == nil {
		return pt, false
	}
	// The message parameter.
	msgParam, slice := -1, false
	var msg *types.Struct
	for i := range sig.Params().Len() {
		t := sig.Params().At(i).Type()
		if s, ok := t.Underlying().(*types.Slice); ok && when == catalog.ObserveSend {
			if st := messageStruct(s.Elem()); st != nil {
				msgParam, slice, msg = i, true, st
				break
			}
		}
		if when == catalog.ObserveHandled {
			if st := messageStruct(t); st != nil {
				msgParam, msg = i, st
				break
			}
		}
	}
	if msgParam < 0 {
		return pt, false
	}
	name := paramName(decl.Type.Params, msgParam)
	if name == "" || name == "_" {
		return pt, false
	}
	pos := p.Fset.Position(decl.Body.Lbrace)
	pt = catalog.ObservePoint{
		ID: "observe:" + f.Pkg.Pkg.Path() + "." + funcName(f), Pkg: f.Pkg.Pkg.Path(), Func: funcName(f), When: when,
		File: pos.Filename, Line: pos.Line, Col: pos.Column,
		Msg: name, Slice: slice, Type: "Type", From: "From", To: "To",
	}
	ref := name
	if slice {
		ref = "gofaultmsg"
	}
	if _, ptr := sig.Params().At(msgParam).Type().Underlying().(*types.Pointer); ptr && !slice {
		pt.Ptr = true // the hook checks for nil before it reads the fields
	}
	for i := range msg.NumFields() {
		fd := msg.Field(i)
		if fd.Name() == "Type" || fd.Name() == "From" || fd.Name() == "To" || !isInteger(fd.Type()) || !fd.Exported() {
			continue
		}
		pt.Vars = append(pt.Vars, catalog.ObserveVar{Name: "msg." + fd.Name(), Expr: ref + "." + fd.Name()})
	}
	if when == catalog.ObserveHandled && sig.Recv() != nil {
		pt.Vars = append(pt.Vars, nodeVars(sig.Recv(), recvName(decl))...)
	}
	return pt, true
}

// structPoint makes the observation point of f for peer message m, held
// by parameter i (-1: f's receiver): the message's type is its Go type
// (Message) and, if it carries log entries (entriesField), whether it
// carries any (1) or none (0, a heartbeat); its sender the message's sender field,
// its receiver, before a send, the parameter that names the peer and,
// after handling, the node's own ID. Either is left out ("") when not
// found or not of the sender's kind (an integer, or a hashed string).
func structPoint(p *Program, f *ssa.Function, decl *ast.FuncDecl, when string, m *peerMessage, i int) (catalog.ObservePoint, bool) {
	var pt catalog.ObservePoint
	sig := f.Signature
	var name string
	var t types.Type
	if i < 0 {
		name, t = recvName(decl), sig.Recv().Type()
	} else {
		name, t = paramName(decl.Type.Params, i), sig.Params().At(i).Type()
	}
	if name == "" || name == "_" {
		return pt, false
	}
	pkg := f.Pkg.Pkg
	visible := func(fd string) bool { return token.IsExported(fd) || m.named.Obj().Pkg() == pkg }
	pos := p.Fset.Position(decl.Body.Lbrace)
	pt = catalog.ObservePoint{
		ID: "observe:" + pkg.Path() + "." + funcName(f), Pkg: pkg.Path(), Func: funcName(f), When: when,
		File: pos.Filename, Line: pos.Line, Col: pos.Column,
		Msg: name, Message: m.named.Obj().Name(),
	}
	if _, ptr := t.Underlying().(*types.Pointer); ptr {
		pt.Ptr = true
	}
	if visible(m.from) {
		pt.From, pt.FromHash = name+"."+m.from, m.fromHash
	}
	if e := entriesField(m.st); e != "" && visible(e) {
		pt.Type, pt.TypeEntries = name+"."+e, true
	}
	switch {
	case when == catalog.ObserveSend && i >= 0:
		pt.To, pt.ToHash = receiverParam(sig, decl, i)
	case when == catalog.ObserveHandled && sig.Recv() != nil:
		pt.To, pt.ToHash = selfIDField(sig.Recv(), recvName(decl), pkg)
	}
	if pt.From == "" || pt.ToHash != pt.FromHash {
		pt.To, pt.ToHash = "", false
	}
	for j := range m.st.NumFields() {
		fd := m.st.Field(j)
		if fd.Embedded() || !isInteger(fd.Type()) || !visible(fd.Name()) {
			continue
		}
		pt.Vars = append(pt.Vars, catalog.ObserveVar{Name: "msg." + fd.Name(), Expr: name + "." + fd.Name()})
	}
	if when == catalog.ObserveHandled && sig.Recv() != nil {
		pt.Vars = append(pt.Vars, withoutWrappers(p, sig.Recv().Type(), pkg, nodeVars(sig.Recv(), recvName(decl)))...)
	}
	return pt, true
}

// withoutWrappers drops from vars the getters of recv that only return
// another of vars' getters (hashicorp/raft's CurrentTerm, which returns
// getCurrentTerm()): one value under two names would be mined as two
// invariants, and cofi would explore each.
func withoutWrappers(p *Program, recv types.Type, pkg *types.Package, vars []catalog.ObserveVar) []catalog.ObserveVar {
	method := func(v catalog.ObserveVar) *types.Func {
		name, ok := strings.CutSuffix(strings.TrimPrefix(v.Name, "node."), "()")
		if !ok {
			return nil
		}
		obj, _, _ := types.LookupFieldOrMethod(recv, true, pkg, name)
		fn, _ := obj.(*types.Func)
		return fn
	}
	observed := map[*types.Func]bool{}
	for _, v := range vars {
		if fn := method(v); fn != nil {
			observed[fn] = true
		}
	}
	var out []catalog.ObserveVar
	for _, v := range vars {
		if fn := method(v); fn != nil {
			if w := wrapped(p, fn); w != nil && w != fn && observed[w] {
				continue
			}
		}
		out = append(out, v)
	}
	return out
}

// wrapped returns the method that getter fn only calls and returns the
// result of (its body is "return r.m()", through embedded fields), nil
// when fn does more.
func wrapped(p *Program, fn *types.Func) *types.Func {
	f := p.SSA.FuncValue(fn)
	if f == nil || len(f.Blocks) != 1 {
		return nil
	}
	var callee *types.Func
	var call *ssa.Call
	for _, in := range f.Blocks[0].Instrs {
		switch in := in.(type) {
		case *ssa.FieldAddr, *ssa.Field, *ssa.UnOp, *ssa.DebugRef:
		case *ssa.Call:
			g := in.Call.StaticCallee()
			if call != nil || g == nil || len(in.Call.Args) != 1 {
				return nil
			}
			callee, _ = g.Object().(*types.Func)
			call = in
		case *ssa.Return:
			if call == nil || len(in.Results) != 1 || in.Results[0] != call {
				return nil
			}
		default:
			return nil
		}
	}
	return callee
}

// receiverParam is the parameter of a send (other than the message at
// msg) that names the peer it is sent to, by name (receiverParams).
func receiverParam(sig *types.Signature, decl *ast.FuncDecl, msg int) (string, bool) {
	found := map[string]bool{}
	names := map[string]string{}
	for j := range sig.Params().Len() {
		if j == msg {
			continue
		}
		hash, ok := idKind(sig.Params().At(j).Type())
		n := paramName(decl.Type.Params, j)
		if !ok || n == "" || n == "_" {
			continue
		}
		found[strings.ToLower(n)], names[strings.ToLower(n)] = hash, n
	}
	for _, want := range receiverParams {
		if n, ok := names[want]; ok {
			return n, found[want]
		}
	}
	return "", false
}

// selfIDField is the receiver's field that holds the node's own ID
// (selfID), as an expression on the receiver named name.
func selfIDField(recv *types.Var, name string, pkg *types.Package) (string, bool) {
	st, ok := derefStruct(recv.Type())
	if !ok || name == "" || name == "_" {
		return "", false
	}
	for i := range st.NumFields() {
		fd := st.Field(i)
		if fd.Embedded() || !selfID.MatchString(fd.Name()) || (!fd.Exported() && fd.Pkg() != pkg) {
			continue
		}
		if hash, ok := idKind(fd.Type()); ok {
			return name + "." + fd.Name(), hash
		}
	}
	return "", false
}

// messageParamIndex is the index of f's first parameter of type m or *m,
// -1 if none.
func messageParamIndex(sig *types.Signature, m *peerMessage) int {
	for i := range sig.Params().Len() {
		if isMessageType(sig.Params().At(i).Type(), m) {
			return i
		}
	}
	return -1
}

func isMessageType(t types.Type, m *peerMessage) bool {
	n, _ := namedStruct(t)
	return n == m.named
}

func isAnyMessage(t types.Type, msgs []*peerMessage) bool {
	return slices.ContainsFunc(msgs, func(m *peerMessage) bool { return isMessageType(t, m) })
}

// messageStruct returns the struct of t (or *t) if it is a message: it
// has integer fields Type, From and To.
func messageStruct(t types.Type) *types.Struct {
	if ptr, ok := t.Underlying().(*types.Pointer); ok {
		t = ptr.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	need := map[string]bool{"Type": false, "From": false, "To": false}
	for i := range st.NumFields() {
		fd := st.Field(i)
		if _, ok := need[fd.Name()]; ok && isInteger(fd.Type()) {
			need[fd.Name()] = true
		}
	}
	for _, ok := range need {
		if !ok {
			return nil
		}
	}
	return st
}

// nodeVars are the receiver's state variables worth observing: integer
// fields and argument-less integer methods named like stateName. The
// methods of a receiver that embeds a sync.Mutex or sync.RWMutex are left
// out (nats-server's (*raft).Term takes the node's lock, which the
// handler's caller may hold when the hook runs): only its fields are read.
func nodeVars(recv *types.Var, name string) []catalog.ObserveVar {
	if name == "" || name == "_" {
		return nil
	}
	var out []catalog.ObserveVar
	t := recv.Type()
	base := t
	if ptr, ok := t.Underlying().(*types.Pointer); ok {
		base = ptr.Elem()
	}
	if st, ok := base.Underlying().(*types.Struct); ok {
		for i := range st.NumFields() {
			fd := st.Field(i)
			if isInteger(fd.Type()) && stateName.MatchString(fd.Name()) {
				out = append(out, catalog.ObserveVar{Name: "node." + fd.Name(), Expr: name + "." + fd.Name()})
			}
		}
	}
	if embedsLock(base) {
		return out
	}
	ms := types.NewMethodSet(t)
	for i := range ms.Len() {
		m, ok := ms.At(i).Obj().(*types.Func)
		if !ok || !stateName.MatchString(m.Name()) {
			continue
		}
		s := m.Type().(*types.Signature)
		if s.Params().Len() != 0 || s.Results().Len() != 1 || !isInteger(s.Results().At(0).Type()) {
			continue
		}
		out = append(out, catalog.ObserveVar{Name: "node." + m.Name() + "()", Expr: name + "." + m.Name() + "()"})
	}
	return out
}

// embedsLock reports whether struct t embeds a sync.Mutex or
// sync.RWMutex (or a pointer to one).
func embedsLock(t types.Type) bool {
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return false
	}
	for i := range st.NumFields() {
		fd := st.Field(i)
		if !fd.Embedded() {
			continue
		}
		ft := fd.Type()
		if ptr, ok := ft.(*types.Pointer); ok {
			ft = ptr.Elem()
		}
		if n, ok := types.Unalias(ft).(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "sync" &&
			(n.Obj().Name() == "Mutex" || n.Obj().Name() == "RWMutex") {
			return true
		}
	}
	return false
}

func isInteger(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

func paramName(fl *ast.FieldList, i int) string {
	n := 0
	for _, f := range fl.List {
		if len(f.Names) == 0 {
			if n == i {
				return ""
			}
			n++
			continue
		}
		for _, id := range f.Names {
			if n == i {
				return id.Name
			}
			n++
		}
	}
	return ""
}

func recvName(decl *ast.FuncDecl) string {
	if len(decl.Recv.List) == 0 || len(decl.Recv.List[0].Names) == 0 {
		return ""
	}
	return decl.Recv.List[0].Names[0].Name
}

// funcName is "(*T).M" for a method, the name otherwise.
func funcName(f *ssa.Function) string {
	if recv := f.Signature.Recv(); recv != nil {
		t := recv.Type()
		star := ""
		if ptr, ok := t.(*types.Pointer); ok {
			t, star = ptr.Elem(), "*"
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			return "(" + star + n.Obj().Name() + ")." + f.Name()
		}
	}
	return f.Name()
}
