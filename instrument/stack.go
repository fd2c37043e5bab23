package instrument

import (
	"fmt"
	"go/ast"
	"go/types"
)

// stackCalls returns the calls of runtime.Stack in file: in a test build
// each becomes agent.StackOf(runtime.Stack)(...) (stackEdits), so that
// the goroutine lists a test's leak check takes (etcd's testutil,
// goleak) leave out the agent's own goroutines, which live as long as the
// test process and would otherwise be taken for leaked ones.
func stackCalls(file *ast.File, info *types.Info) []*ast.CallExpr {
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
		if f, ok := info.Uses[sel.Sel].(*types.Func); ok && f.Pkg() != nil && f.Pkg().Path() == "runtime" && f.Name() == "Stack" {
			calls = append(calls, call)
		}
		return true
	})
	return calls
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
		from, to := tf.Position(call.Fun.Pos()), tf.Position(call.Fun.End())
		edits = append(edits, siteEdit{stack: true, start: from.Offset, end: to.Offset,
			prefix:    fmt.Sprintf("%s.StackOf(/*line %s:%d:%d*/", agentAlias, in.lineName, from.Line, from.Column),
			suffix:    fmt.Sprintf(")/*line %s:%d:%d*/", in.lineName, to.Line, to.Column),
			startLine: from.Line, endLine: to.Line})
	}
	return edits
}
