package instrument

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
)

// ignoredPrefix starts the blame IDs of a test file's Ignored wrappers, so
// that a wrapper that does not compile drops the wrappers of its file only.
const ignoredPrefix = "ignored:"

// ignoredID is the blame ID of the Ignored wrappers of file.
func ignoredID(file string) string { return ignoredPrefix + filepath.Clean(file) }

// maxIgnoredResults is the most results a wrapped call may have: the agent
// has Ignored, Ignored2 and Ignored3.
const maxIgnoredResults = 3

// ignoredCall is a call whose error result its statement discards, and
// how many results it has.
type ignoredCall struct {
	call    *ast.CallExpr
	results int
}

// ignoredCalls returns the calls of file (a _test.go file of the package
// under test, in a test build) whose results end in an error that the
// statement discards: an expression statement f(...), and an assignment or
// var declaration with "_" in the error's place (_ = f(), x, _ := f(),
// x, _ = f(), var x, _ = f()). Each becomes agent.Ignored(f(...))
// (ignoredEdits), which tells gofault test when the error it passes on is
// the injected one: a test that goes on after ignoring it and then fails
// made an assumption, not a finding. The call of a go or defer statement
// is not one (its results are dropped by the statement, not by the test's
// choice, and wrapping would evaluate it early); neither is a call whose
// error the test keeps, a conversion, a builtin, nor a call with more than
// three results.
func ignoredCalls(file *ast.File, info *types.Info) []ignoredCall {
	if info == nil {
		return nil
	}
	var calls []ignoredCall
	add := func(x ast.Expr, lhs []ast.Expr, names []*ast.Ident) {
		call, ok := ast.Unparen(x).(*ast.CallExpr)
		if !ok {
			return
		}
		n := errorResults(call, info)
		if n == 0 {
			return
		}
		switch {
		case lhs != nil:
			if len(lhs) != n || !isBlank(lhs[n-1]) {
				return
			}
		case names != nil:
			if len(names) != n || names[n-1].Name != "_" {
				return
			}
		}
		calls = append(calls, ignoredCall{call, n})
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.ExprStmt:
			add(s.X, nil, nil)
		case *ast.AssignStmt:
			if len(s.Rhs) == 1 && (s.Tok == token.ASSIGN || s.Tok == token.DEFINE) {
				add(s.Rhs[0], s.Lhs, nil)
			}
		case *ast.ValueSpec:
			if len(s.Values) == 1 {
				add(s.Values[0], nil, s.Names)
			}
		}
		return true
	})
	return calls
}

// errorResults returns the number of results of call when they end in
// error and are at most maxIgnoredResults, else 0 (a conversion, a
// builtin, a call without an error result).
func errorResults(call *ast.CallExpr, info *types.Info) int {
	if tv, ok := info.Types[call.Fun]; !ok || tv.IsType() || tv.IsBuiltin() {
		return 0
	}
	tv, ok := info.Types[call]
	if !ok || tv.Type == nil {
		return 0
	}
	results := []types.Type{tv.Type}
	if t, ok := tv.Type.(*types.Tuple); ok {
		results = results[:0]
		for i := range t.Len() {
			results = append(results, t.At(i).Type())
		}
	}
	n := len(results)
	if n == 0 || n > maxIgnoredResults || !types.Identical(results[n-1], types.Universe.Lookup("error").Type()) {
		return 0
	}
	return n
}

// isBlank reports whether x is the blank identifier.
func isBlank(x ast.Expr) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == "_"
}

// ignoredEdits wraps each call of the file whose error is discarded
// (ignoredCalls): f(...) becomes gofaultagent.Ignored(f(...)), or
// Ignored2, Ignored3 by its results; /*line*/ directives keep the
// original text at its line and column, and the wrapper's call is on the
// call's first line, which is the line agent.Ignored reports.
func ignoredEdits(in fileInput) []siteEdit {
	tf := in.fset.File(in.file.Pos())
	var edits []siteEdit
	for _, c := range ignoredCalls(in.file, in.info) {
		fn := "Ignored"
		if c.results > 1 {
			fn = fmt.Sprintf("Ignored%d", c.results)
		}
		e := agentWrap(in, tf, c.call, fn)
		e.ignored = true
		edits = append(edits, e)
	}
	return edits
}
