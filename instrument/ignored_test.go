package instrument

import (
	"fmt"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// ignoredSrc has one call a line for TestIgnoredEdits; the comment at the
// end of a line names the wrapper its call must get ("-" for none).
const ignoredSrc = `package p

import "errors"

type server struct{}

func (server) Start() error                { return nil }
func one() error                           { return errors.New("x") }
func two() (int, error)                    { return 0, nil }
func three() (int, string, error)          { return 0, "", nil }
func four() (int, int, int, error)         { return 0, 0, 0, nil }
func noErr() int                           { return 0 }
func errFirst() (error, int)               { return nil, 0 }
func use(int, ...any)                      {}

var pkgLevel, _ = two() // Ignored2

func f(s server, ch chan int) (err error) {
	one()               // Ignored
	two()               // Ignored2
	three()             // Ignored3
	s.Start()           // Ignored
	(s.Start)()         // Ignored
	_ = one()           // Ignored
	x, _ := two()       // Ignored2
	x, _ = two()        // Ignored2
	_, _ = two()        // Ignored2
	a, b, _ := three()  // Ignored3
	var y, _ = two()    // Ignored2
	four()              // -
	noErr()             // -
	errFirst()          // -
	err = one()         // -
	_, err = two()      // -
	if err := one(); err != nil { return err } // -
	defer one()         // -
	go one()            // -
	defer s.Start()     // -
	use(two())          // -
	copy([]int{}, []int{}) // -
	func() { one() }()  // Ignored
	two(                // Ignored2
	)
	use(x, a, b, y)
	return nil
}
`

// TestIgnoredEdits: in a test file, each call whose error result the
// statement discards (an expression statement, "_" in the error's place
// of an assignment or var declaration; a method call; one, two or three
// results) is wrapped in agent.Ignored, Ignored2 or Ignored3; a call whose
// error is kept, a go or defer call, a call as an argument, a builtin, a
// call with four results or whose error is not last is left alone. The
// output parses, keeps every line's number and type-checks.
func TestIgnoredEdits(t *testing.T) {
	fset, f, info, pkg := typecheck(t, ignoredSrc)
	out := rewriteFile(fileInput{src: []byte(ignoredSrc), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p_test.go", ignored: true}, nil)
	if out.src == nil {
		t.Fatal("nothing rewritten")
	}
	checkCompiles(t, out.src, nil)
	if _, err := parser.ParseFile(token.NewFileSet(), "p.go", out.src, 0); err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	srcLines, outLines := strings.Split(ignoredSrc, "\n"), strings.Split(string(out.src), "\n")
	if len(outLines) != len(srcLines) {
		t.Fatalf("%d lines, want %d", len(outLines), len(srcLines))
	}
	wrapped := 0
	for i, l := range srcLines {
		_, want, ok := strings.Cut(l, "// ")
		if !ok || (want != "-" && !strings.HasPrefix(want, "Ignored")) {
			continue
		}
		got := outLines[i]
		for _, fn := range []string{"Ignored", "Ignored2", "Ignored3"} {
			has := strings.Contains(got, agentAlias+"."+fn+"(")
			if has != (fn == want) {
				t.Errorf("line %d %q: has %s %v, want %s\n%s", i+1, strings.TrimSpace(l), fn, has, want, got)
			}
		}
		if want != "-" {
			wrapped++
			if lineDir := fmt.Sprintf("/*line /src/p/p_test.go:%d:", i+1); !strings.Contains(got, lineDir) {
				t.Errorf("line %d: no %s directive keeping the call's position: %s", i+1, lineDir, got)
			}
		}
	}
	if len(out.edits) != wrapped {
		t.Errorf("%d edits, want %d", len(out.edits), wrapped)
	}
	for _, e := range out.edits {
		if !e.ignored {
			t.Errorf("edit %+v not marked ignored", e)
		}
	}
}

// TestIgnoredOff: without the test build's flag (a package's own files,
// or a program build) no call is wrapped.
func TestIgnoredOff(t *testing.T) {
	fset, f, info, pkg := typecheck(t, ignoredSrc)
	out := rewriteFile(fileInput{src: []byte(ignoredSrc), file: f, fset: fset, info: info, pkg: pkg, lineName: "/src/p/p.go"}, nil)
	if out.src != nil || len(out.edits) != 0 {
		t.Errorf("%d edits without the flag", len(out.edits))
	}
}
