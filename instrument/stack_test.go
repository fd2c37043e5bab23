package instrument

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// leakCheck is shaped like etcd's client/pkg/testutil/leak.go: it lists
// every goroutine with runtime.Stack, once with the call's result as a
// slice bound; a local Stack and a runtime.Stack taken as a value are no
// calls of it.
const leakCheck = `package p

import "runtime"

type dumper struct{}

func (dumper) Stack(b []byte, all bool) int { return 0 }

func interestingGoroutines() []byte {
	buf := make([]byte, 2<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var d dumper
	_ = d.Stack(buf, true)
	f := runtime.Stack
	_ = f
	return buf
}

func one() int { return (runtime.Stack)(nil, false) }
`

// TestStackEdits: in a test build each runtime.Stack call's function is
// wrapped by the agent's StackOf, on the same line (the file parses and
// keeps its positions), and nothing else is; outside a test build the
// file is left alone.
func TestStackEdits(t *testing.T) {
	fset, f, info, pkg := typecheck(t, leakCheck)
	out := rewriteFile(fileInput{src: []byte(leakCheck), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p.go", stacks: true}, nil)
	src := string(out.src)
	for _, want := range []string{
		"buf = buf[:gofaultagent.StackOf(/*line /src/p/p.go:11:13*/runtime.Stack)/*line /src/p/p.go:11:26*/(buf, true)]",
		"return gofaultagent.StackOf(/*line /src/p/p.go:19:25*/(runtime.Stack))/*line /src/p/p.go:19:40*/(nil, false)",
		"_ = d.Stack(buf, true)",
		"f := runtime.Stack\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, src)
		}
	}
	if n := strings.Count(src, "StackOf("); n != 2 {
		t.Errorf("%d calls wrapped, want 2:\n%s", n, src)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "/src/p/p.go", out.src, 0); err != nil {
		t.Errorf("rewritten file does not parse: %v\n%s", err, src)
	}
	samePositions(t, leakCheck, out.src)

	out = rewriteFile(fileInput{src: []byte(leakCheck), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p.go"}, nil)
	if out.src != nil {
		t.Errorf("not a test build, the file was rewritten:\n%s", out.src)
	}
}
