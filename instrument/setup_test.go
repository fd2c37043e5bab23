package instrument

import (
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// setupSrc is a test file for TestSetupEdits; a comment "// setup P"
// after a function's "{" names the pattern that must hook it, "// -"
// says none may.
const setupSrc = `package p

type cluster struct{}
type pair[T any] struct{}

func createCluster(n int) *cluster { // setup create*
	return &cluster{}
}

func createClusterWithTemplate() *cluster { return createCluster(3) } // setup create*

func (c *cluster) restartAll() { // setup cluster.restart*
}

func (c cluster) waitOnLeader() { // -
}

func (p *pair[T]) startPair() { // setup pair.start*
}

func TestCreate(t int) { // -
	_ = createCluster(3)
}

func runServer() { /* one line */ } // setup runServer

func check() { // -
}
`

// TestSetupEdits: a function or method of a test file matching a
// test.setup pattern (by name, or by receiver type and name, pointer and
// generic receivers too) gets SetupEnter and a deferred SetupExit right
// after its "{", on the same line; others are left alone; the output
// keeps every line's number and type-checks; each edit names its pattern.
func TestSetupEdits(t *testing.T) {
	patterns := []string{"create*", "cluster.restart*", "pair.start*", "runServer", "nothing*"}
	fset, f, info, pkg := typecheck(t, setupSrc)
	out := rewriteFile(fileInput{src: []byte(setupSrc), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p_test.go", setup: patterns}, nil)
	if out.src == nil {
		t.Fatal("nothing rewritten")
	}
	checkCompiles(t, out.src, nil)
	if _, err := parser.ParseFile(token.NewFileSet(), "p.go", out.src, 0); err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	srcLines, outLines := strings.Split(setupSrc, "\n"), strings.Split(string(out.src), "\n")
	if len(outLines) != len(srcLines) {
		t.Fatalf("%d lines, want %d", len(outLines), len(srcLines))
	}
	var want []string
	for i, l := range srcLines {
		_, c, ok := strings.Cut(l, "// ")
		if !ok {
			continue
		}
		hooked := strings.Contains(outLines[i], agentAlias+".SetupEnter(); defer "+agentAlias+".SetupExit();")
		p, isSetup := strings.CutPrefix(c, "setup ")
		if hooked != isSetup {
			t.Errorf("line %d %q: hooked %v, want %v\n%s", i+1, strings.TrimSpace(l), hooked, isSetup, outLines[i])
		}
		if isSetup {
			want = append(want, p)
		}
	}
	var got []string
	for _, e := range out.edits {
		got = append(got, e.setup)
	}
	if !slices.Equal(got, want) {
		t.Errorf("edits' patterns %q, want %q", got, want)
	}
	ov := &overlaySet{setupMatched: map[string]int{}}
	for _, p := range got {
		ov.setupMatched[p]++
	}
	if n, unmatched := ov.setupStats(patterns); n != 5 || !slices.Equal(unmatched, []string{"nothing*"}) {
		t.Errorf("setupStats = %d, %q; want 5, [nothing*]", n, unmatched)
	}
}

// TestSetupOff: outside a package's test files (setupPatterns with test
// false) nothing is hooked.
func TestSetupOff(t *testing.T) {
	fset, f, info, pkg := typecheck(t, setupSrc)
	out := rewriteFile(fileInput{src: []byte(setupSrc), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p.go", setup: setupPatterns(false, []string{"create*"})}, nil)
	if out.src != nil || len(out.edits) != 0 {
		t.Errorf("%d edits outside a test file", len(out.edits))
	}
}
