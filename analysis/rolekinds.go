package analysis

import (
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
)

// Role types of the roles that only target.role names (see namedRoles):
// the catalog's RoleType of a plain string field and of a bool field.
const (
	RoleTypeString = "string"
	RoleTypeBool   = "bool"
)

// Role values of a bool role field: false, true.
var boolRoleValues = []catalog.RoleValue{{Value: 0, Name: "follower"}, {Value: 1, Name: "leader"}}

// namedRole is a role field of another shape than a named integer type
// with constants. RolePass takes one when target.role names it, and picks
// a string one unasked only when the target has no role of a named
// integer type and the constants written to the field say leader and
// follower (written: see pickable), so the roles it finds in the targets
// gofault knows stay as they were.
type namedRole struct {
	cand     *roleCand
	roleType string
	values   []catalog.RoleValue
	// written are the string constants written to the field, directly
	// (s.state = "leader") or through a setter's parameter at its static
	// calls (s.setState(Leader), goraft's); construction left out.
	written []string
}

// pickable reports whether RolePass may pick r unasked: a string role
// (plain or of a named string type, not a bool) whose written constants
// include one that says leader and one that says follower. Compared
// constants do not count: a field that is only compared with "leader"
// may hold anything.
func (r namedRole) pickable() bool {
	if r.roleType == RoleTypeBool {
		return false
	}
	set := map[string]bool{}
	for _, w := range r.written {
		set[w] = true
	}
	return stringRoleValues(set) != nil
}

// namedRoles finds the role fields of the three other shapes, by
// "pkg/path.Type.field":
//
//   - a string field written or compared with string constants among which
//     one says leader and one follower ("leader", "follower"): its values
//     are those strings, numbered from 1 in sorted order (0: a string that
//     is none of them), its role type RoleTypeString;
//   - a field of a named string type with constants whose names or values
//     say leader and follower: its values are the constants' strings,
//     numbered the same way, its role type the named type's;
//   - a bool (or sync/atomic Bool) field whose name says leader
//     (isLeader, leader): values 0 follower and 1 leader, role type
//     RoleTypeBool.
//
// A string role's value names are the strings themselves, so the hook of a
// write reports the number of the string written.
func namedRoles(u *Unit) map[string]namedRole {
	owners := fieldOwners(u.Prog)
	stringTypes := findStringRoleTypes(u.Prog)
	type found struct {
		cand    *roleCand
		kind    string
		values  map[string]bool
		written map[string]bool
		setters []*ssa.Parameter // parameters stored to the field
	}
	fields := map[*types.Var]*found{}
	get := func(fld *types.Var, kind string) *found {
		f := fields[fld]
		if f == nil {
			f = &found{cand: &roleCand{field: fld, owner: owners[fld]}, kind: kind, values: map[string]bool{}, written: map[string]bool{}}
			fields[fld] = f
		}
		return f
	}
	// args are the constant string arguments of the static calls in the
	// target packages, by callee and argument index (a method's receiver
	// is index 0, as in its Params).
	type param struct {
		fn *ssa.Function
		i  int
	}
	args := map[param][]string{}
	kindOf := func(fld *types.Var) string {
		switch t := types.Unalias(fld.Type()).(type) {
		case *types.Basic:
			switch {
			case t.Kind() == types.String:
				return RoleTypeString
			case t.Kind() == types.Bool && strings.Contains(strings.ToLower(fld.Name()), "leader"):
				return RoleTypeBool
			}
		case *types.Named:
			if _, ok := stringTypes[t.Obj()]; ok {
				return t.Obj().Name()
			}
			if o := t.Obj(); o.Pkg() != nil && o.Pkg().Path() == "sync/atomic" && o.Name() == "Bool" && strings.Contains(strings.ToLower(fld.Name()), "leader") {
				return RoleTypeBool
			}
		}
		return ""
	}
	for _, sp := range u.Prog.Targets {
		for _, fn := range packageFunctions(sp) {
			for _, f := range withClosures(fn) {
				for _, b := range f.Blocks {
					for _, ins := range b.Instrs {
						switch ins := ins.(type) {
						case *ssa.Store:
							fa, ok := ins.Addr.(*ssa.FieldAddr)
							if !ok || !ins.Pos().IsValid() {
								continue
							}
							if _, alloc := fa.X.(*ssa.Alloc); alloc {
								continue // construction
							}
							fld := fieldVar(fa.X.Type(), fa.Field, true)
							if fld == nil || owners[fld] == nil {
								continue
							}
							kind := kindOf(fld)
							if kind == "" || kind == RoleTypeBool && !isBool(fld.Type()) {
								continue
							}
							x := get(fld, kind)
							x.cand.writes = append(x.cand.writes, roleWrite{fn: f, shape: catalog.WriteAssign, pos: ins.Pos()})
							if s, ok := stringConst(ins.Val); ok {
								x.values[s] = true
								x.written[s] = true
							}
							if p, ok := unconvert(ins.Val).(*ssa.Parameter); ok {
								x.setters = append(x.setters, p)
							}
						case *ssa.BinOp:
							if ins.Op != token.EQL && ins.Op != token.NEQ {
								continue
							}
							for _, pair := range [][2]ssa.Value{{ins.X, ins.Y}, {ins.Y, ins.X}} {
								fld := loadedField(pair[0])
								s, ok := stringConst(pair[1])
								if fld == nil || !ok || owners[fld] == nil || kindOf(fld) != RoleTypeString {
									continue
								}
								get(fld, RoleTypeString).values[s] = true
							}
						case *ssa.Call:
							common := ins.Common()
							callee := common.StaticCallee()
							if callee != nil {
								for i, a := range common.Args {
									if s, ok := stringConst(unconvert(a)); ok {
										args[param{callee, i}] = append(args[param{callee, i}], s)
									}
								}
							}
							if callee == nil || callee.Pkg == nil || callee.Pkg.Pkg.Path() != "sync/atomic" || callee.Name() != "Store" || len(common.Args) != 2 {
								continue
							}
							fa, ok := common.Args[0].(*ssa.FieldAddr)
							if !ok {
								continue
							}
							fld := fieldVar(fa.X.Type(), fa.Field, true)
							if fld == nil || owners[fld] == nil || kindOf(fld) != RoleTypeBool || isBool(fld.Type()) {
								continue
							}
							x := get(fld, RoleTypeBool)
							x.cand.writes = append(x.cand.writes, roleWrite{fn: f, shape: catalog.WriteMethod, pos: common.Pos()})
						}
					}
				}
			}
		}
	}
	out := map[string]namedRole{}
	for _, f := range fields {
		if len(f.cand.writes) == 0 {
			continue
		}
		for _, p := range f.setters {
			for i, q := range p.Parent().Params {
				if q == p {
					for _, s := range args[param{p.Parent(), i}] {
						f.values[s] = true
						f.written[s] = true
					}
				}
			}
		}
		var vs []catalog.RoleValue
		switch f.kind {
		case RoleTypeBool:
			vs = boolRoleValues
		case RoleTypeString:
			vs = stringRoleValues(f.values)
		default:
			vs = stringTypes[types.Unalias(f.cand.field.Type()).(*types.Named).Obj()]
		}
		if vs == nil {
			continue
		}
		var written []string
		for w := range f.written {
			written = append(written, w)
		}
		sort.Strings(written)
		out[candName(f.cand)] = namedRole{cand: f.cand, roleType: f.kind, values: vs, written: written}
	}
	return out
}

