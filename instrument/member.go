package instrument

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/packages"
)

// memberRule is a parsed Target.Member, "pkg/path.Type.field": the type
// whose values are the members of an in-process cluster and the field
// that tells them apart.
type memberRule struct {
	pkg, typ, field string
}

// parseMember parses a member rule, "pkg/path.Type.field".
func parseMember(s string) (memberRule, error) {
	rest, field, ok1 := cutLast(s, ".")
	pkg, typ, ok2 := cutLast(rest, ".")
	if !ok1 || !ok2 || pkg == "" || !token.IsIdentifier(typ) || !token.IsIdentifier(field) || strings.HasSuffix(pkg, "/") {
		return memberRule{}, fmt.Errorf("member rule %q: want pkg/path.Type.field, e.g. github.com/hashicorp/raft.Raft.localID", s)
	}
	return memberRule{pkg: pkg, typ: typ, field: field}, nil
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// memberType is a member rule checked against the loaded packages: the
// member type's object.
type memberType struct {
	rule memberRule
	obj  *types.TypeName
	// addr is the field holding the member's transport address
	// (Transport.Address), "" for none.
	addr string
}

// resolveMember checks rule against the loaded packages: the package is
// loaded, the type is a struct type declared there, and the field is a
// string-typed field of it (promoted fields included).
func resolveMember(rule memberRule, pkgs map[string]*packages.Package) (*memberType, error) {
	p := pkgs[rule.pkg]
	if p == nil || p.Types == nil {
		return nil, fmt.Errorf("member rule %s.%s.%s: package %s is not among the packages instrumented (name it in the packages to analyse)", rule.pkg, rule.typ, rule.field, rule.pkg)
	}
	obj, ok := p.Types.Scope().Lookup(rule.typ).(*types.TypeName)
	if !ok {
		return nil, fmt.Errorf("member rule %s.%s.%s: package %s declares no type %s", rule.pkg, rule.typ, rule.field, rule.pkg, rule.typ)
	}
	if _, ok := obj.Type().Underlying().(*types.Struct); !ok {
		return nil, fmt.Errorf("member rule %s.%s.%s: %s is not a struct type", rule.pkg, rule.typ, rule.field, rule.typ)
	}
	f, _, _ := types.LookupFieldOrMethod(types.NewPointer(obj.Type()), true, p.Types, rule.field)
	v, ok := f.(*types.Var)
	if !ok || !v.IsField() {
		return nil, fmt.Errorf("member rule %s.%s.%s: type %s has no field %s", rule.pkg, rule.typ, rule.field, rule.typ, rule.field)
	}
	if b, ok := v.Type().Underlying().(*types.Basic); !ok || b.Info()&types.IsString == 0 {
		return nil, fmt.Errorf("member rule %s.%s.%s: field %s is a %s, not a string type", rule.pkg, rule.typ, rule.field, rule.field, v.Type())
	}
	return &memberType{rule: rule, obj: obj}, nil
}

// memberRecv is the receiver name memberEdits gives a method of the
// member type whose receiver has none.
const memberRecv = "gofaultRecv"

// memberEdits builds the hooks of the methods of the member type in one
// file. Right after the "{" of each method's body comes, on the same line,
//
//	if r != nil { defer gofaultagent.MemberExit(gofaultagent.MemberEnter(string(r.field))) }; /*line f:L:C*/
//
// so that the goroutine running the method is the member's while it runs
// (agent.MemberEnter)
// (without the nil check for a value receiver), r the receiver, named
// gofaultRecv where it has no name. A method whose receiver is "_" is
// left alone (their count is returned), and so is a //go:nosplit one.
func memberEdits(in fileInput, mt *memberType) (edits []siteEdit, blank int) {
	if mt == nil || in.info == nil {
		return nil, 0
	}
	tf := in.fset.File(in.file.Pos())
	for _, d := range in.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 || fd.Body == nil {
			continue
		}
		if nosplit(fd) {
			continue // no room on the stack for the hook's calls
		}
		recv := fd.Recv.List[0]
		t := in.info.TypeOf(recv.Type)
		if t == nil {
			continue
		}
		ptr := false
		if p, ok := t.(*types.Pointer); ok {
			t, ptr = p.Elem(), true
		}
		named, ok := t.(*types.Named)
		if !ok || named.Origin().Obj() != mt.obj {
			continue
		}
		name := memberRecv
		switch {
		case len(recv.Names) == 0:
			off, at := tf.Offset(recv.Type.Pos()), tf.Position(recv.Type.Pos())
			edits = append(edits, siteEdit{member: memberNamed, start: off, end: off,
				prefix:    fmt.Sprintf("%s /*line %s:%d:%d*/", memberRecv, in.lineName, at.Line, at.Column),
				startLine: at.Line, endLine: at.Line})
		case recv.Names[0].Name == "_":
			blank++
			continue
		default:
			name = recv.Names[0].Name
		}
		call := fmt.Sprintf("defer %[1]s.MemberExit(%[1]s.MemberEnter(string(%[2]s.%[3]s)))", agentAlias, name, mt.rule.field)
		if mt.addr != "" {
			call = fmt.Sprintf("defer %[1]s.MemberExit(%[1]s.MemberEnterAt(string(%[2]s.%[3]s), string(%[2]s.%[4]s)))", agentAlias, name, mt.rule.field, mt.addr)
		}
		if ptr {
			call = fmt.Sprintf("if %s != nil { %s }", name, call)
		}
		after := tf.Position(fd.Body.Lbrace + 1)
		off := tf.Offset(fd.Body.Lbrace) + 1
		edits = append(edits, siteEdit{member: memberHook, start: off, end: off,
			prefix:    fmt.Sprintf(" %s; /*line %s:%d:%d*/", call, in.lineName, after.Line, after.Column),
			startLine: after.Line, endLine: after.Line})
	}
	return edits, blank
}

// nosplit reports whether fd carries a //go:nosplit directive.
func nosplit(fd *ast.FuncDecl) bool {
	if fd.Doc == nil {
		return false
	}
	for _, c := range fd.Doc.List {
		if strings.HasPrefix(c.Text, "//go:nosplit") {
			return true
		}
	}
	return false
}

// Kinds of member edits (siteEdit.member).
const (
	memberHook  = 1 // the hook at a method's entry
	memberNamed = 2 // a name given to an unnamed receiver
)
