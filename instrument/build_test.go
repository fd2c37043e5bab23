package instrument

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/analysis"
	"github.com/gofault/gofault/catalog"
)

// downloadModule downloads path@version into the module cache with the go
// command (a no-op when it is there already) and returns its directory. A
// test that hashes or reads a module's cache copy calls it first, so that it
// passes on a machine whose module cache has never seen that version.
func downloadModule(t *testing.T, path, version string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir = t.TempDir() // outside any module: the version asked for, not a go.mod's
	cmd.Env = goEnv(os.Environ())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); jerr == nil && m.Error != "" {
		err = errors.New(m.Error)
	}
	if err != nil || m.Dir == "" {
		proxy, _ := exec.Command("go", "env", "GOPROXY").Output()
		t.Fatalf("download %s@%s from the module proxy (GOPROXY=%s): %v\n%s\n"+
			"the test needs the module proxy, or the module in the module cache",
			path, version, strings.TrimSpace(string(proxy)), err, strings.TrimSpace(stderr.String()))
	}
	return m.Dir
}

// buildWith runs a whole instrumented build of target into out as gofault
// sequences it (lock, Prepare, analyze, Build), with analyze standing in
// for the analysis.
func buildWith(ctx context.Context, target Target, out string, analyze func(context.Context, *Work) (*catalog.Catalog, error)) (*Result, error) {
	unlock, err := WaitForBuildDir(target.WorkDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	w, err := Prepare(ctx, target)
	if err != nil {
		return nil, err
	}
	cat, err := analyze(ctx, w)
	if err != nil {
		return nil, err
	}
	return Build(ctx, w, cat, out, Options{})
}

// buildAnalysed is buildWith with gofault's analysis; it also returns the
// catalog the analysis gave, before Build.
func buildAnalysed(ctx context.Context, target Target, out string) (*Result, *catalog.Catalog, error) {
	var analysed *catalog.Catalog
	res, err := buildWith(ctx, target, out, func(ctx context.Context, w *Work) (*catalog.Catalog, error) {
		r, err := analysis.Run(ctx, analysis.Options{Dir: w.ModuleDir, Patterns: w.Patterns, BuildFlags: w.AllBuildFlags(), Env: w.Env, Role: target.Role})
		if err != nil {
			return nil, err
		}
		analysed = r.Catalog
		return r.Catalog, nil
	})
	return res, analysed, err
}

// treeHash hashes every file under dir (path, mode and content).
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		io.WriteString(h, p+" "+info.Mode().String()+"\n")
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// handCatalog builds the catalog a real analysis would give for the
// testdata app: error sites at the store's I/O calls and a delay site in the
// copied x/mod/semver module.
func handCatalog(t *testing.T, w *Work) *catalog.Catalog {
	t.Helper()
	cat := &catalog.Catalog{Module: "example.com/app"}
	add := func(file, pkg string, kind catalog.Kind, errs []catalog.ErrorValue, callees ...string) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, c := range callees {
			want[c] = true
		}
		ord := map[string]int{}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !want[types.ExprString(call.Fun)] {
				return true
			}
			p := fset.Position(call.Lparen)
			callee := types.ExprString(call.Fun)
			ord[callee]++
			cat.Sites = append(cat.Sites, catalog.Site{
				Index: uint32(len(cat.Sites)), ID: pkg + ":" + callee + "#" + string(rune('0'+ord[callee])),
				Kind: kind, Pkg: pkg, Callee: callee, File: p.Filename, Line: p.Line, Col: p.Column, Errors: errs,
			})
			return true
		})
	}
	eio := []catalog.ErrorValue{
		{Name: "EIO", Expr: `&fs.PathError{Op: "write", Path: "", Err: syscall.EIO}`, Imports: []string{"io/fs", "syscall"}},
		{Name: "ErrUnexpectedEOF", Expr: `io.ErrUnexpectedEOF`, Imports: []string{"io"}},
	}
	add(filepath.Join(w.ModuleDir, "store", "store.go"), "example.com/app/store", catalog.KindError|catalog.KindDelay, eio,
		"os.Create", "f.Write", "f.Sync", "f.Close", "os.ReadFile", "os.ReadDir", "os.Open", "r.ReadString", "fmt.Fprintf", "os.WriteFile", "s.Keys", "s.Get", "where")
	var semver string
	for _, c := range w.Copies {
		if c.Path == "golang.org/x/mod" {
			semver = filepath.Join(c.Dir, "semver", "semver.go")
		}
	}
	if semver == "" {
		t.Fatalf("x/mod was not copied: %+v", w.Copies)
	}
	add(semver, "golang.org/x/mod/semver", catalog.KindDelay, nil, "parse")
	return cat
}

