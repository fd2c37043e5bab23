package instrument

import (
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

var update = flag.Bool("update", false, "rewrite golden files")

// typecheck parses and type-checks one file of package "example.com/p".
func typecheck(t *testing.T, src string) (*token.FileSet, *ast.File, *types.Info, *types.Package) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "/src/p/p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("example.com/p", fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatal(err)
	}
	return fset, f, info, pkg
}

// sitesAt makes one site per call whose function expression prints as one
// of callees, in source order, positioned at its Lparen.
func sitesAt(fset *token.FileSet, f *ast.File, kind catalog.Kind, callees ...string) []*catalog.Site {
	want := map[string]bool{}
	for _, c := range callees {
		want[c] = true
	}
	var sites []*catalog.Site
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || !want[types.ExprString(call.Fun)] {
			return true
		}
		p := fset.Position(call.Lparen)
		sites = append(sites, &catalog.Site{
			Index: uint32(len(sites)), ID: types.ExprString(call.Fun) + "#" + p.String(), Kind: kind,
			File: p.Filename, Line: p.Line, Col: p.Column,
			Errors: []catalog.ErrorValue{
				{Name: "EIO", Expr: `&fs.PathError{Op: "write", Err: syscall.EIO}`, Imports: []string{"io/fs", "syscall"}},
				{Name: "EOF", Expr: `io.ErrUnexpectedEOF`, Imports: []string{"io"}},
			},
		})
		return true
	})
	return sites
}

