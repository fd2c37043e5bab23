package analysis

import (
	"go/ast"
	"go/types"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"

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

// stateName matches the names of a node's state variables worth observing.
var stateName = regexp.MustCompile(`(?i)^(get)?(term|vote|lead|commit(ted)?(index)?|applied(index)?|lastindex)$`)

func runObserve(u *Unit) (any, error) {
	res := &Observe{}
	for _, sp := range u.Prog.Targets {
		for _, f := range packageFunctions(sp) {
			if pt, ok := observePoint(u.Prog, f, observeWhen(f, u.Options)); ok {
				res.Points = append(res.Points, pt)
				u.Count(sp.Pkg.Path(), CountObservationPoints, 1)
			}
		}
	}
	sort.Slice(res.Points, func(i, j int) bool { return res.Points[i].ID < res.Points[j].ID })
	return res, nil
}

// observeWhen is what f does with messages if it may be an observation
// point: named in opts, or a method named like observeMethods; "" when it
// is not.
func observeWhen(f *ssa.Function, opts Options) string {
	names := []string{funcName(f)}
	if f.Pkg != nil {
		names = append(names, f.Pkg.Pkg.Path()+"."+funcName(f), path.Base(f.Pkg.Pkg.Path())+"."+funcName(f))
	}
	named := func(list []string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(list, n) })
	}
	switch {
	case named(opts.ObserveSend):
		return catalog.ObserveSend
	case named(opts.ObserveHandled):
		return catalog.ObserveHandled
	case f.Signature.Recv() != nil:
		return observeMethods[f.Name()]
	}
	return ""
}

// observePoint makes the observation point of function f, if it is one;
// when is what f does with messages (observeWhen).
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
// fields and argument-less integer methods named like stateName.
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
