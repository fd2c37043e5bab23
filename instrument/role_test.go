package instrument

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// TestRoleEdits hooks the three role write shapes and checks that the
// rewritten file compiles, keeps its positions and reports the written
// value; a value with side effects is not hooked.
func TestRoleEdits(t *testing.T) {
	const src = `package p

import "sync/atomic"

type State uint32

const (
	Follower State = iota
	Leader
)

type node struct {
	state  State
	astate State
	nstate atomic.Int32
}

func pick() State { return Leader }

func (n *node) become(s State) {
	n.state = s
	atomic.StoreUint32((*uint32)(&n.astate), uint32(s)); n.nstate.Store(int32(s))
	switch s {
	case Leader:
		n.state, n.astate = Leader, s
	}
	n.nstate.Store(int32(pick()))
}
`
	fset, f, info, pkg := typecheck(t, src)
	var writes []*catalog.RoleWrite
	add := func(shape string, p token.Pos) {
		pos := fset.Position(p)
		writes = append(writes, &catalog.RoleWrite{ID: "role:w" + string(rune('0'+len(writes))), Shape: shape, File: pos.Filename, Line: pos.Line, Col: pos.Column})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if sel, ok := n.Lhs[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "state" {
				add(catalog.WriteAssign, sel.Sel.Pos())
			}
		case *ast.CallExpr:
			switch fun := n.Fun.(type) {
			case *ast.SelectorExpr:
				switch fun.Sel.Name {
				case "StoreUint32":
					add(catalog.WriteAtomic, n.Lparen)
				case "Store":
					add(catalog.WriteMethod, n.Lparen)
				}
			}
		}
		return true
	})
	if len(writes) != 5 {
		t.Fatalf("%d writes in the source, want 5", len(writes))
	}
	out := rewriteFile(fileInput{src: []byte(src), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p.go", roles: writes}, nil)
	var hooks []string
	for _, e := range out.edits {
		if e.role == nil {
			t.Errorf("edit %+v is no role hook", e)
			continue
		}
		hooks = append(hooks, e.prefix[:strings.Index(e.prefix, "/*line")])
	}
	want := []string{
		"; gofaultagent.Role(int64(n.state)); ",
		"; gofaultagent.Role(int64(uint32(s))); ",
		"; gofaultagent.Role(int64(int32(s))); ",
		"; gofaultagent.Role(int64(n.state)); ",
	}
	if strings.Join(hooks, "\n") != strings.Join(want, "\n") {
		t.Errorf("hooks\n%s\nwant\n%s", strings.Join(hooks, "\n"), strings.Join(want, "\n"))
	}
	if r := out.skippedRoles[writes[4].ID]; r != SkipRoleValue || len(out.skippedRoles) != 1 {
		t.Errorf("skipped %v, want only %s: %s", out.skippedRoles, writes[4].ID, SkipRoleValue)
	}
	checkStatesCompile(t, out.src)
	samePositions(t, src, out.src)
}

// TestRoleEditsStringBool hooks the writes of a string role and of bool
// roles (an assignment, an atomic.Bool's Store): each reports its value's
// number among the role's values, and the rewritten file compiles.
func TestRoleEditsStringBool(t *testing.T) {
	const src = `package p

import "sync/atomic"

type State string

type node struct {
	state    string
	role     State
	isLeader bool
	amLeader atomic.Bool
}

func (n *node) become(s string) {
	n.state = s
	n.role = State(s)
	n.isLeader = s == "leader"
	n.amLeader.Store(false)
}
`
	fset, f, info, pkg := typecheck(t, src)
	var writes []*catalog.RoleWrite
	ast.Inspect(f, func(n ast.Node) bool {
		var shape string
		var p token.Pos
		switch n := n.(type) {
		case *ast.AssignStmt:
			shape, p = catalog.WriteAssign, n.Lhs[0].(*ast.SelectorExpr).Sel.Pos()
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Store" {
				shape, p = catalog.WriteMethod, n.Lparen
			}
		}
		if shape != "" {
			pos := fset.Position(p)
			writes = append(writes, &catalog.RoleWrite{ID: "role:w" + strconv.Itoa(len(writes)), Shape: shape, File: pos.Filename, Line: pos.Line, Col: pos.Column})
		}
		return true
	})
	values := []catalog.RoleValue{{Value: 1, Name: "candidate"}, {Value: 2, Name: "follower"}, {Value: 3, Name: "leader"}}
	out := rewriteFile(fileInput{src: []byte(src), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p.go", roles: writes, roleValues: values}, nil)
	var hooks []string
	for _, e := range out.edits {
		hooks = append(hooks, e.prefix[:strings.Index(e.prefix, "/*line")])
	}
	want := []string{
		`; gofaultagent.Role(map[string]int64{"candidate": 1, "follower": 2, "leader": 3}[string(n.state)]); `,
		`; gofaultagent.Role(map[string]int64{"candidate": 1, "follower": 2, "leader": 3}[string(n.role)]); `,
		`; gofaultagent.Role(map[bool]int64{true: 1}[bool(n.isLeader)]); `,
		`; gofaultagent.Role(map[bool]int64{true: 1}[bool(false)]); `,
	}
	if strings.Join(hooks, "\n") != strings.Join(want, "\n") || len(out.skippedRoles) != 0 {
		t.Errorf("hooks\n%s\nwant\n%s\nskipped %v", strings.Join(hooks, "\n"), strings.Join(want, "\n"), out.skippedRoles)
	}
	checkStatesCompile(t, out.src)
	samePositions(t, src, out.src)
}
