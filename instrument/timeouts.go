package instrument

import (
	"fmt"
	"go/ast"
	"go/types"
	"strconv"

	"github.com/gofault/gofault/catalog"
)

// Skip reasons of timeout points, as counted in Stats.SkipReasons.
const (
	SkipTimeoutNotFound = "timeout expression not found"
	SkipTimeoutType     = "timeout not a duration"
)

// timeoutEdits wraps the duration expression of each timeout point of one
// file so that its value is reported to the agent:
//
//	context.WithTimeout(ctx, gofaultagent.Timeout(N, /*line f:L:C*/5*time.Second)/*line f:L:C2*/)
//
// The expression keeps its own positions through the /*line*/ directives,
// and so does the rest of the line after it. An expression of another
// named duration type T (underlying int64) becomes
// T(gofaultagent.Timeout(N, time.Duration(expr))). The expression is an
// argument of a call or an operand of a comparison starting at the
// point's position. It returns the edits and the IDs of the points it
// could not wrap, with the reason.
func timeoutEdits(in fileInput, q *qualifier, points []*catalog.TimeoutPoint) ([]siteEdit, map[string]string) {
	skipped := map[string]string{}
	if len(points) == 0 {
		return nil, skipped
	}
	if isCgo(in.file) {
		for _, p := range points {
			skipped[p.ID] = SkipCgo
		}
		return nil, skipped
	}
	tf := in.fset.File(in.file.Pos())
	want := map[[2]int]*catalog.TimeoutPoint{}
	for _, p := range points {
		want[[2]int{p.Line, p.Col}] = p
	}
	found := map[*catalog.TimeoutPoint]ast.Expr{}
	consider := func(e ast.Expr) {
		pos := tf.Position(e.Pos())
		p := want[[2]int{pos.Line, pos.Column}]
		if p == nil {
			return
		}
		if old, ok := found[p]; !ok || e.End() > old.End() {
			found[p] = e
		}
	}
	ast.Inspect(in.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			for _, a := range n.Args {
				consider(a)
			}
		case *ast.BinaryExpr:
			consider(n.X)
			consider(n.Y)
		}
		return true
	})
	var edits []siteEdit
	for _, p := range points {
		e, ok := found[p]
		if !ok {
			skipped[p.ID] = SkipTimeoutNotFound
			continue
		}
		edit, reason := wrapTimeout(in, q, p, e)
		if reason != "" {
			skipped[p.ID] = reason
			continue
		}
		edits = append(edits, edit)
	}
	return edits, skipped
}

// wrapTimeout builds the edit of one timeout expression.
func wrapTimeout(in fileInput, q *qualifier, p *catalog.TimeoutPoint, e ast.Expr) (siteEdit, string) {
	tv, ok := in.info.Types[e]
	if !ok || tv.Type == nil {
		return siteEdit{}, SkipNoType
	}
	start := in.fset.Position(e.Pos())
	end := in.fset.Position(e.End())
	idx := strconv.FormatUint(uint64(p.Index), 10)
	open := fmt.Sprintf("%s.Timeout(%s, ", agentAlias, idx)
	close := ")"
	if !isDuration(tv.Type) {
		b, ok := tv.Type.Underlying().(*types.Basic)
		if !ok || b.Kind() != types.Int64 {
			return siteEdit{}, SkipTimeoutType
		}
		timePkg := findImport(in.pkg, "time")
		trial := q.trial()
		if timePkg == nil || !trial.nameable(tv.Type) {
			return siteEdit{}, SkipTimeoutType
		}
		name := types.TypeString(tv.Type, trial.qualify)
		q.commit(trial)
		open = fmt.Sprintf("%s(%s.Timeout(%s, %s.Duration(", name, agentAlias, idx, q.qualify(timePkg))
		close = ")))"
	}
	return siteEdit{
		point:     p,
		start:     start.Offset,
		end:       end.Offset,
		prefix:    fmt.Sprintf("%s/*line %s:%d:%d*/", open, in.lineName, start.Line, start.Column),
		suffix:    fmt.Sprintf("%s/*line %s:%d:%d*/", close, in.lineName, end.Line, end.Column),
		startLine: start.Line,
		endLine:   end.Line,
	}, ""
}

// isDuration reports whether t is time.Duration or an untyped constant
// (which converts to it).
func isDuration(t types.Type) bool {
	if b, ok := t.(*types.Basic); ok {
		return b.Info()&types.IsUntyped != 0 && b.Info()&types.IsNumeric != 0
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Duration"
}

// findImport returns the package with import path path among pkg's
// imports, directly or not, or nil.
func findImport(pkg *types.Package, path string) *types.Package {
	seen := map[*types.Package]bool{}
	var visit func(p *types.Package) *types.Package
	visit = func(p *types.Package) *types.Package {
		if seen[p] {
			return nil
		}
		seen[p] = true
		if p.Path() == path {
			return p
		}
		for _, q := range p.Imports() {
			if r := visit(q); r != nil {
				return r
			}
		}
		return nil
	}
	return visit(pkg)
}