func TestRewriteFile(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		kind    catalog.Kind
		callees []string
		renamed bool
		peer    string         // every site's catalog.Site.Peer
		skipped map[string]int // reason -> count
	}{
		{
			name: "error_branch",
			src: `package p

import "os"

func write(name string, data []byte) (int, error) {
	f, err := os.Create(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Write(data)
}
`,
			kind:    catalog.KindError | catalog.KindDelay,
			callees: []string{"os.Create", "f.Write", "f.Close"},
		},
		{
			name: "go_and_defer",
			src: `package p

import (
	"fmt"
	"os"
)

func log(f *os.File, args []any) {
	defer fmt.Fprintln(f, "done", len(args))
	defer fmt.Fprintln(f, args...)
	defer f.Sync()
	go fmt.Fprint(f)
	go fmt.Fprintln(two())
}

func two() (*os.File, string) { return os.Stderr, "x" }
`,
			kind:    catalog.KindError | catalog.KindDelay,
			callees: []string{"fmt.Fprintln", "fmt.Fprint", "f.Sync"},
			skipped: map[string]int{SkipGoDefer: 1},
		},
		{
			name: "nested_and_multiline",
			src: `package p

import (
	"fmt"
	"os"
)

func dump(name string) error {
	_, err := fmt.Fprintln(os.Stdout, must(os.ReadFile(
		name,
	)))
	go os.Remove(name)
	go func() { _ = os.Remove(name + ".tmp") }()
	return err
}

func must(b []byte, err error) string {
	if err != nil {
		panic(err)
	}
	return string(b)
}
`,
			kind:    catalog.KindError,
			callees: []string{"fmt.Fprintln", "os.ReadFile", "os.Remove"},
			skipped: map[string]int{SkipGoDefer: 1},
		},
		{
			name: "hook_only_and_renamed",
			src: `package p

import "time"

func tick() time.Time {
	time.Sleep(time.Millisecond)
	return time.Now()
}
`,
			kind:    catalog.KindDelay | catalog.KindCrash,
			callees: []string{"time.Sleep", "time.Now"},
			renamed: true,
		},
		{
			name: "chained_generic_and_package_level",
			src: `package p

import (
	"errors"
	"os"
)

type T struct{ n int }

func mk() *T                    { return &T{} }
func (t *T) Read() (int, error) { return t.n, errors.New("x") }

func first[E any](xs []E) (E, error) {
	var zero E
	if len(xs) == 0 {
		return zero, errors.New("empty")
	}
	return xs[0], nil
}

var cwd, cwdErr = os.Getwd()

func use() (int, error) {
	if _, err := first([]string{"a"}); err != nil {
		return 0, err
	}
	return mk().Read()
}
`,
			kind:    catalog.KindError | catalog.KindDelay,
			callees: []string{"mk", "mk().Read", "first", "os.Getwd"},
		},
		{
			// nats-server's constructs whose rewrite did not compile: a
			// parameter or variable named like a result's type
			// (jetstream_api.go: `stream, err := acc.lookupStream(stream)`),
			// a variable named new (stream.go: `configUpdateCheck(old, new
			// *StreamConfig)`), and a predeclared type shadowed.
			name: "shadowed_names",
			src: `package p

import "os"

type stream struct{ name string }

type Config struct{ N int }

func lookup(name string) (*stream, error) {
	_, err := os.Stat(name)
	return &stream{name}, err
}

func parse(s string) (Config, error) {
	_, err := os.Stat(s)
	return Config{}, err
}

func label(n int) (string, error) { return "", nil }

func get(stream string) error {
	stream2, err := lookup(stream)
	_ = stream2
	return err
}

func update(old, new *Config) error {
	c, err := parse("x")
	_, _, _ = old, new, c
	return err
}

func name(string int) error {
	s, err := label(string)
	_ = s
	return err
}

func later(stream string) {
	defer lookup(stream)
}
`,
			kind:    catalog.KindError | catalog.KindDelay,
			callees: []string{"lookup", "parse", "label"},
		},
		{
			// An injected error at a call whose real failures release the
			// receiver releases it too (releaseOnError); a receiver that
			// is a call result is not evaluated again.
			name: "release_on_error",
			src: `package p

import (
	"database/sql"
	"os"
)

type store struct{ tx *sql.Tx }

func save(db *sql.DB, f *os.File, s *store) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if err := s.tx.Commit(); err != nil {
		return err
	}
	if err := open().Close(); err != nil {
		return err
	}
	return f.Close()
}

func open() *os.File { return os.Stdout }
`,
			kind:    catalog.KindError,
			callees: []string{"tx.Commit", "s.tx.Commit", "open().Close", "f.Close"},
		},
		{
			// A peer dial's hook gets the address it dials: a request's
			// URL.Host (nil-safe), an address parameter's argument; none
			// when the argument is not a plain name (evaluating it again
			// could have effects).
			name: "peer_dials",
			src: `package p

import (
	"net"
	"net/http"
	"time"
)

type ServerAddress string

type layer interface {
	Dial(address ServerAddress, timeout time.Duration) (net.Conn, error)
}

type transport struct {
	c    *http.Client
	addr string
}

func send(t *transport, req *http.Request, l layer, a ServerAddress) error {
	resp, err := t.c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if _, err := net.Dial("tcp", t.addr); err != nil {
		return err
	}
	if _, err := l.Dial(a, time.Second); err != nil {
		return err
	}
	if _, err := net.DialTimeout("tcp", string(a), time.Second); err != nil {
		return err
	}
	_, err = net.Dial("tcp", net.JoinHostPort("h", "1"))
	return err
}
`,
			kind:    catalog.KindError | catalog.KindPartition,
			peer:    catalog.PeerDial,
			callees: []string{"t.c.Do", "net.Dial", "l.Dial", "net.DialTimeout"},
		},
		{
			// A delay at a call that takes a context ends when it is done
			// (agent.FaultCtx, DialCtx): the context argument, or a
			// request's Context() (nil-safe); none when the argument is
			// not a plain name, or the site has no delay kind.
			name: "context_delays",
			src: `package p

import (
	"context"
	"net/http"
	"os"
)

type rt interface {
	RoundTrip(*http.Request) (*http.Response, error)
}

type store interface {
	Get(ctx context.Context, key string) (string, error)
}

func fetch(ctx context.Context, t rt, req *http.Request, s store) error {
	resp, err := t.RoundTrip(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if _, err := s.Get(ctx, "k"); err != nil {
		return err
	}
	if _, err := s.Get(context.Background(), "k"); err != nil {
		return err
	}
	_, err = os.ReadFile("f")
	return err
}
`,
			kind:    catalog.KindError | catalog.KindDelay,
			callees: []string{"t.RoundTrip", "s.Get", "s.Get", "os.ReadFile"},
		},
		{
			// An injected *os.LinkError or *fs.PathError carries the
			// call's file names, an *os.File's Name() among them
			// (nil-safe); none when an argument is another call.
			name: "file_name_args",
			src: `package p

import "os"

func save(f *os.File, dst string) error {
	if err := os.Rename(f.Name(), dst); err != nil {
		return err
	}
	return os.Remove(name())
}

func name() string { return "x" }
`,
			kind:    catalog.KindError,
			callees: []string{"os.Rename", "os.Remove"},
		},
		{
			// A peer dial that takes a request: its delay ends with the
			// request's context too (agent.DialCtx).
			name: "context_dial",
			src: `package p

import "net/http"

func send(c *http.Client, req *http.Request) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
`,
			kind:    catalog.KindError | catalog.KindDelay | catalog.KindPartition,
			peer:    catalog.PeerDial,
			callees: []string{"c.Do"},
		},
		{
			// The first peer call of a handler of peers' requests tells
			// the agent the goroutine serves a peer (agent.Accept).
			name: "peer_accept",
			src: `package p

import (
	"encoding/json"
	"net/http"
)

type handler struct{}

func (handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m map[string]int
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}
`,
			kind:    catalog.KindError | catalog.KindPartition,
			peer:    catalog.PeerAccept,
			callees: []string{"json.NewDecoder(r.Body).Decode"},
		},
		{
			name: "no_error_result",
			src: `package p

import "strings"

func up(s string) string { return strings.ToUpper(s) }
`,
			kind:    catalog.KindError,
			callees: []string{"strings.ToUpper"},
			skipped: map[string]int{SkipNoErrResult: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset, f, info, pkg := typecheck(t, tt.src)
			sites := sitesAt(fset, f, tt.kind, tt.callees...)
			for _, s := range sites {
				s.Peer = tt.peer
			}
			lineName := "/src/p/p.go"
			if tt.renamed {
				lineName = "/modcache/p@v1.0.0/p.go"
			}
			out := rewriteFile(fileInput{src: []byte(tt.src), file: f, fset: fset, info: info, pkg: pkg, lineName: lineName, renamed: tt.renamed}, sites)
			got := map[string]int{}
			for _, r := range out.skipped {
				got[r]++
			}
			if len(got) != len(tt.skipped) {
				t.Errorf("skipped %v, want %v", got, tt.skipped)
			}
			for r, n := range tt.skipped {
				if got[r] != n {
					t.Errorf("skipped %v, want %v", got, tt.skipped)
				}
			}
			if n := len(out.edits) + len(out.skipped); n != len(sites) {
				t.Errorf("%d edits + %d skipped, want %d sites", len(out.edits), len(out.skipped), len(sites))
			}
			if out.src == nil {
				if len(out.edits) != 0 {
					t.Fatal("edits but no output")
				}
				return
			}
			// The output must parse, keep every original line's number
			// and type-check once the error functions exist.
			var errSites []*catalog.Site
			for _, e := range out.edits {
				if e.errBranch {
					errSites = append(errSites, e.site)
				}
			}
			files, err := errorFiles("p", "example.com/p", errSites, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkCompiles(t, out.src, files)
			wantLines := strings.Count(tt.src, "\n")
			if tt.renamed {
				wantLines++
			}
			if n := strings.Count(string(out.src), "\n"); n != wantLines {
				t.Errorf("rewritten file has %d lines, want %d", n, wantLines)
			}
			golden(t, filepath.Join("testdata", "rewrite", tt.name+".golden"), out.src)
		})
	}
}

