package analysis

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
)

// RolePass finds the variable that holds a node's role; see Role.
var RolePass = &Pass{
	Name:       "role",
	Doc:        "the node's role variable: a struct field written from a named integer type with leader and follower constants",
	ResultType: reflect.TypeFor[*Role](),
	Run:        runRole,
}

// RoleNone is the Options.Role value that turns role tracking off.
const RoleNone = "none"

// CountRoleWrites is RolePass's counter: the role writes found, in the
// package of the writing function.
const CountRoleWrites = "role_writes"

// Role is the result of RolePass: the node's role field, nil when the
// target has none (or Options.Role is RoleNone).
//
// A role type is a named integer type declared in a target package that
// has constants whose names contain "leader" and "follower"
// (case-insensitive): etcd raft's StateType, hashicorp/raft's RaftState,
// the NATS server's RaftState. A role field is a field of a struct declared
// in a target package that is written, after construction, in one of three
// shapes:
//
//   - x.f = v, f of the role type;
//   - atomic.StoreUint32((*uint32)(&x.f), uint32(v)) (any sync/atomic
//     Store function), f of the role type or v converted from it;
//   - x.f.Store(int32(v)) on a sync/atomic integer type, v converted from
//     the role type.
//
// Among several candidates the pass prefers a field named state or role,
// then the one written most; Options.Role names one explicitly, and may
// name a role of another shape (a string, a named string type, a bool
// isLeader: see namedRoles), or a role method that reads one (IsLeader,
// State: see resolveRoleMethod). With no candidate of a named integer
// type, the pass picks a string role whose written constants say leader
// and follower (goraft's server.state, set by setState(Leader): see
// namedRole.pickable); failing that, it suggests a role method
// (Suggestion) and takes none.
type Role struct {
	Role *catalog.Role
	// Suggestion, when the pass found no role, is a role method of the
	// target that reads a role field, said as a hint to set target.role
	// ("(*server).IsLeader reads server.isLeader: set target.role: ...");
	// empty when there is none. The pass never takes it unasked.
	Suggestion string
}

func (r *Role) contribute(p *catalog.Parts) { p.Role = r.Role }

// roleCand is one candidate field and its writes.
type roleCand struct {
	field  *types.Var
	owner  *types.TypeName // the struct type declaring field
	typ    *types.TypeName // the role type
	writes []roleWrite
}

type roleWrite struct {
	fn    *ssa.Function
	shape string
	pos   token.Pos
}

func runRole(u *Unit) (any, error) {
	want := strings.TrimSpace(u.Options.Role)
	if want == RoleNone {
		return &Role{}, nil
	}
	s := newRoleSearch(u)
	if want != "" {
		r, err := s.named(want)
		if err != nil {
			return nil, err
		}
		return &Role{Role: r}, nil
	}
	if len(s.list) == 0 {
		if r := s.pick(); r != nil {
			return &Role{Role: r}, nil
		}
		return &Role{Suggestion: s.suggest()}, nil
	}
	c := s.list[0]
	return &Role{Role: catalogRole(u, c, c.typ.Name(), s.roleTypes[c.typ])}, nil
}

// roleSearch holds what runRole found in the target packages: the role
// types, the candidate fields written from them in preference order, and
// (once asked for) the roles of the other shapes.
type roleSearch struct {
	u         *Unit
	roleTypes map[*types.TypeName][]catalog.RoleValue
	list      []*roleCand
	others    map[string]namedRole // nil until namedRoles ran
}

func newRoleSearch(u *Unit) *roleSearch {
	s := &roleSearch{u: u, roleTypes: findRoleTypes(u.Prog)}
	for _, c := range roleCands(u, s.roleTypes) {
		if c.typ != nil {
			s.list = append(s.list, c)
		}
	}
	sort.Slice(s.list, func(i, j int) bool {
		a, b := s.list[i], s.list[j]
		if pa, pb := preferredRoleName(a.field.Name()), preferredRoleName(b.field.Name()); pa != pb {
			return pa
		}
		if len(a.writes) != len(b.writes) {
			return len(a.writes) > len(b.writes)
		}
		return candName(a) < candName(b)
	})
	return s
}

