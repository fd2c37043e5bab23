package instrument

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// ranSrc is a TestMain; the comment at the end of a line says whether its
// call is wrapped in agent.Ran.
const ranSrc = `package p

import (
	"os"
	"testing"
)

type runner struct{}

func (runner) Run() int { return 0 }

func TestMain(m *testing.M) {
	var r runner
	code := m.Run() // Ran
	_ = r.Run()     // -
	if code != 0 {
		os.Exit(code)
	}
	os.Exit((m.Run)()) // Ran
}
`

// TestRanEdits: a call of testing.M's Run is wrapped in agent.Ran, at its
// line, and nothing else is (another type's Run method); the output keeps
// every line and type-checks.
func TestRanEdits(t *testing.T) {
	fset, f, info, pkg := typecheck(t, ranSrc)
	out := rewriteFile(fileInput{src: []byte(ranSrc), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/main_test.go", ignored: true}, nil)
	if out.src == nil {
		t.Fatal("nothing rewritten")
	}
	checkCompiles(t, out.src, nil)
	srcLines, outLines := strings.Split(ranSrc, "\n"), strings.Split(string(out.src), "\n")
	if len(outLines) != len(srcLines) {
		t.Fatalf("%d lines, want %d", len(outLines), len(srcLines))
	}
	ran := 0
	for i, l := range srcLines {
		_, want, ok := strings.Cut(l, "// ")
		if !ok {
			continue
		}
		has := strings.Contains(outLines[i], agentAlias+".Ran(")
		if has != (want == "Ran") {
			t.Errorf("line %d %q: wrapped %v, want %s\n%s", i+1, strings.TrimSpace(l), has, want, outLines[i])
		}
		if want == "Ran" {
			ran++
		}
	}
	n := 0
	for _, e := range out.edits {
		if e.ran {
			n++
			if !e.ignored {
				t.Errorf("edit %+v: not under the file's Ignored blame ID", e)
			}
		}
	}
	if n != ran {
		t.Errorf("%d Ran edits, want %d", n, ran)
	}
	// Not in a test build: nothing.
	if out := rewriteFile(fileInput{src: []byte(ranSrc), file: f, fset: fset, info: info, pkg: pkg, lineName: "/src/p/main_test.go"}, nil); out.src != nil {
		t.Error("wrapped outside a test build")
	}
}

// TestTestMainSource: the TestMain added to a package with none parses,
// is in the package, and exits with what agent.Ran returns.
func TestTestMainSource(t *testing.T) {
	src := testMainSource("wal")
	f, err := parser.ParseFile(token.NewFileSet(), TestMainFile, src, 0)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, src)
	}
	if f.Name.Name != "wal" {
		t.Errorf("package %s, want wal", f.Name.Name)
	}
	if !strings.Contains(string(src), "gofaultos.Exit("+agentAlias+".Ran(m.Run()))") {
		t.Errorf("TestMain does not exit through Ran:\n%s", src)
	}
}