// checkCompiles type-checks a rewritten file with its error files, with a
// stand-in agent package.
func checkCompiles(t *testing.T, src []byte, errFiles []*errFile) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	f, err := parser.ParseFile(fset, "/src/p/p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("rewritten file does not parse: %v\n%s", err, src)
	}
	files = append(files, f)
	for _, ef := range errFiles {
		f, err := parser.ParseFile(fset, ef.name, ef.src, 0)
		if err != nil {
			t.Fatalf("error file does not parse: %v\n%s", err, ef.src)
		}
		files = append(files, f)
	}
	agentPkg := types.NewPackage(AgentModule, "agent")
	sig := types.NewSignatureType(nil, nil, nil,
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "site", types.Typ[types.Uint32])),
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "", types.Typ[types.Int])), false)
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "Fault", sig))
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "Accept", sig))
	errType := types.Universe.Lookup("error").Type()
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "WithPaths", types.NewSignatureType(nil, nil, nil,
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "err", errType), types.NewVar(token.NoPos, agentPkg, "paths", types.NewSlice(types.Typ[types.String]))),
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "", errType)), true)))
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "Dial", types.NewSignatureType(nil, nil, nil,
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "site", types.Typ[types.Uint32]), types.NewVar(token.NoPos, agentPkg, "addr", types.Typ[types.String])),
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "", types.Typ[types.Int])), false)))
	insertCtxHooks(agentPkg)
	insertErrorHooks(agentPkg)
	agentPkg.Scope().Insert(types.NewVar(token.NoPos, agentPkg, "Cov", types.NewArray(types.Typ[types.Byte], maxBlocks)))
	std := importer.ForCompiler(fset, "source", nil)
	insertDiskHooks(t, agentPkg, std)
	agentPkg.MarkComplete()
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