func TestBuildApp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	ctx := context.Background()
	app, err := filepath.Abs(filepath.Join("testdata", "app"))
	if err != nil {
		t.Fatal(err)
	}
	xmod := downloadModule(t, "golang.org/x/mod", "v0.42.0")
	beforeApp, beforeCache := treeHash(t, app), treeHash(t, xmod)

	tmp := t.TempDir()
	target := Target{
		Module: app, Main: "./cmd/app", WorkDir: filepath.Join(tmp, "build"),
		Packages: []string{"example.com/app/store", "golang.org/x/mod/semver"},
	}
	var catSites, semverSites int
	res, err := buildWith(ctx, target, filepath.Join(tmp, "bin", "app"), func(ctx context.Context, w *Work) (*catalog.Catalog, error) {
		c := handCatalog(t, w)
		// A realistic-looking error value that does not compile: the
		// build must drop its site and retry.
		for i := range c.Sites {
			if c.Sites[i].Callee == "os.ReadDir" {
				c.Sites[i].Errors = []catalog.ErrorValue{{Name: "bogus", Expr: `fs.ErrNoSuchThing`, Imports: []string{"io/fs"}}}
			}
		}
		catSites = len(c.Sites)
		for _, s := range c.Sites {
			if s.Pkg == "golang.org/x/mod/semver" {
				semverSites++
			}
		}
		return c, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Prepare(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := BuildPlain(ctx, w, filepath.Join(tmp, "bin", "app-plain"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	t.Logf("stats: %+v", st)
	if st.Sites != catSites || st.Instrumented+st.Skipped != st.Sites {
		t.Errorf("sites %d, instrumented %d + skipped %d, want %d", st.Sites, st.Instrumented, st.Skipped, catSites)
	}
	// The os.ReadDir with the bogus error is the only site skipped; the
	// delay sites in semver and the deferred f.Close() are hook-only.
	if st.Skipped != 1 || st.SkipReasons[SkipCompile] != 1 || st.Builds != 2 {
		t.Errorf("skipped %v after %d builds, want one compile error after 2", st.SkipReasons, st.Builds)
	}
	// The dropped site is named with its position and the compiler's error,
	// in the result and in the work dir.
	onDisk, err := LoadDropped(DroppedFile(res.Work.Dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, ds := range [][]Dropped{res.Dropped, onDisk} {
		if len(ds) != 1 || ds[0].Reason != SkipCompile || ds[0].Line == 0 || len(ds[0].Errors) == 0 ||
			!strings.Contains(ds[0].Errors[0], "ErrNoSuchThing") || !strings.Contains(ds[0].Errors[0], ".go:") {
			t.Errorf("dropped = %+v, want the os.ReadDir site with the compiler's error", ds)
		}
	}
	if st.HookOnly != semverSites+1 || semverSites == 0 || st.Copies != 1 || st.Packages != 2 {
		t.Errorf("hook-only %d, copies %d, packages %d; want %d, 1, 2", st.HookOnly, st.Copies, st.Packages, semverSites+1)
	}
	cat, err := catalog.Load(res.CatalogFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Sites) != st.Instrumented || cat.Hash != res.Catalog.Hash {
		t.Errorf("catalog.json has %d sites (hash %s), want %d (%s)", len(cat.Sites), cat.Hash, st.Instrumented, res.Catalog.Hash)
	}
	if err := cat.Check(); err != nil {
		t.Error(err)
	}
	// Every block of the target packages is counted and located.
	if st.Blocks == 0 || cat.Blocks != st.Blocks || len(cat.BlockFiles) == 0 {
		t.Errorf("%d blocks counted, catalog has %d in %d files", st.Blocks, cat.Blocks, len(cat.BlockFiles))
	}
	if f, line := cat.BlockPos(cat.Blocks - 1); f == "" || line == 0 {
		t.Errorf("the last block has no position")
	}
	// The deferred f.Close() can no longer take an error.
	closes := 0
	for _, s := range cat.Sites {
		if s.Callee == "f.Close" {
			closes++
			if deferred := s.Line == 27; deferred == s.Kind.Has(catalog.KindError) {
				t.Errorf("f.Close at line %d has kind %b", s.Line, s.Kind)
			}
		}
	}
	if closes != 2 {
		t.Errorf("%d f.Close sites, want 2", closes)
	}
	// Without GOFAULT_CONTROLLER the instrumented binary behaves exactly
	// like the plain one.
	run := func(bin string) string {
		cmd := exec.Command(bin, t.TempDir())
		cmd.Env = append(os.Environ(), "GOFAULT_CONTROLLER=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, out)
		}
		return string(out)
	}
	got, want := run(res.Binary), run(plain.Binary)
	if got != want || !strings.Contains(want, "k2=delta") {
		t.Errorf("instrumented output differs:\n%s\nwant:\n%s", got, want)
	}
	// The catalog hash is linked into the binary.
	data, err := os.ReadFile(res.Binary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), res.Catalog.Hash) {
		t.Errorf("binary does not contain catalog hash %s", res.Catalog.Hash)
	}
	// Both binaries name the module cache's files of the copied module,
	// never the copy's.
	copyDir := ""
	for _, c := range res.Work.Copies {
		copyDir = c.Dir
	}
	for _, bin := range []string{res.Binary, plain.Binary} {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), filepath.Join(xmod, "semver", "semver.go")) || strings.Contains(string(data), filepath.Join(copyDir, "semver", "semver.go")) {
			t.Errorf("%s does not name %s only by its module cache path", bin, "semver.go")
		}
	}
	// Neither the user's tree nor the module cache changed.
	if h := treeHash(t, app); h != beforeApp {
		t.Error("the user's module dir changed during the build")
	}
	if h := treeHash(t, xmod); h != beforeCache {
		t.Error("the module cache changed during the build")
	}
}
