package instrument

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
)

// unsafeAlias is the name rewritten files import package unsafe under
// when a state hook takes the address of its task instance.
const unsafeAlias = "gofaultunsafe"

// Skip reasons of state hooks.
const (
	SkipStateNotFound = "state block not found"
)

// stateEdits builds the hooks of the abstract states of one file. Each
// state's block (after its '{') or case clause (after its ':') starts with
//
//	gofaultagent.State(T, S, uintptr(gofaultunsafe.Pointer(inst))); /*line f:L:C*/
//
// on the same line, the /*line*/ directive giving the rest of the line its
// original columns. inst is the state's Inst when it names, at that point,
// a variable of pointer type; &inst for a variable of another type (a
// value receiver); 0 when Inst is empty or names nothing there. It returns
// the edits and the IDs of the states it could not hook, with the reason.
func stateEdits(in fileInput, states []*catalog.State) ([]siteEdit, map[string]string) {
	skipped := map[string]string{}
	if len(states) == 0 {
		return nil, skipped
	}
	if isCgo(in.file) {
		for _, s := range states {
			skipped[s.ID] = SkipCgo
		}
		return nil, skipped
	}
	tf := in.fset.File(in.file.Pos())
	var edits []siteEdit
	for _, s := range states {
		off, ok := stateOffset(in, tf, s)
		if !ok {
			skipped[s.ID] = SkipStateNotFound
			continue
		}
		pos := tf.Pos(off + 1)
		inst := instArg(in, pos, s.Inst)
		p := tf.Position(pos)
		sep := ""
		if in.src[off] == '}' {
			// After a guard clause's if statement.
			sep = ";"
		}
		text := fmt.Sprintf("%s %s.State(%d, %d, %s); /*line %s:%d:%d*/", sep, agentAlias, s.Task, s.Index, inst, in.lineName, p.Line, p.Column)
		edits = append(edits, siteEdit{
			state:     s,
			start:     off + 1,
			end:       off + 1,
			prefix:    text,
			startLine: p.Line,
			endLine:   p.Line,
		})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	return edits, skipped
}

// stateOffset returns the byte offset of the '{', ':' or '}' a state
// names, checking that it opens a block, ends a case clause, or closes
// the block of an if statement without else that sits in a statement
// list (a guard clause: the hook goes after the if statement).
func stateOffset(in fileInput, tf *token.File, s *catalog.State) (int, bool) {
	if s.Line < 1 || s.Line > tf.LineCount() || s.Col < 1 {
		return 0, false
	}
	off := tf.Offset(tf.LineStart(s.Line)) + s.Col - 1
	if off >= len(in.src) {
		return 0, false
	}
	want := tf.Pos(off)
	found := false
	ast.Inspect(in.file, func(n ast.Node) bool {
		if n == nil || found || want < n.Pos() || want >= n.End() {
			return false
		}
		switch n := n.(type) {
		case *ast.BlockStmt:
			found = n.Lbrace == want || guardIn(n.List, want)
		case *ast.CaseClause:
			found = n.Colon == want || guardIn(n.Body, want)
		case *ast.CommClause:
			found = n.Colon == want || guardIn(n.Body, want)
		}
		return !found
	})
	return off, found
}

// guardIn reports whether one of list's statements is an if statement
// without else whose block closes at pos.
func guardIn(list []ast.Stmt, pos token.Pos) bool {
	for _, st := range list {
		if n, ok := st.(*ast.IfStmt); ok && n.Else == nil && n.Body.Rbrace == pos {
			return true
		}
	}
	return false
}

// instArg returns the hook's instance argument for expression inst at pos.
func instArg(in fileInput, pos token.Pos, inst string) string {
	if inst == "" || in.pkg == nil {
		return "0"
	}
	scope := in.pkg.Scope().Innermost(pos)
	if scope == nil {
		return "0"
	}
	_, obj := scope.LookupParent(inst, pos)
	v, ok := obj.(*types.Var)
	if !ok {
		return "0"
	}
	if _, ptr := v.Type().Underlying().(*types.Pointer); ptr {
		return fmt.Sprintf("uintptr(%s.Pointer(%s))", unsafeAlias, inst)
	}
	if _, param := v.Type().Underlying().(*types.TypeParam); param {
		return "0"
	}
	return fmt.Sprintf("uintptr(%s.Pointer(&%s))", unsafeAlias, inst)
}

// usesUnsafe reports whether any edit's text needs the unsafe import.
func usesUnsafe(edits []siteEdit) bool {
	for _, e := range edits {
		if e.state != nil && strings.Contains(e.prefix, unsafeAlias+".") {
			return true
		}
	}
	return false
}