func isBool(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.Bool
}

// stringConst is the string a constant value holds.
func stringConst(v ssa.Value) (string, bool) {
	c, ok := v.(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(c.Value), true
}

// loadedField is the field v loads (*&x.f, or x.f of a struct value).
func loadedField(v ssa.Value) *types.Var {
	switch x := v.(type) {
	case *ssa.UnOp:
		if fa, ok := x.X.(*ssa.FieldAddr); ok && x.Op == token.MUL {
			return fieldVar(fa.X.Type(), fa.Field, true)
		}
	case *ssa.Field:
		return fieldVar(x.X.Type(), x.Field, false)
	}
	return nil
}

// stringRoleValues numbers a string role's values from 1 in sorted order;
// nil unless one says leader and one follower.
func stringRoleValues(set map[string]bool) []catalog.RoleValue {
	var ss []string
	leader, follower := false, false
	for s := range set {
		ss = append(ss, s)
		leader = leader || strings.Contains(strings.ToLower(s), "leader")
		follower = follower || strings.Contains(strings.ToLower(s), "follower")
	}
	if !leader || !follower {
		return nil
	}
	sort.Strings(ss)
	vs := make([]catalog.RoleValue, len(ss))
	for i, s := range ss {
		vs[i] = catalog.RoleValue{Value: int64(i + 1), Name: s}
	}
	return vs
}

// findStringRoleTypes returns the named string types of the target
// packages whose constants' names or values say leader and follower, with
// their values as stringRoleValues numbers them.
func findStringRoleTypes(p *Program) map[*types.TypeName][]catalog.RoleValue {
	consts := targetConsts(p, types.IsString)
	out := map[*types.TypeName][]catalog.RoleValue{}
	for tn, cs := range consts {
		set := map[string]bool{}
		leader, follower := false, false
		for _, c := range cs {
			s := constant.StringVal(c.Val())
			set[s] = true
			n := strings.ToLower(c.Name() + " " + s)
			leader = leader || strings.Contains(n, "leader")
			follower = follower || strings.Contains(n, "follower")
		}
		if !leader || !follower {
			continue
		}
		vs := make([]catalog.RoleValue, 0, len(set))
		var ss []string
		for s := range set {
			ss = append(ss, s)
		}
		sort.Strings(ss)
		for i, s := range ss {
			vs = append(vs, catalog.RoleValue{Value: int64(i + 1), Name: s})
		}
		out[tn] = vs
	}
	return out
}
