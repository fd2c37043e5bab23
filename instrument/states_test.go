package instrument

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// statesAt makes one state per if/else block, case clause and select case
// of function fn, and one after each if statement without else, in source
// order, with instance expression inst.
func statesAt(fset *token.FileSet, f *ast.File, fn, inst string) []*catalog.State {
	var states []*catalog.State
	add := func(p token.Pos) {
		pos := fset.Position(p)
		states = append(states, &catalog.State{
			Index: uint32(len(states) + 1), ID: fmt.Sprintf("%s#%d", fn, len(states)), Task: 1,
			File: pos.Filename, Line: pos.Line, Col: pos.Column, Inst: inst,
		})
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.IfStmt:
				add(n.Body.Lbrace)
				if e, ok := n.Else.(*ast.BlockStmt); ok {
					add(e.Lbrace)
				}
				if n.Else == nil {
					// As after a guard clause.
					add(n.Body.Rbrace)
				}
			case *ast.CaseClause:
				add(n.Colon)
			case *ast.CommClause:
				add(n.Colon)
			}
			return true
		})
	}
	return states
}

func TestStateEdits(t *testing.T) {
	const src = `package p

type node struct {
	role  int
	lead  uint64
	recvc chan int
}

type value struct{ n int }

func (n *node) run() {
	var propc chan int
	for {
		if n.role == 2 { propc = n.recvc } else { propc = nil }
		select {
		case m := <-propc:
			n.lead = uint64(m)
		case <-n.recvc:
		}
		switch n.role {
		case 1, 2: n.lead++
		default:
			n.lead = 0
		}
	}
}

func (v value) loop() {
	for v.n < 10 {
		if v.n > 2 {
			v.n++
		}
	}
}

func shadow(n *node) {
	for _, n := range []int{1} {
		if n > 0 {
			println(n)
		}
	}
}

func (n *node) guard() {
	for {
		if n.role != 2 {
			continue
		}
		n.lead++
		switch n.role {
		case 2:
			if n.lead == 0 { return }
			n.lead--
		}
	}
}

func global() {
	switch x := any(1).(type) {
	case int:
		println(x)
	}
}
`
	tests := []struct {
		fn, inst string
		want     string // the instance argument of every hook
	}{
		{"run", "n", "uintptr(gofaultunsafe.Pointer(n))"},
		{"guard", "n", "uintptr(gofaultunsafe.Pointer(n))"},
		{"loop", "v", "uintptr(gofaultunsafe.Pointer(&v))"},
		{"shadow", "n", "0"}, // n is an int in the loop: no pointer, but addressable
		{"global", "", "0"},
		{"global", "missing", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.fn+"_"+tt.inst, func(t *testing.T) {
			fset, f, info, pkg := typecheck(t, src)
			states := statesAt(fset, f, tt.fn, tt.inst)
			if len(states) == 0 {
				t.Fatal("no states")
			}
			out := rewriteFile(fileInput{src: []byte(src), file: f, fset: fset, info: info, pkg: pkg,
				lineName: "/src/p/p.go", states: states}, nil)
			if len(out.skippedStates) != 0 {
				t.Fatalf("skipped %v", out.skippedStates)
			}
			if len(out.edits) != len(states) {
				t.Fatalf("%d edits, want %d", len(out.edits), len(states))
			}
			for _, e := range out.edits {
				want := fmt.Sprintf("gofaultagent.State(1, %d, %s);", e.state.Index, tt.want)
				if tt.fn == "shadow" {
					want = fmt.Sprintf("gofaultagent.State(1, %d, uintptr(gofaultunsafe.Pointer(&n)));", e.state.Index)
				}
				if !strings.Contains(e.prefix, want) {
					t.Errorf("hook %q, want %q", e.prefix, want)
				}
			}
			checkStatesCompile(t, out.src)
			samePositions(t, src, out.src)
		})
	}
}

