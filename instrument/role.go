package instrument

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"

	"github.com/gofault/gofault/catalog"
)

// Skip reasons of role hooks.
const (
	SkipRoleNotFound = "role write not found"
	SkipRoleValue    = "role value not side-effect free"
)

// roleEdits builds the hooks of the role writes of one file. After the
// statement that writes the role field comes, on the same line,
//
//	; gofaultagent.Role(int64(V)); /*line f:L:C*/
//
// where V is the field just assigned (x.f = v) or the value stored (the
// second argument of atomic.StoreT, the argument of a sync/atomic type's
// Store method), provided it has no side effects: identifiers, selectors,
// constants, conversions. A string or bool role (target.role naming one)
// reports V's number instead (roleArg). It returns the edits and the IDs
// of the writes it could not hook, with the reason.
func roleEdits(in fileInput, writes []*catalog.RoleWrite) ([]siteEdit, map[string]string) {
	skipped := map[string]string{}
	if len(writes) == 0 {
		return nil, skipped
	}
	if isCgo(in.file) {
		for _, w := range writes {
			skipped[w.ID] = SkipCgo
		}
		return nil, skipped
	}
	tf := in.fset.File(in.file.Pos())
	var edits []siteEdit
	for _, w := range writes {
		if w.Line < 1 || w.Line > tf.LineCount() || w.Col < 1 {
			skipped[w.ID] = SkipRoleNotFound
			continue
		}
		pos := tf.Pos(tf.Offset(tf.LineStart(w.Line)) + w.Col - 1)
		stmt, value := roleStmt(in, pos, w.Shape)
		if stmt == nil {
			skipped[w.ID] = SkipRoleNotFound
			continue
		}
		if !pure(in, value) {
			skipped[w.ID] = SkipRoleValue
			continue
		}
		v := string(in.src[tf.Offset(value.Pos()):tf.Offset(value.End())])
		end := tf.Offset(stmt.End())
		p := tf.Position(stmt.End())
		start := tf.Position(stmt.Pos())
		text := fmt.Sprintf("; %s.Role(%s); /*line %s:%d:%d*/", agentAlias, roleArg(in, value, v), in.lineName, p.Line, p.Column)
		edits = append(edits, siteEdit{
			role:      w,
			start:     end,
			end:       end,
			prefix:    text,
			startLine: start.Line,
			endLine:   p.Line,
		})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	return edits, skipped
}

// roleStmt finds the statement of a statement list that writes the role at
// pos in the given shape, and the expression whose value the hook reports.
func roleStmt(in fileInput, pos token.Pos, shape string) (ast.Stmt, ast.Expr) {
	var stmt ast.Stmt
	var value ast.Expr
	match := func(s ast.Stmt) bool {
		switch s := s.(type) {
		case *ast.AssignStmt:
			if shape != catalog.WriteAssign || s.Tok != token.ASSIGN {
				return false
			}
			for _, l := range s.Lhs {
				if sel, ok := ast.Unparen(l).(*ast.SelectorExpr); ok && sel.Sel.Pos() == pos {
					stmt, value = s, sel
					return true
				}
			}
		case *ast.ExprStmt:
			call, ok := s.X.(*ast.CallExpr)
			if !ok || call.Lparen != pos {
				return false
			}
			switch {
			case shape == catalog.WriteAtomic && len(call.Args) == 2:
				stmt, value = s, call.Args[1]
				return true
			case shape == catalog.WriteMethod && len(call.Args) == 1:
				stmt, value = s, call.Args[0]
				return true
			}
		}
		return false
	}
	list := func(l []ast.Stmt) {
		for _, s := range l {
			if stmt == nil && s.Pos() <= pos && pos < s.End() && match(s) {
				return
			}
		}
	}
	ast.Inspect(in.file, func(n ast.Node) bool {
		if n == nil || stmt != nil || pos < n.Pos() || pos >= n.End() {
			return false
		}
		switch n := n.(type) {
		case *ast.BlockStmt:
			list(n.List)
		case *ast.CaseClause:
			list(n.Body)
		case *ast.CommClause:
			list(n.Body)
		}
		return stmt == nil
	})
	return stmt, value
}

// pure reports whether evaluating e again has no side effects:
// identifiers, constants, selectors, dereferences and conversions of such.
func pure(in fileInput, e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident, *ast.BasicLit:
		return true
	case *ast.ParenExpr:
		return pure(in, e.X)
	case *ast.SelectorExpr:
		return pure(in, e.X)
	case *ast.StarExpr:
		return pure(in, e.X)
	case *ast.UnaryExpr:
		return e.Op != token.ARROW && pure(in, e.X)
	case *ast.CallExpr:
		if in.info == nil || len(e.Args) != 1 {
			return false
		}
		tv, ok := in.info.Types[e.Fun]
		return ok && tv.IsType() && pure(in, e.Args[0])
	}
	return false
}

// roleArg is the int64 expression a role hook reports for the value e
// (source text v): v converted, for an integer role; for a string role
// the number of v among the role's values (in.roleValues, whose names are
// the strings), 0 for another string; for a bool role 1 for true, 0 for
// false.
func roleArg(in fileInput, e ast.Expr, v string) string {
	var b *types.Basic
	if in.info != nil {
		if t := in.info.TypeOf(e); t != nil {
			b, _ = t.Underlying().(*types.Basic)
		}
	}
	switch {
	case b != nil && b.Info()&types.IsString != 0:
		pairs := make([]string, len(in.roleValues))
		for i, x := range in.roleValues {
			pairs[i] = fmt.Sprintf("%s: %d", strconv.Quote(x.Name), x.Value)
		}
		return fmt.Sprintf("map[string]int64{%s}[string(%s)]", strings.Join(pairs, ", "), v)
	case b != nil && b.Info()&types.IsBoolean != 0:
		return fmt.Sprintf("map[bool]int64{true: 1}[bool(%s)]", v)
	}
	return "int64(" + v + ")"
}
