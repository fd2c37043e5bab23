package instrument

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
)

// maxBlocks is the size of the agent's coverage table (agent.MaxBlocks):
// blocks past it are not counted.
const maxBlocks = 1 << 20

// coverPrefix starts the blame IDs of a file's block counters, so that a
// counter that does not compile drops the counters of its file only.
const coverPrefix = "cover:"

// blockEdits builds the coverage counters of one file: each basic block
// that begins a function body (of a declaration or a literal), the body
// of an if, else, for or range statement, or a case or select clause,
// starts with
//
//	if gofaultagent.Cov[N] == 0 { gofaultagent.Cov[N] = 1 };
//
// The load keeps a hot block's cache line shared between the cores that
// run it; a bare store would take the line exclusive on every execution
// and make it bounce between them (agent's BenchmarkCounter).
// on the line of its '{' or ':' (followed by a /*line*/ directive when
// code follows on that line, so the code keeps its columns), numbered from
// first in source order. This is `go tool cover -mode=set` at the level of
// bodies: a block is not split after a statement that branches. It returns
// the edits and the line of each block, in index order; it counts no
// block past maxBlocks, and none in a cgo file or a generated one (their
// code is a protocol's marshalling, hot and of no interest).
func blockEdits(in fileInput, first int) ([]siteEdit, []int) {
	if isCgo(in.file) || ast.IsGenerated(in.file) {
		return nil, nil
	}
	var opens []token.Pos // the '{' or ':' that opens each block
	body := func(b *ast.BlockStmt) {
		if b != nil {
			opens = append(opens, b.Lbrace)
		}
	}
	ast.Inspect(in.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			body(n.Body)
		case *ast.FuncLit:
			body(n.Body)
		case *ast.IfStmt:
			body(n.Body)
			if b, ok := n.Else.(*ast.BlockStmt); ok {
				body(b)
			}
		case *ast.ForStmt:
			body(n.Body)
		case *ast.RangeStmt:
			body(n.Body)
		case *ast.CaseClause:
			opens = append(opens, n.Colon)
		case *ast.CommClause:
			opens = append(opens, n.Colon)
		}
		return true
	})
	slices.Sort(opens)
	tf := in.fset.File(in.file.Pos())
	var edits []siteEdit
	var lines []int
	for _, p := range opens {
		n := first + len(lines)
		if n >= maxBlocks {
			break
		}
		if !p.IsValid() {
			continue
		}
		off := tf.Offset(p) + 1
		pos := tf.Position(tf.Pos(off))
		text := fmt.Sprintf(" if %s.Cov[%d] == 0 { %s.Cov[%d] = 1 };", agentAlias, n, agentAlias, n)
		if rest := in.src[off:]; len(bytes.TrimSpace(rest[:lineEnd(rest)])) > 0 {
			// Code follows on the line: give it back its columns.
			text += fmt.Sprintf(" /*line %s:%d:%d*/", in.lineName, pos.Line, pos.Column)
		}
		edits = append(edits, siteEdit{block: true, start: off, end: off, prefix: text, startLine: pos.Line, endLine: pos.Line})
		lines = append(lines, pos.Line)
	}
	return edits, lines
}

// lineEnd returns the length of the first line of b, without its newline.
func lineEnd(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return len(b)
}

// coverID is the blame ID of the counters of file.
func coverID(file string) string { return coverPrefix + filepath.Clean(file) }
