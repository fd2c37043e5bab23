package analysis

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
)

// roleMethodNames are the methods the role pass suggests when it finds no
// role field, in the order it prefers them.
var roleMethodNames = []string{"IsLeader", "State", "Role", "GetState"}

// roleMethod is a role method resolved to the field it reads: the field
// its results return, or compare with a constant (leader).
type roleMethod struct {
	fn     *ssa.Function
	owner  *types.TypeName // the struct type declaring field
	field  *types.Var
	leader *ssa.Const // the constant IsLeader compares the field with; nil if none
}

// name is the method as target.role may name it: "pkg/path.(*T).M".
func (m *roleMethod) name() string { return m.fn.Pkg.Pkg.Path() + "." + m.fn.RelString(m.fn.Pkg.Pkg) }

// fieldName is the field's "pkg/path.Type.field".
func (m *roleMethod) fieldName() string {
	return m.owner.Pkg().Path() + "." + m.owner.Name() + "." + m.field.Name()
}

// leaderValue is the name r's values give the constant the method compares
// the field with, "" when it compares with none (or with no value of r).
func (m *roleMethod) leaderValue(r *catalog.Role) string {
	if m.leader == nil || m.leader.Value == nil {
		return ""
	}
	switch m.leader.Value.Kind() {
	case constant.String:
		s := constant.StringVal(m.leader.Value)
		for _, v := range r.Values {
			if v.Name == s {
				return s
			}
		}
	case constant.Int:
		if v, ok := constant.Int64Val(m.leader.Value); ok {
			return r.Name(v)
		}
	case constant.Bool:
		if constant.BoolVal(m.leader.Value) {
			return r.Name(1)
		}
		return r.Name(0)
	}
	return ""
}

// resolveRoleMethod resolves want, "pkg/path.(*T).M" or "pkg/path.T.M",
// to the field the method reads; nil when want names no method of a
// struct type of the target packages (it may name a field), an error when
// it does but the method's body is none of the shapes resolveRoleBody
// reads.
func resolveRoleMethod(p *Program, want string) (*roleMethod, error) {
	pkgPath, typeName, method, ok := splitMethodName(want)
	if !ok {
		return nil, nil
	}
	for _, sp := range p.Targets {
		if sp.Pkg.Path() != pkgPath {
			continue
		}
		tn, ok := sp.Pkg.Scope().Lookup(typeName).(*types.TypeName)
		if !ok {
			return nil, nil
		}
		fn := roleMethodFunc(p, tn, method)
		if fn == nil {
			return nil, nil
		}
		m, found := resolveRoleBody(p, fn)
		if m == nil {
			return nil, fmt.Errorf("target.role: the method %s does not return a role field: %s; name the field instead (target.role: pkg/path.Type.field)", want, found)
		}
		return m, nil
	}
	return nil, nil
}

// splitMethodName splits "pkg/path.(*T).M" or "pkg/path.T.M".
func splitMethodName(s string) (pkgPath, typeName, method string, ok bool) {
	i := strings.LastIndex(s, ".")
	if i < 0 {
		return "", "", "", false
	}
	rest, method := s[:i], s[i+1:]
	if strings.HasSuffix(rest, ")") {
		j := strings.LastIndex(rest, ".(")
		if j < 0 {
			return "", "", "", false
		}
		return rest[:j], strings.TrimPrefix(rest[j+2:len(rest)-1], "*"), method, true
	}
	j := strings.LastIndex(rest, ".")
	if j < 0 {
		return "", "", "", false
	}
	return rest[:j], rest[j+1:], method, true
}

// roleMethodFunc is the method called name declared on tn, a struct type,
// with a body; nil if there is none (name may be a field).
func roleMethodFunc(p *Program, tn *types.TypeName, name string) *ssa.Function {
	if tn.IsAlias() {
		return nil
	}
	if _, ok := tn.Type().Underlying().(*types.Struct); !ok {
		return nil
	}
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), false, tn.Pkg(), name)
	f, ok := obj.(*types.Func)
	if !ok || f.Pkg() != tn.Pkg() {
		return nil
	}
	fn := p.SSA.FuncValue(f)
	if fn == nil || len(fn.Blocks) == 0 {
		return nil
	}
	return fn
}

// resolveRoleBody reads a role method's body: every return of one result
// returns a field of a struct type of the target packages (x.f, an atomic
// Load of it, or one level of getter that returns it), or compares one
// with a constant (x.f == Leader), the same field each time; returns of
// constants (a nil receiver's false) are passed over while another
// return reads the field. Otherwise it says what it found instead.
func resolveRoleBody(p *Program, fn *ssa.Function) (*roleMethod, string) {
	owners := fieldOwners(p)
	var got *roleMethod
	var fields []string
	found := "" // what a return of a constant says
	for _, b := range fn.Blocks {
		for _, ins := range b.Instrs {
			ret, ok := ins.(*ssa.Return)
			if !ok {
				continue
			}
			if len(ret.Results) != 1 {
				return nil, fmt.Sprintf("it returns %d results", len(ret.Results))
			}
			v := unconvert(ret.Results[0])
			if _, ok := v.(*ssa.Const); ok {
				if found == "" {
					found = "it returns a constant"
				}
				continue
			}
			fld, leader, why := comparedField(v)
			if fld == nil {
				return nil, why
			}
			if owners[fld] == nil {
				return nil, "it reads the field " + fld.Name() + " of no struct type of the target packages"
			}
			fields = append(fields, fld.Name())
			if got != nil && (got.field != fld || !sameConst(got.leader, leader)) {
				sort.Strings(fields)
				return nil, "it reads several fields or values (" + strings.Join(fields, ", ") + ")"
			}
			got = &roleMethod{fn: fn, owner: owners[fld], field: fld, leader: leader}
		}
	}
	if got == nil {
		if found == "" {
			found = "it returns no value"
		}
		return nil, found
	}
	return got, ""
}

