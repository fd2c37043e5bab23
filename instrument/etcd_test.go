package instrument

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/types"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
)

// everyErrorCall is a stress-test analyzer: it makes a site of every call in
// the target packages whose last result is an error — far more sites, in
// far more kinds of expression, than a real analysis selects.
func everyErrorCall(ctx context.Context, w *Work) (*catalog.Catalog, error) {
	pkgs, err := packages.Load(&packages.Config{
		Context: ctx, Dir: w.ModuleDir, Env: w.Env, BuildFlags: w.AllBuildFlags(),
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
	}, w.Patterns...)
	if err != nil {
		return nil, err
	}
	errType := types.Universe.Lookup("error").Type()
	cat := &catalog.Catalog{Module: w.ModuleDir}
	eio := []catalog.ErrorValue{{Name: "EIO", Expr: `&fs.PathError{Op: "write", Path: "", Err: syscall.EIO}`, Imports: []string{"io/fs", "syscall"}}}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			if strings.HasSuffix(p.Fset.File(f.Pos()).Name(), "_test.go") {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sig, ok := p.TypesInfo.TypeOf(call.Fun).(*types.Signature)
				if !ok || sig.Results().Len() == 0 || !types.Identical(sig.Results().At(sig.Results().Len()-1).Type(), errType) {
					return true
				}
				pos := p.Fset.Position(call.Lparen)
				cat.Sites = append(cat.Sites, catalog.Site{
					Index: uint32(len(cat.Sites)), ID: fmt.Sprintf("%s:%s:%d:%d", p.PkgPath, filepath.Base(pos.Filename), pos.Line, pos.Column),
					Kind: catalog.KindError | catalog.KindDelay, Pkg: p.PkgPath, Callee: types.ExprString(call.Fun),
					File: pos.Filename, Line: pos.Line, Col: pos.Column, Errors: eio,
				})
				return true
			})
		}
	}
	return cat, nil
}

// TestBuildEtcd instruments every error-returning call of the etcd server
// packages, of the profile's release (the v3.7 line), of v3.6.16 (the
// other current line: same layout, raft v3.6.0) and of v3.5.2 (as --set
// target.version=v3.5.2 gives: the profile's v3.5 releases entry, an old
// release built with its own dependency graph, grpc v1.38 and
// OpenTelemetry v0.20), runs the binary
// as a one-node cluster without a controller and checks a put and a get,
// and that neither targets/etcd nor the module cache changed.
func TestBuildEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds etcd")
	}
	for _, version := range []string{"", "v3.6.16", "v3.5.2"} {
		t.Run("version="+version, func(t *testing.T) { testBuildEtcd(t, version) })
	}
}

func testBuildEtcd(t *testing.T, version string) {
	ctx := context.Background()
	src, err := filepath.Abs(filepath.Join("..", "targets", "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	var sets []string
	if version != "" {
		sets = append(sets, "target.version="+version)
	}
	cfg, err := config.Load(filepath.Join(src, "gofault.yaml"), sets...)
	if err != nil {
		t.Fatal(err)
	}
	target := Target{ // the work dir goes to a temp dir, the module stays
		Module: src, Main: cfg.Target.Main, Packages: cfg.Target.Packages, BuildFlags: cfg.Target.BuildFlags,
		Version: cfg.Target.Version, Versioned: cfg.Target.Versioned, WorkDir: filepath.Join(t.TempDir(), "build"),
	}
	if cfg.Target.Version == "" {
		t.Fatal("the etcd profile names no target.version")
	}
	// The release's module cache copy, downloaded first: nothing else may
	// have asked for this release on this machine yet.
	server := downloadModule(t, "go.etcd.io/etcd/server/v3", cfg.Target.Version)
	// Other work may go on in targets/etcd (a workload being written), so
	// the build's inputs there are hashed, and the whole module cache dir;
	// TestBuildApp hashes a whole user tree.
	srcHash := func() string {
		var hs []string
		for _, p := range []string{"go.mod", "go.sum", "gofault.yaml", "node"} {
			hs = append(hs, treeHash(t, filepath.Join(src, p)))
		}
		return strings.Join(hs, " ")
	}
	beforeSrc, beforeCache := srcHash(), treeHash(t, server)

	res, err := buildWith(ctx, target, filepath.Join(t.TempDir(), "etcd"), everyErrorCall)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	t.Logf("stats: %+v", st)
	if st.Instrumented < 1000 {
		t.Errorf("only %d sites instrumented", st.Instrumented)
	}
	if st.SkipReasons[SkipCompile] > st.Sites/100 {
		t.Errorf("%d sites did not compile (of %d)", st.SkipReasons[SkipCompile], st.Sites)
	}
	out, err := exec.Command(res.Binary, "--version").Output()
	if want := "etcd Version: " + strings.TrimPrefix(cfg.Target.Version, "v"); err != nil || !strings.Contains(string(out), want) {
		t.Errorf("--version: %s, %v; want %q", out, err, want)
	}
	checkEtcd(t, res.Binary)
	if srcHash() != beforeSrc {
		t.Error("targets/etcd changed during the build")
	}
	if treeHash(t, server) != beforeCache {
		t.Error("the module cache copy of etcd server changed during the build")
	}
}

// checkEtcd starts bin as a one-node etcd and puts and gets a key through
// the JSON gateway.
func checkEtcd(t *testing.T, bin string) {
	t.Helper()
	dir := t.TempDir()
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", port())
	peer := fmt.Sprintf("http://127.0.0.1:%d", port())
	var log bytes.Buffer
	cmd := exec.Command(bin, "--name=n1", "--data-dir="+filepath.Join(dir, "data"),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=n1="+peer, "--log-level=warn")
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.Env = append(os.Environ(), "GOFAULT_CONTROLLER=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("etcd log:\n%s", log.String())
		}
	}()
	post := func(path, body string) (string, error) {
		resp, err := http.Post(client+path, "application/json", strings.NewReader(body))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, err = b.ReadFrom(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return b.String(), fmt.Errorf("%s: %s", path, resp.Status)
		}
		return b.String(), err
	}
	var err error
	for i := 0; i < 300; i++ { // the put succeeds once the member is leader
		if _, err = post("/v3/kv/put", `{"key":"Z29mYXVsdA==","value":"d29ya3M="}`); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	got, err := post("/v3/kv/range", `{"key":"Z29mYXVsdA=="}`)
	if err != nil || !strings.Contains(got, `"d29ya3M="`) {
		t.Fatalf("range = %s, %v; want the value put", got, err)
	}
}