func TestStateEditsNotFound(t *testing.T) {
	const src = "package p\n\nfunc f(x int) {\n\tif x > 0 {\n\t\tprintln(x)\n\t}\n}\n"
	fset, f, info, pkg := typecheck(t, src)
	states := []*catalog.State{
		{Index: 1, ID: "ok", Task: 1, File: "/src/p/p.go", Line: 4, Col: 11},
		{Index: 2, ID: "not a brace", Task: 1, File: "/src/p/p.go", Line: 4, Col: 5},
		{Index: 3, ID: "past the end", Task: 1, File: "/src/p/p.go", Line: 40, Col: 1},
		{Index: 4, ID: "after the if", Task: 1, File: "/src/p/p.go", Line: 6, Col: 2},
		{Index: 5, ID: "the function's closing brace", Task: 1, File: "/src/p/p.go", Line: 7, Col: 1},
	}
	out := rewriteFile(fileInput{src: []byte(src), file: f, fset: fset, info: info, pkg: pkg, lineName: "/src/p/p.go", states: states}, nil)
	if len(out.edits) != 2 || out.edits[0].state.ID != "ok" || out.edits[1].state.ID != "after the if" {
		t.Fatalf("edits %+v", out.edits)
	}
	want := map[string]string{"not a brace": SkipStateNotFound, "past the end": SkipStateNotFound,
		"the function's closing brace": SkipStateNotFound}
	if fmt.Sprint(out.skippedStates) != fmt.Sprint(want) {
		t.Errorf("skipped %v, want %v", out.skippedStates, want)
	}
	if strings.Contains(string(out.src), "gofaultunsafe") {
		t.Errorf("unsafe imported without a pointer hook:\n%s", out.src)
	}
	checkStatesCompile(t, out.src)
	golden(t, filepath.Join("testdata", "rewrite", "states.golden"), out.src)
}

// checkStatesCompile type-checks a rewritten file with a stand-in agent
// package holding State.
func checkStatesCompile(t *testing.T, src []byte, more ...[]byte) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "/src/p/p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("rewritten file does not parse: %v\n%s", err, src)
	}
	files := []*ast.File{f}
	for i, m := range more {
		g, err := parser.ParseFile(fset, fmt.Sprintf("/src/p/more%d.go", i), m, parser.ParseComments)
		if err != nil {
			t.Fatalf("generated file does not parse: %v\n%s", err, m)
		}
		files = append(files, g)
	}
	agentPkg := types.NewPackage(AgentModule, "agent")
	u32, uptr := types.Typ[types.Uint32], types.Typ[types.Uintptr]
	sig := types.NewSignatureType(nil, nil, nil, types.NewTuple(
		types.NewVar(token.NoPos, agentPkg, "task", u32), types.NewVar(token.NoPos, agentPkg, "state", u32),
		types.NewVar(token.NoPos, agentPkg, "inst", uptr)), nil, false)
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "State", sig))
	roleSig := types.NewSignatureType(nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, agentPkg, "v", types.Typ[types.Int64])), nil, false)
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "Role", roleSig))
	enterSig := types.NewSignatureType(nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, agentPkg, "v", types.Typ[types.String])),
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "", u32)), false)
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "MemberEnter", enterSig))
	exitSig := types.NewSignatureType(nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, agentPkg, "prev", u32)), nil, false)
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "MemberExit", exitSig))
	enterAtSig := types.NewSignatureType(nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, agentPkg, "v", types.Typ[types.String]), types.NewVar(token.NoPos, agentPkg, "addr", types.Typ[types.String])),
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "", u32)), false)
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "MemberEnterAt", enterAtSig))
	sendSig := types.NewSignatureType(nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, agentPkg, "site", u32), types.NewVar(token.NoPos, agentPkg, "from", types.Typ[types.String]), types.NewVar(token.NoPos, agentPkg, "to", types.Typ[types.String])),
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "", types.Typ[types.Int])), false)
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "Send", sendSig))
	insertErrorHooks(agentPkg)
	agentPkg.MarkComplete()
	std := importer.ForCompiler(fset, "source", nil)
	conf := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) {
		if path == AgentModule {
			return agentPkg, nil
		}
		return std.Import(path)
	})}
	if _, err := conf.Check("example.com/p", fset, files, nil); err != nil {
		t.Fatalf("rewritten file does not type-check: %v\n%s", err, src)
	}
}

// samePositions checks that every identifier of the original file keeps
// its line and column in the rewritten one (through the line directives).
func samePositions(t *testing.T, orig string, rewritten []byte) {
	t.Helper()
	idents := func(src []byte, skipGofault bool) []string {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "/src/p/p.go", src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && !(skipGofault && strings.HasPrefix(id.Name, "gofault")) {
				p := fset.Position(id.Pos())
				out = append(out, fmt.Sprintf("%s@%d:%d", id.Name, p.Line, p.Column))
			}
			return true
		})
		sort.Strings(out)
		return out
	}
	want := idents([]byte(orig), false)
	got := idents(rewritten, true)
	// The hook's own identifiers (State, Pointer, uintptr, the instance)
	// are extra; every original one must be there.
	have := map[string]int{}
	for _, g := range got {
		have[g]++
	}
	for _, w := range want {
		if have[w] == 0 {
			t.Errorf("identifier %s moved", w)
		}
		have[w]--
	}
}