func sameConst(a, b *ssa.Const) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value != nil && b.Value != nil && a.Value.Kind() == b.Value.Kind() && constant.Compare(a.Value, token.EQL, b.Value)
}

// comparedField is the field v reads, and the constant it compares it with
// (x.f == c) if any; else nil and what v is.
func comparedField(v ssa.Value) (*types.Var, *ssa.Const, string) {
	if op, ok := v.(*ssa.BinOp); ok && op.Op == token.EQL {
		for _, pair := range [][2]ssa.Value{{op.X, op.Y}, {op.Y, op.X}} {
			c, ok := unconvert(pair[1]).(*ssa.Const)
			if !ok {
				continue
			}
			fld, why := readField(pair[0], 1)
			if fld == nil {
				return nil, nil, why
			}
			return fld, c, ""
		}
		return nil, nil, "it compares two values that are not a constant (" + op.String() + ")"
	}
	fld, why := readField(v, 1)
	return fld, nil, why
}

// readField is the field v reads: x.f, *&x.f, a sync/atomic Load of it
// (n.leader.Load(), atomic.LoadUint32(&r.state)), or, while getters > 0,
// the field a static call of a method returns (r.getState()).
func readField(v ssa.Value, getters int) (*types.Var, string) {
	v = unconvert(v)
	if fld := loadedField(v); fld != nil {
		return fld, ""
	}
	switch x := v.(type) {
	case *ssa.Call:
		common := x.Common()
		if common.IsInvoke() {
			return nil, "it calls the interface method " + common.Method.Name()
		}
		callee := common.StaticCallee()
		if callee == nil {
			return nil, "it calls a function value"
		}
		if callee.Pkg != nil && callee.Pkg.Pkg.Path() == "sync/atomic" && strings.HasPrefix(callee.Name(), "Load") && len(common.Args) == 1 {
			if fa, ok := unconvert(common.Args[0]).(*ssa.FieldAddr); ok {
				if fld := fieldVar(fa.X.Type(), fa.Field, true); fld != nil {
					return fld, ""
				}
			}
		}
		if getters > 0 && len(callee.Blocks) > 0 && callee.Signature.Recv() != nil && len(common.Args) == 1 {
			var got *types.Var
			for _, b := range callee.Blocks {
				for _, ins := range b.Instrs {
					ret, ok := ins.(*ssa.Return)
					if !ok || len(ret.Results) != 1 {
						continue
					}
					fld, _ := readField(ret.Results[0], getters-1)
					if fld == nil || got != nil && fld != got {
						return nil, "it calls " + callee.String() + ", which returns no one field"
					}
					got = fld
				}
			}
			if got != nil {
				return got, ""
			}
		}
		return nil, "it calls " + callee.String()
	case *ssa.Phi:
		return nil, "it combines several values (&&, || or branches)"
	case *ssa.BinOp:
		return nil, "it computes " + x.String()
	case *ssa.UnOp:
		return nil, "it computes " + x.String()
	}
	return nil, "it returns " + v.String()
}

// unconvert strips conversions off v, and follows a load of a local
// stored once (the result slot of a function with a defer) to the stored
// value.
func unconvert(v ssa.Value) ssa.Value {
	for {
		switch x := v.(type) {
		case *ssa.Convert:
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		case *ssa.UnOp:
			stored := storedOnce(x)
			if stored == nil {
				return v
			}
			v = stored
		default:
			return v
		}
	}
}

// storedOnce is the value stored in the local that load reads, when it is
// stored once; nil otherwise.
func storedOnce(load *ssa.UnOp) ssa.Value {
	alloc, ok := load.X.(*ssa.Alloc)
	if !ok || load.Op != token.MUL || alloc.Heap {
		return nil
	}
	var stored ssa.Value
	for _, r := range *alloc.Referrers() {
		st, ok := r.(*ssa.Store)
		if !ok || st.Addr != alloc {
			continue
		}
		if stored != nil {
			return nil
		}
		stored = st.Val
	}
	return stored
}

// suggest is, when the target has no role field of the shapes the pass
// picks, the first role method (roleMethodNames, then by package and type
// name) of a struct type of the target packages that reads a role field
// target.role may name, said as a hint; "" if none.
func (s *roleSearch) suggest() string {
	for _, name := range roleMethodNames {
		for _, sp := range s.u.Prog.Targets {
			scope := sp.Pkg.Scope()
			for _, tname := range scope.Names() {
				tn, ok := scope.Lookup(tname).(*types.TypeName)
				if !ok {
					continue
				}
				fn := roleMethodFunc(s.u.Prog, tn, name)
				if fn == nil {
					continue
				}
				m, _ := resolveRoleBody(s.u.Prog, fn)
				if m == nil {
					continue
				}
				// A named integer that is no role type only when the
				// method compares it with a constant: a State() of a
				// connection returns one too.
				var fld *types.Var
				if m.leader != nil {
					fld = m.field
				}
				if _, ok := s.field(m.fieldName(), fld); !ok {
					continue
				}
				return fmt.Sprintf("no role field found; %s reads %s.%s: set target.role: %s", fn.RelString(fn.Pkg.Pkg), m.owner.Name(), m.field.Name(), m.name())
			}
		}
	}
	return ""
}