// insertErrorHooks adds agent.Injected, which every generated error goes
// through, and the wrappers of a test's discarded errors (agent.Ignored,
// Ignored2, Ignored3) to the stand-in agent package.
func insertErrorHooks(agentPkg *types.Package) {
	errType := types.Universe.Lookup("error").Type()
	v := func(t types.Type) *types.Var { return types.NewVar(token.NoPos, agentPkg, "", t) }
	fn := func(name string, tparams []*types.TypeParam, ts ...types.Type) {
		params, results := make([]*types.Var, len(ts)), make([]*types.Var, len(ts))
		for i, t := range ts {
			params[i], results[i] = v(t), v(t)
		}
		agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, name,
			types.NewSignatureType(nil, nil, tparams, types.NewTuple(params...), types.NewTuple(results...), false)))
	}
	tp := func(name string) *types.TypeParam {
		return types.NewTypeParam(types.NewTypeName(token.NoPos, agentPkg, name, nil), types.Universe.Lookup("any").Type())
	}
	fn("Injected", nil, errType)
	fn("Ignored", nil, errType)
	t2 := tp("T")
	fn("Ignored2", []*types.TypeParam{t2}, t2, errType)
	t3, u3 := tp("T"), tp("U")
	fn("Ignored3", []*types.TypeParam{t3, u3}, t3, u3, errType)
	// The hooks of a test setup function (setupEdits).
	fn("SetupEnter", nil)
	fn("SetupExit", nil)
	// What the tests leave running (ranEdits).
	fn("Ran", nil, types.Typ[types.Int])
}

// insertCtxHooks adds the hooks of calls that take a context
// (agent.FaultCtx, agent.DialCtx) to the stand-in agent package.
func insertCtxHooks(agentPkg *types.Package) {
	doneSig := types.NewSignatureType(nil, nil, nil, nil,
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "", types.NewChan(types.RecvOnly, types.NewStruct(nil, nil)))), false)
	done := types.NewInterfaceType([]*types.Func{types.NewFunc(token.NoPos, agentPkg, "Done", doneSig)}, nil).Complete()
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "FaultCtx", types.NewSignatureType(nil, nil, nil,
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "site", types.Typ[types.Uint32]), types.NewVar(token.NoPos, agentPkg, "ctx", done)),
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "", types.Typ[types.Int])), false)))
	agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, "DialCtx", types.NewSignatureType(nil, nil, nil,
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "site", types.Typ[types.Uint32]), types.NewVar(token.NoPos, agentPkg, "addr", types.Typ[types.String]),
			types.NewVar(token.NoPos, agentPkg, "ctx", done)),
		types.NewTuple(types.NewVar(token.NoPos, agentPkg, "", types.Typ[types.Int])), false)))
}

