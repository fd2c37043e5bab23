package instrument

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// stackCalls returns the calls of runtime.Stack in file: in a test build
// each becomes agent.StackOf(runtime.Stack)(...) (stackEdits), so that
// the goroutine lists a test's leak check takes (etcd's testutil,
// goleak) leave out the agent's own goroutines, which live as long as the
// test process and would otherwise be taken for leaked ones.
func stackCalls(file *ast.File, info *types.Info) []*ast.CallExpr {
	return callsTo(file, info, "runtime.Stack")
}

// callsTo returns the calls of file (typed by info) whose callee is the
// function or method of full name name (types.Func.FullName:
// "runtime.Stack", "(*testing.M).Run").
func callsTo(file *ast.File, info *types.Info, name string) []*ast.CallExpr {
	if info == nil {
		return nil
	}
	var calls []*ast.CallExpr
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if f, ok := info.Uses[sel.Sel].(*types.Func); ok && f.FullName() == name {
			calls = append(calls, call)
		}
		return true
	})
	return calls
}

// agentWrap is the edit that wraps x, an expression of in's file (tf), in
// a call of the agent's function fn: x becomes gofaultagent.fn(x), with
// /*line*/ directives that keep x's text at its line and column.
func agentWrap(in fileInput, tf *token.File, x ast.Node, fn string) siteEdit {
	from, to := tf.Position(x.Pos()), tf.Position(x.End())
	return siteEdit{start: from.Offset, end: to.Offset,
		prefix:    fmt.Sprintf("%s.%s(/*line %s:%d:%d*/", agentAlias, fn, in.lineName, from.Line, from.Column),
		suffix:    fmt.Sprintf(")/*line %s:%d:%d*/", in.lineName, to.Line, to.Column),
		startLine: from.Line, endLine: to.Line}
}

// stackEdits wraps the function of each runtime.Stack call of the file
// (stackCalls): runtime.Stack(buf, all) becomes
// gofaultagent.StackOf(runtime.Stack)(buf, all), evaluating its arguments
// once, as before; /*line*/ directives keep the original text at its
// line and column.
func stackEdits(in fileInput) []siteEdit {
	tf := in.fset.File(in.file.Pos())
	var edits []siteEdit
	for _, call := range stackCalls(in.file, in.info) {
		e := agentWrap(in, tf, call.Fun, "StackOf")
		e.stack = true
		edits = append(edits, e)
	}
	return edits
}
