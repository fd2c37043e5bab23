package instrument

import (
	"fmt"
	"go/ast"
	"path"
)

// setupPatterns returns the patterns of Target.Setup to hook in a file:
// all of them in a _test.go file of the package under test (test), none
// elsewhere.
func setupPatterns(test bool, patterns []string) []string {
	if !test {
		return nil
	}
	return patterns
}

// setupFunc is a function of a test file that a test.setup pattern
// names.
type setupFunc struct {
	decl    *ast.FuncDecl
	pattern string
}

// setupFuncs returns the functions declared in file that a pattern of
// patterns matches (path.Match): a function by its name, a method by its
// receiver's type name and its name, "Type.name" (a pointer receiver's
// too). Each is taken by the first pattern that matches it. A function
// with no body or marked //go:nosplit is left out (no room on its stack
// for the hook's calls).
func setupFuncs(file *ast.File, patterns []string) []setupFunc {
	if len(patterns) == 0 {
		return nil
	}
	var out []setupFunc
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || nosplit(fd) {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			t := recvTypeName(fd.Recv.List[0].Type)
			if t == "" {
				continue
			}
			name = t + "." + name
		}
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				out = append(out, setupFunc{fd, p})
				break
			}
		}
	}
	return out
}

// recvTypeName is the name of a receiver's type: T of T, *T, T[P] and
// *T[P]; "" for anything else.
func recvTypeName(x ast.Expr) string {
	if s, ok := x.(*ast.StarExpr); ok {
		x = s.X
	}
	switch t := x.(type) {
	case *ast.IndexExpr:
		x = t.X
	case *ast.IndexListExpr:
		x = t.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// setupEdits hooks the entry of each test setup function of the file
// (setupFuncs over in.setup): "gofaultagent.SetupEnter(); defer
// gofaultagent.SetupExit()" right after the body's "{", on its line, a
// /*line*/ directive keeping the rest of the line where it was. While
// such a call runs, in any goroutine, the agent asks nothing and so no
// fault strikes the process: what the helper starts (servers, their
// goroutines) and waits for is setup, not the code under test.
func setupEdits(in fileInput) []siteEdit {
	funcs := setupFuncs(in.file, in.setup)
	if len(funcs) == 0 {
		return nil
	}
	tf := in.fset.File(in.file.Pos())
	edits := make([]siteEdit, 0, len(funcs))
	for _, f := range funcs {
		after := tf.Position(f.decl.Body.Lbrace + 1)
		off := tf.Offset(f.decl.Body.Lbrace) + 1
		edits = append(edits, siteEdit{setup: f.pattern, start: off, end: off,
			prefix:    fmt.Sprintf(" %[1]s.SetupEnter(); defer %[1]s.SetupExit(); /*line %[2]s:%[3]d:%[4]d*/", agentAlias, in.lineName, after.Line, after.Column),
			startLine: after.Line, endLine: after.Line})
	}
	return edits
}

// setupStats returns how many test setup functions were hooked and the
// patterns of patterns that matched none, in their order.
func (ov *overlaySet) setupStats(patterns []string) (int, []string) {
	n := 0
	var unmatched []string
	for _, p := range patterns {
		if ov.setupMatched[p] == 0 {
			unmatched = append(unmatched, p)
		}
		n += ov.setupMatched[p]
	}
	return n, unmatched
}