// roleCands returns the fields of the target packages' struct types
// written in one of the role write shapes, by field.
func roleCands(u *Unit, roleTypes map[*types.TypeName][]catalog.RoleValue) map[*types.Var]*roleCand {
	owners := fieldOwners(u.Prog)
	cands := map[*types.Var]*roleCand{}
	for _, sp := range u.Prog.Targets {
		for _, fn := range packageFunctions(sp) {
			for _, f := range withClosures(fn) {
				for _, b := range f.Blocks {
					for _, ins := range b.Instrs {
						fld, typ, shape, pos := roleWriteOf(ins, roleTypes)
						if fld == nil || owners[fld] == nil {
							continue
						}
						c := cands[fld]
						if c == nil {
							c = &roleCand{field: fld, owner: owners[fld], typ: typ}
							cands[fld] = c
						}
						if c.typ == nil {
							c.typ = typ
						}
						c.writes = append(c.writes, roleWrite{fn: f, shape: shape, pos: pos})
					}
				}
			}
		}
	}
	return cands
}

// named is the role target.role names: a field ("pkg/path.Type.field") or
// a role method, resolved to the field it reads (see resolveRoleMethod).
func (s *roleSearch) named(want string) (*catalog.Role, error) {
	m, err := resolveRoleMethod(s.u.Prog, want)
	if err != nil {
		return nil, err
	}
	if m == nil {
		f, ok := s.field(want, nil)
		if !ok {
			return nil, s.notRole(want)
		}
		return catalogRole(s.u, f.cand, f.roleType, f.values), nil
	}
	f, ok := s.field(m.fieldName(), m.field)
	if !ok {
		return nil, fmt.Errorf("target.role: the method %s reads %s: %w", m.name(), m.fieldName(), s.notRole(m.fieldName()))
	}
	r := catalogRole(s.u, f.cand, f.roleType, f.values)
	r.Method = m.fn.RelString(m.fn.Pkg.Pkg)
	r.LeaderValue = m.leaderValue(r)
	return r, nil
}

// pick is the string role the pass takes unasked when the target has no
// role of a named integer type: the pickable one (namedRole.pickable),
// preferring a field named state or role, then the one written most, then
// by name; nil if none is pickable.
func (s *roleSearch) pick() *catalog.Role {
	if s.others == nil {
		s.others = namedRoles(s.u)
	}
	var best namedRole
	for _, r := range s.others {
		if r.pickable() && (best.cand == nil || betterPick(r, best)) {
			best = r
		}
	}
	if best.cand == nil {
		return nil
	}
	return catalogRole(s.u, best.cand, best.roleType, best.values)
}

// betterPick orders pickable roles: a field named state or role first,
// then the one written most, then by name.
func betterPick(a, b namedRole) bool {
	if pa, pb := preferredRoleName(a.cand.field.Name()), preferredRoleName(b.cand.field.Name()); pa != pb {
		return pa
	}
	if len(a.cand.writes) != len(b.cand.writes) {
		return len(a.cand.writes) > len(b.cand.writes)
	}
	return candName(a.cand) < candName(b.cand)
}

// field finds the role field named "pkg/path.Type.field": a candidate of
// a role type, then a role of another shape (namedRoles). When fld, the
// field a role method reads, is of a named integer type of the target
// packages that is no role type, its constants serve as the values.
func (s *roleSearch) field(name string, fld *types.Var) (namedRole, bool) {
	for _, c := range s.list {
		if candName(c) == name {
			return namedRole{cand: c, roleType: c.typ.Name(), values: s.roleTypes[c.typ]}, true
		}
	}
	if s.others == nil {
		s.others = namedRoles(s.u)
	}
	if r, ok := s.others[name]; ok {
		return r, true
	}
	if fld == nil {
		return namedRole{}, false
	}
	named, ok := types.Unalias(fld.Type()).(*types.Named)
	if !ok {
		return namedRole{}, false
	}
	cs := targetConsts(s.u.Prog, types.IsInteger)[named.Obj()]
	if len(cs) == 0 {
		return namedRole{}, false
	}
	roleTypes := map[*types.TypeName][]catalog.RoleValue{named.Obj(): roleValues(cs)}
	c := roleCands(s.u, roleTypes)[fld]
	if c == nil || c.typ == nil {
		return namedRole{}, false
	}
	return namedRole{cand: c, roleType: c.typ.Name(), values: roleTypes[c.typ]}, true
}

