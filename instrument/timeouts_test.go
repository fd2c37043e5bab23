package instrument

import (
	"context"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

const timeoutSrc = `package p

import (
	"context"
	"net"
	"os"
	"time"
)

type ms time.Duration

const slow = 100 * time.Millisecond

func dial(addr string, wait ms) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(time.Duration(wait)))
	<-time.After(time.Duration(wait) * 2)
	_ = ms(3) < wait
	return c, nil
}

func write(f *os.File, b []byte) bool {
	start := time.Now()
	f.Write(b)
	return time.Since(start) > slow
}
`

// pointsAt makes one timeout point per call argument or comparison
// operand whose source text is one of exprs (its first occurrence), in the
// order given.
func pointsAt(fset *token.FileSet, f *ast.File, exprs ...string) []*catalog.TimeoutPoint {
	var pts []*catalog.TimeoutPoint
	for _, want := range exprs {
		var found ast.Expr
		consider := func(e ast.Expr) {
			if found == nil && types.ExprString(e) == want {
				found = e
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				for _, a := range n.Args {
					consider(a)
				}
			case *ast.BinaryExpr:
				consider(n.X)
				consider(n.Y)
			}
			return found == nil
		})
		if found == nil {
			continue
		}
		pos := fset.Position(found.Pos())
		pts = append(pts, &catalog.TimeoutPoint{Index: uint32(len(pts)), ID: want, Kind: "test",
			File: pos.Filename, Line: pos.Line, Col: pos.Column})
	}
	return pts
}

func TestTimeoutEdits(t *testing.T) {
	fset, f, info, pkg := typecheck(t, timeoutSrc)
	pts := pointsAt(fset, f, "2 * time.Second", "time.Duration(wait)", "time.Duration(wait) * 2", "slow", "wait",
		"ms(3)")
	// "time.Duration(wait)" is SetDeadline's Add argument; "wait" (inside
	// it: nested points) and "ms(3)" have another named duration type, so
	// they are converted.
	sites := sitesAt(fset, f, catalog.KindDelay, "d.DialContext", "f.Write")
	out := rewriteFile(fileInput{src: []byte(timeoutSrc), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p.go", timeouts: pts}, sites)
	if len(out.skipped) != 0 || len(out.skippedPoints) != 0 {
		t.Errorf("skipped sites %v, points %v", out.skipped, out.skippedPoints)
	}
	n := 0
	for _, e := range out.edits {
		if e.point != nil {
			n++
		}
	}
	if n != len(pts) {
		t.Errorf("%d timeout edits, want %d", n, len(pts))
	}
	checkCompilesWithTimeout(t, out.src)
	if got, want := strings.Count(string(out.src), "\n"), strings.Count(timeoutSrc, "\n"); got != want {
		t.Errorf("rewritten file has %d lines, want %d", got, want)
	}
	for _, want := range []string{
		"gofaultagent.Timeout(0, /*line /src/p/p.go:15:59*/2*time.Second)/*line /src/p/p.go:15:72*/)",
		"time.Since(start) > gofaultagent.Timeout(3, /*line /src/p/p.go:31:29*/slow)/*line /src/p/p.go:31:33*/",
		"Duration(/*line /src/p/p.go:24:6*/ms(3))))/*line /src/p/p.go:24:11*/ < wait",
		"time.Duration(ms(gofaultagent.Timeout(4, ", // nested in point 1
	} {
		if !strings.Contains(string(out.src), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	golden(t, filepath.Join("testdata", "rewrite", "timeouts.golden"), out.src)
}

func TestTimeoutNotFound(t *testing.T) {
	fset, f, info, pkg := typecheck(t, timeoutSrc)
	pts := []*catalog.TimeoutPoint{{ID: "nowhere", File: "/src/p/p.go", Line: 1, Col: 1}}
	out := rewriteFile(fileInput{src: []byte(timeoutSrc), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p.go", timeouts: pts}, nil)
	if out.skippedPoints["nowhere"] != SkipTimeoutNotFound || out.src != nil {
		t.Errorf("skipped %v, src %v; want the point skipped and no rewrite", out.skippedPoints, out.src != nil)
	}
}

// checkCompilesWithTimeout type-checks a rewritten file against an agent
// with Fault and Timeout.
func checkCompilesWithTimeout(t *testing.T, src []byte) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "/src/p/p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("rewritten file does not parse: %v\n%s", err, src)
	}
	std := importer.ForCompiler(fset, "source", nil)
	timePkg, err := std.Import("time")
	if err != nil {
		t.Fatal(err)
	}
	dur := timePkg.Scope().Lookup("Duration").Type()
	agentPkg := types.NewPackage(AgentModule, "agent")
	v := func(name string, t types.Type) *types.Var { return types.NewVar(token.NoPos, agentPkg, name, t) }
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "Fault", types.NewSignatureType(nil, nil, nil,
		types.NewTuple(v("site", types.Typ[types.Uint32])), types.NewTuple(v("", types.Typ[types.Int])), false)))
	insertCtxHooks(agentPkg)
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "Timeout", types.NewSignatureType(nil, nil, nil,
		types.NewTuple(v("site", types.Typ[types.Uint32]), v("d", dur)), types.NewTuple(v("", dur)), false)))
	agentPkg.MarkComplete()
	conf := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) {
		if path == AgentModule {
			return agentPkg, nil
		}
		return std.Import(path)
	})}
	if _, err := conf.Check("example.com/p", fset, []*ast.File{f}, nil); err != nil {
		t.Fatalf("rewritten file does not type-check: %v\n%s", err, src)
	}
}

// TestBuildTimeouts analyses, instruments and builds the Sieve testdata
// module of the analysis package (every timeout pattern) and runs the
// binary: every timeout point is wrapped and the program still works.
func TestBuildTimeouts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	ctx := context.Background()
	mod, err := filepath.Abs(filepath.Join("..", "analysis", "testdata", "sieve"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	target := Target{WorkDir: filepath.Join(tmp, "build"),
		Module: mod, Main: "./cmd/sieve", Packages: []string{"example.com/sieve/..."},
	}
	bin := filepath.Join(tmp, "bin", "sieve")
	res, _, err := buildAnalysed(ctx, target, bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Catalog.TimeoutPoints) == 0 || res.Stats.TimeoutPoints != len(res.Catalog.TimeoutPoints) {
		t.Errorf("%d timeout points wrapped, catalog has %d (skipped: %v)", res.Stats.TimeoutPoints,
			len(res.Catalog.TimeoutPoints), res.Stats.SkipReasons)
	}
	if err := res.Catalog.Check(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "slow: false err: <nil>") {
		t.Errorf("output %q", out)
	}
}