// insertDiskHooks adds the disk fault hooks (agent/disk.go) to the
// stand-in agent package.
func insertDiskHooks(t *testing.T, agentPkg *types.Package, std types.Importer) {
	t.Helper()
	ioPkg, err := std.Import("io")
	if err != nil {
		t.Fatal(err)
	}
	fsPkg, err := std.Import("io/fs")
	if err != nil {
		t.Fatal(err)
	}
	v := func(name string, typ types.Type) *types.Var { return types.NewVar(token.NoPos, agentPkg, name, typ) }
	site, pick := v("site", types.Typ[types.Uint32]), v("pick", types.Typ[types.Uint64])
	bytes := types.NewSlice(types.Typ[types.Byte])
	fn := func(name string, results *types.Tuple, params ...*types.Var) {
		agentPkg.Scope().Insert(types.NewFunc(token.NoPos, agentPkg, name, types.NewSignatureType(nil, nil, nil, types.NewTuple(params...), results, false)))
	}
	fn("Disk", types.NewTuple(v("", types.Typ[types.Int]), v("", types.Typ[types.Uint64])), site)
	fn("Corrupt", nil, site, v("buf", bytes), v("name", types.Typ[types.String]), pick)
	fn("TearWrite", nil, site, v("w", ioPkg.Scope().Lookup("Writer").Type()), v("b", bytes), pick)
	fn("TearWriteAt", nil, site, v("w", ioPkg.Scope().Lookup("WriterAt").Type()), v("b", bytes), v("off", types.Typ[types.Int64]), pick)
	fn("TearFile", nil, site, v("name", types.Typ[types.String]), v("data", bytes), v("perm", fsPkg.Scope().Lookup("FileMode").Type()), pick)
	// WriterAtFunc, a func([]byte, int64) (int, error) with a WriteAt method.
	params := types.NewTuple(v("p", bytes), v("off", types.Typ[types.Int64]))
	results := types.NewTuple(v("n", types.Typ[types.Int]), v("err", types.Universe.Lookup("error").Type()))
	obj := types.NewTypeName(token.NoPos, agentPkg, "WriterAtFunc", nil)
	named := types.NewNamed(obj, types.NewSignatureType(nil, nil, nil, params, results, false), nil)
	named.AddMethod(types.NewFunc(token.NoPos, agentPkg, "WriteAt", types.NewSignatureType(v("f", named), nil, nil, params, results, false)))
	agentPkg.Scope().Insert(obj)
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestCanImport(t *testing.T) {
	tests := []struct {
		importer, path string
		want           bool
	}{
		{"a/b", "os", true},
		{"a/b", "internal/poll", false},
		{"a/b/c", "a/b/internal/x", true},
		{"a/b", "a/b/internal", true},
		{"a/x", "a/b/internal/x", false},
		{"a/b", "a/b", false},
		{"a/b", "a/vendor/c", false},
	}
	for _, tt := range tests {
		if got := canImport(tt.importer, tt.path); got != tt.want {
			t.Errorf("canImport(%q, %q) = %v, want %v", tt.importer, tt.path, got, tt.want)
		}
	}
}

func TestNameable(t *testing.T) {
	self := types.NewPackage("example.com/p", "p")
	other := types.NewPackage("example.com/q", "q")
	internal := types.NewPackage("example.com/r/internal/s", "s")
	named := func(pkg *types.Package, name string) types.Type {
		return types.NewNamed(types.NewTypeName(token.NoPos, pkg, name, nil), types.Typ[types.Int], nil)
	}
	tests := []struct {
		name string
		t    types.Type
		want bool
	}{
		{"basic", types.Typ[types.Int], true},
		{"own unexported", named(self, "t"), true},
		{"other exported", types.NewPointer(named(other, "T")), true},
		{"other unexported", types.NewSlice(named(other, "t")), false},
		{"internal elsewhere", named(internal, "T"), false},
		{"map of unexported", types.NewMap(types.Typ[types.String], named(other, "t")), false},
		{"struct unexported field", types.NewStruct([]*types.Var{types.NewField(token.NoPos, other, "x", types.Typ[types.Int], false)}, nil), false},
		{"error", types.Universe.Lookup("error").Type(), true},
	}
	for _, tt := range tests {
		if got := newQualifier(self).nameable(tt.t); got != tt.want {
			t.Errorf("%s: nameable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLocalExpr(t *testing.T) {
	tests := []struct {
		expr    string
		imports []string
		want    string
	}{
		{`raft.ErrCompacted`, []string{"go.etcd.io/raft"}, `ErrCompacted`},
		{`&raft.Err{Op: raft.Op("x"), Err: syscall.EIO}`, []string{"go.etcd.io/raft", "syscall"}, `&Err{Op: Op("x"), Err: syscall.EIO}`},
		{`io.ErrUnexpectedEOF`, []string{"io"}, `io.ErrUnexpectedEOF`},
	}
	for _, tt := range tests {
		got, err := localExpr(tt.expr, "raft", "go.etcd.io/raft", tt.imports, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("localExpr(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

func TestImportName(t *testing.T) {
	for p, want := range map[string]string{
		"os":                                "os",
		"io/fs":                             "fs",
		"go.etcd.io/etcd/server/v3/wal":     "wal",
		"go.etcd.io/etcd/client/v3":         "client",
		"gopkg.in/yaml.v2":                  "yaml",
		"github.com/grpc-ecosystem/go-grpc": "go_grpc",
	} {
		if got := importName(p); got != want {
			t.Errorf("importName(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestErrorFiles(t *testing.T) {
	sites := []*catalog.Site{
		{Index: 3, ID: "a", Errors: []catalog.ErrorValue{
			{Name: "EIO", Expr: `&fs.PathError{Op: "read", Err: syscall.EIO}`, Imports: []string{"io/fs", "syscall", "os"}},
			{Name: "ErrCompacted", Expr: `raft.ErrCompacted`, Imports: []string{"example.com/raft"}},
		}},
		{Index: 5, ID: "b", Errors: []catalog.ErrorValue{
			{Name: "ErrX", Expr: `errors.ErrX`, Imports: []string{"example.com/pkg/errors"}},
		}},
		{Index: 7, ID: "c", Errors: []catalog.ErrorValue{
			{Name: "wrapped", Expr: `errors.New("x")`, Imports: []string{"errors"}},
		}},
		// etcd v3.6's promoteMemberHTTP: its own errors package and the
		// standard library's, both named errors, in one site.
		{Index: 9, ID: "d", Errors: []catalog.ErrorValue{
			{Name: "ErrX", Expr: `errors.ErrX`, Imports: []string{"example.com/pkg/errors"}},
			{Name: "unknown", Expr: `errors.New("member promote: unknown error")`, Imports: []string{"errors"}},
			{Name: "wrapped", Expr: `fmt.Errorf("%w: %w", errors.ErrX, raft.ErrCompacted)`, Imports: []string{"fmt", "example.com/pkg/errors", "example.com/raft"}},
		}},
	}
	files, err := errorFiles("raft", "example.com/raft", sites, map[string]string{"example.com/pkg/errors": "errors"})
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, f := range files {
		all = append(all, "// == "+f.name+"\n"...)
		all = append(all, f.src...)
		for idx, lines := range f.lineOf {
			got := strings.Split(string(f.src), "\n")[lines[0]-1]
			if want := fmt.Sprintf("func gofaultErr%d(k int) error {", idx); got != want {
				t.Errorf("%s line %d = %q, want %q", f.name, lines[0], got, want)
			}
		}
	}
	if len(files) != 2 {
		t.Errorf("%d files, want 2 (the two packages named errors clash)", len(files))
	}
	golden(t, filepath.Join("testdata", "rewrite", "errors.golden"), all)
}