// notRole is the error for a target.role that names no role field.
func (s *roleSearch) notRole(want string) error {
	var names []string
	for _, c := range s.list {
		names = append(names, candName(c))
	}
	for name := range s.others {
		names = append(names, name)
	}
	sort.Strings(names[len(s.list):])
	found := "none found"
	if len(names) > 0 {
		found = "found: " + strings.Join(names, ", ")
	}
	return fmt.Errorf("target.role: %q is not a role field written in the target packages (%s); set it to \"pkg/path.Type.field\" of a struct field written after construction, of a named integer or string type with leader and follower constants, a string written or compared with \"leader\" and \"follower\" constants, or a bool whose name says leader; to a method that returns or compares one (\"pkg/path.(*Type).IsLeader\"); or to %q", want, found, RoleNone)
}

// candName is "pkg/path.Type.field".
func candName(c *roleCand) string {
	return c.owner.Pkg().Path() + "." + c.owner.Name() + "." + c.field.Name()
}

func preferredRoleName(name string) bool {
	n := strings.ToLower(name)
	return n == "state" || n == "role"
}

// catalogRole builds the catalog's form of c: values sorted by value,
// writes in position order with IDs "role:pkg.Func#n".
func catalogRole(u *Unit, c *roleCand, roleType string, values []catalog.RoleValue) *catalog.Role {
	r := &catalog.Role{Pkg: c.owner.Pkg().Path(), Type: c.owner.Name(), Field: c.field.Name(),
		RoleType: roleType, Values: values}
	sort.Slice(c.writes, func(i, j int) bool {
		a, b := u.Prog.Fset.Position(c.writes[i].pos), u.Prog.Fset.Position(c.writes[j].pos)
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	ordinal := map[string]int{}
	for _, w := range c.writes {
		pkg := w.fn.Pkg.Pkg
		fname := w.fn.RelString(pkg)
		key := pkg.Path() + "." + fname
		ordinal[key]++
		p := u.Prog.Fset.Position(w.pos)
		r.Writes = append(r.Writes, catalog.RoleWrite{
			ID: "role:" + key + "#" + strconv.Itoa(ordinal[key]), Pkg: pkg.Path(), Func: fname,
			Shape: w.shape, File: p.Filename, Line: p.Line, Col: p.Column,
		})
		u.Count(pkg.Path(), CountRoleWrites, 1)
	}
	return r
}

// targetConsts returns, by named type of the target packages whose
// underlying basic type has info (types.IsInteger, types.IsString), the
// package-level constants of that type.
func targetConsts(p *Program, info types.BasicInfo) map[*types.TypeName][]*types.Const {
	consts := map[*types.TypeName][]*types.Const{}
	for _, sp := range p.Targets {
		scope := sp.Pkg.Scope()
		for _, name := range scope.Names() {
			c, ok := scope.Lookup(name).(*types.Const)
			if !ok {
				continue
			}
			named, ok := types.Unalias(c.Type()).(*types.Named)
			if !ok || !p.IsTarget(named.Obj().Pkg()) {
				continue
			}
			if b, ok := named.Underlying().(*types.Basic); !ok || b.Info()&info == 0 {
				continue
			}
			consts[named.Obj()] = append(consts[named.Obj()], c)
		}
	}
	return consts
}

// findRoleTypes returns the role types of the target packages with their
// constants, sorted by value (the first name of a value in source order
// names it; bounds such as numStates are left out).
func findRoleTypes(p *Program) map[*types.TypeName][]catalog.RoleValue {
	consts := targetConsts(p, types.IsInteger)
	out := map[*types.TypeName][]catalog.RoleValue{}
	for tn, cs := range consts {
		leader, follower := false, false
		for _, c := range cs {
			n := strings.ToLower(c.Name())
			leader = leader || strings.Contains(n, "leader")
			follower = follower || strings.Contains(n, "follower")
		}
		if !leader || !follower {
			continue
		}
		out[tn] = roleValues(cs)
	}
	return out
}

// roleValues are the values of integer constants cs, sorted by value (the
// first name of a value in source order names it; bounds such as
// numStates are left out).
func roleValues(cs []*types.Const) []catalog.RoleValue {
	sort.Slice(cs, func(i, j int) bool { return cs[i].Pos() < cs[j].Pos() })
	seen := map[int64]bool{}
	var vs []catalog.RoleValue
	for _, c := range cs {
		v, ok := constant.Int64Val(constant.ToInt(c.Val()))
		if !ok || seen[v] || boundConst(c.Name()) {
			continue
		}
		seen[v] = true
		vs = append(vs, catalog.RoleValue{Value: v, Name: c.Name()})
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Value < vs[j].Value })
	return vs
}

// boundConst reports whether a constant's name marks a bound rather than a
// role (etcd raft's numStates).
func boundConst(name string) bool {
	n := strings.ToLower(name)
	for _, p := range []string{"num", "max", "min", "last", "count"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// fieldOwners maps the fields of the named struct types declared in the
// target packages to their type.
func fieldOwners(p *Program) map[*types.Var]*types.TypeName {
	out := map[*types.Var]*types.TypeName{}
	for _, sp := range p.Targets {
		scope := sp.Pkg.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			st, ok := tn.Type().Underlying().(*types.Struct)
			if !ok {
				continue
			}
			for i := range st.NumFields() {
				out[st.Field(i)] = tn
			}
		}
	}
	return out
}

// roleWriteOf returns the field an instruction writes in one of the role
// write shapes, the role type it is written from (nil when the value's
// type says nothing: the field's candidacy then rests on other writes),
// the shape and the position the hook is placed by.
func roleWriteOf(ins ssa.Instruction, roleTypes map[*types.TypeName][]catalog.RoleValue) (*types.Var, *types.TypeName, string, token.Pos) {
	roleOf := func(t types.Type) *types.TypeName {
		if n, ok := types.Unalias(t).(*types.Named); ok {
			if _, ok := roleTypes[n.Obj()]; ok {
				return n.Obj()
			}
		}
		return nil
	}
	// fromRole is the role type a value is converted from, if any.
	fromRole := func(v ssa.Value) *types.TypeName {
		for {
			if t := roleOf(v.Type()); t != nil {
				return t
			}
			switch x := v.(type) {
			case *ssa.Convert:
				v = x.X
			case *ssa.ChangeType:
				v = x.X
			default:
				return nil
			}
		}
	}
	switch ins := ins.(type) {
	case *ssa.Store:
		fa, ok := ins.Addr.(*ssa.FieldAddr)
		if !ok || !ins.Pos().IsValid() {
			return nil, nil, "", token.NoPos
		}
		if _, alloc := fa.X.(*ssa.Alloc); alloc {
			return nil, nil, "", token.NoPos // construction
		}
		fld := fieldVar(fa.X.Type(), fa.Field, true)
		if fld == nil {
			return nil, nil, "", token.NoPos
		}
		if t := roleOf(fld.Type()); t != nil {
			return fld, t, catalog.WriteAssign, ins.Pos()
		}
	case *ssa.Call:
		common := ins.Common()
		callee := common.StaticCallee()
		if callee == nil || callee.Pkg == nil || callee.Pkg.Pkg.Path() != "sync/atomic" || !strings.HasPrefix(callee.Name(), "Store") {
			return nil, nil, "", token.NoPos
		}
		args := common.Args
		if len(args) != 2 {
			return nil, nil, "", token.NoPos
		}
		addr := args[0]
		for {
			switch x := addr.(type) {
			case *ssa.Convert:
				addr = x.X
				continue
			case *ssa.ChangeType:
				addr = x.X
				continue
			}
			break
		}
		fa, ok := addr.(*ssa.FieldAddr)
		if !ok {
			return nil, nil, "", token.NoPos
		}
		fld := fieldVar(fa.X.Type(), fa.Field, true)
		if fld == nil {
			return nil, nil, "", token.NoPos
		}
		shape := catalog.WriteAtomic
		if callee.Signature.Recv() != nil {
			shape = catalog.WriteMethod // (*atomic.Int32).Store(x, v)
		}
		t := roleOf(fld.Type())
		if t == nil {
			t = fromRole(args[1])
		}
		if t == nil && shape == catalog.WriteMethod {
			// Field candidacy needs the role type once; a method
			// Store of another value (a constant) still counts.
			return fld, nil, shape, common.Pos()
		}
		if t == nil {
			return nil, nil, "", token.NoPos
		}
		return fld, t, shape, common.Pos()
	}
	return nil, nil, "", token.NoPos
}

// withClosures returns fn and the closures it defines, transitively.
func withClosures(fn *ssa.Function) []*ssa.Function {
	out := []*ssa.Function{fn}
	for i := 0; i < len(out); i++ {
		out = append(out, out[i].AnonFuncs...)
	}
	return out
}
