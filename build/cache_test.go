package build

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/analysis"
	"github.com/gofault/gofault/instrument"
)

// writeModule writes a small module with a main package and a library
// package into a temp dir and returns its target.
func writeModule(t *testing.T) instrument.Target {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/k\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"example.com/k/p\"\n\nfunc main() { p.Run() }\n",
		"p/p.go":  "package p\n\nimport \"os\"\n\n// Run writes a file.\nfunc Run() { _ = os.WriteFile(\"x\", nil, 0o644) }\n",
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return instrument.Target{Module: dir, Main: ".", Packages: []string{"example.com/k/p"}, WorkDir: filepath.Join(dir, ".gofault", "build")}
}

// TestNodeKey checks that the build key changes with every input and with
// nothing else.
func TestNodeKey(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	ctx := context.Background()
	type input struct {
		t     instrument.Target
		kind  string
		strip bool
		env   []string
	}
	write := func(t *testing.T, path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		change  func(t *testing.T, in *input)
		changed bool
	}{
		{"nothing", func(*testing.T, *input) {}, false},
		{"mtime of a user file", func(t *testing.T, in *input) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(in.t.Module, "p", "p.go"), later, later); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"source of the main package", func(t *testing.T, in *input) {
			write(t, filepath.Join(in.t.Module, "main.go"), "package main\n\nimport \"example.com/k/p\"\n\nfunc main() { p.Run(); p.Run() }\n")
		}, true},
		{"source of an analysed package", func(t *testing.T, in *input) {
			write(t, filepath.Join(in.t.Module, "p", "p.go"), "package p\n\n// Run does nothing.\nfunc Run() {}\n")
		}, true},
		{"new file", func(t *testing.T, in *input) {
			write(t, filepath.Join(in.t.Module, "p", "q.go"), "package p\n")
		}, true},
		{"go.mod", func(t *testing.T, in *input) {
			write(t, filepath.Join(in.t.Module, "go.mod"), "module example.com/k\n\ngo 1.23\n")
		}, true},
		{"packages", func(_ *testing.T, in *input) { in.t.Packages = []string{"example.com/k/..."} }, true},
		{"main", func(_ *testing.T, in *input) { in.t.Main = "./" }, true},
		{"build flags", func(_ *testing.T, in *input) { in.t.BuildFlags = []string{"-tags=x"} }, true},
		{"versioned", func(_ *testing.T, in *input) { in.t.Versioned = []string{"example.com/m"} }, true},
		{"kind of build", func(_ *testing.T, in *input) { in.kind = "plain" }, true},
		{"stripped", func(_ *testing.T, in *input) { in.strip = true }, true},
		{"go settings", func(_ *testing.T, in *input) { in.env = append(in.env, "CGO_ENABLED=0") }, true},
		{"gofault", func(t *testing.T, _ *input) {
			old := selfHash
			selfHash = func() (string, error) { return "another gofault", nil }
			t.Cleanup(func() { selfHash = old })
		}, true},
	}
	key := func(t *testing.T, in input) string {
		t.Helper()
		w, err := instrument.Prepare(ctx, in.t)
		if err != nil {
			t.Fatal(err)
		}
		w.Env = append(w.Env, in.env...)
		k, err := nodeKey(ctx, w, in.t, in.kind, in.strip)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input{t: writeModule(t), kind: "node"}
			before := key(t, in)
			tt.change(t, &in)
			if after := key(t, in); (after != before) != tt.changed {
				t.Errorf("key changed: %v, want %v", after != before, tt.changed)
			}
		})
	}
}

// TestNodeKeyTestFiles checks that the key of a test binary's build
// (instrument.Target.Test) changes with the package's _test.go files, and
// that of a node's build does not.
func TestNodeKeyTestFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	ctx := context.Background()
	for _, test := range []bool{true, false} {
		tg := writeModule(t)
		tg.Test = test
		if test {
			tg.Main = "./p"
		}
		testFile := filepath.Join(tg.Module, "p", "p_test.go")
		key := func(src string) string {
			t.Helper()
			if err := os.WriteFile(testFile, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := instrument.Prepare(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			k, err := nodeKey(ctx, w, tg, "node", false)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		before := key("package p\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) { Run() }\n")
		after := key("package p\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) { Run(); Run() }\n")
		if (after != before) != test {
			t.Errorf("test build %v: key changed with a _test.go file: %v, want %v", test, after != before, test)
		}
	}
}

// TestNodeKeyRelease checks the key of builds of a release (target.version):
// the same release prepared again (its resolved go.mod reused) gives the
// same key, another release another key. The release is golang.org/x/mod,
// a dependency of instrument/testdata/app.
func TestNodeKeyRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves releases with go get")
	}
	ctx := context.Background()
	app, err := filepath.Abs(filepath.Join("..", "instrument", "testdata", "app"))
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "build")
	key := func(version string) string {
		t.Helper()
		target := instrument.Target{Module: app, Main: "./cmd/app", Packages: []string{"golang.org/x/mod/semver"},
			Version: version, Versioned: []string{"golang.org/x/mod"}, WorkDir: work}
		w, err := instrument.Prepare(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		k, err := nodeKey(ctx, w, target, "node", false)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	old := key("v0.41.0")
	if again := key("v0.41.0"); again != old {
		t.Errorf("the same release prepared again: key %s, was %s", again, old)
	}
	if other := key("v0.42.0"); other == old {
		t.Errorf("another release: the same key %s", other)
	}
	if again := key("v0.41.0"); again != old {
		t.Errorf("back to the first release: key %s, was %s", again, old)
	}
}

// copyMinikv copies examples/minikv to a temp dir, with its go.work's
// paths made absolute (the copy builds against this checkout through the
// workspace, as the example does), and returns the copy.
func copyMinikv(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "examples", "minikv"))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(src))
	dst := t.TempDir()
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == ".gofault" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "go.work" {
			data = []byte(strings.ReplaceAll(string(data), "../..", root))
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestReuse builds minikv twice (the second build is reused), then edits
// a source file (rebuilt), and does the same for its workload.
func TestReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	ctx := context.Background()
	dir := copyMinikv(t)
	tg := instrument.Target{Module: dir, Main: "./node", Packages: []string{"./server"}, WorkDir: filepath.Join(dir, ".gofault", "build")}
	bin := filepath.Join(dir, ".gofault", "bin", "minikv")
	wl := bin + "-workload"
	step := func(name string, opts Options, wantReused bool) {
		t.Helper()
		res, err := Node(ctx, tg, bin, nil, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Reused != wantReused || res.Catalog == nil || len(res.Catalog.Sites) == 0 {
			t.Errorf("%s: reused %v with %v, want reused %v", name, res.Reused, res.Catalog, wantReused)
		}
		reused, err := Workload(ctx, dir, "./workload", wl, opts)
		if err != nil {
			t.Fatalf("%s: workload: %v", name, err)
		}
		if reused != wantReused {
			t.Errorf("%s: workload reused %v, want %v", name, reused, wantReused)
		}
	}
	step("first build", Options{}, false)
	step("second build", Options{}, true)
	step("--rebuild", Options{Rebuild: true}, false)
	f := filepath.Join(dir, "server", "node.go")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, append(data, "\n// edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := Node(ctx, tg, bin, nil, Options{}); err != nil || res.Reused {
		t.Errorf("after an edit of server/node.go: reused %v, err %v; want a fresh build", res != nil && res.Reused, err)
	}
	wf := filepath.Join(dir, "workload", "main.go")
	if data, err = os.ReadFile(wf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wf, append(data, "\n// edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if reused, err := Workload(ctx, dir, "./workload", wl, Options{}); err != nil || reused {
		t.Errorf("after an edit of the workload: reused %v, err %v; want a fresh build", reused, err)
	}
}

// TestAnalysisKept: `gofault analyze` keeps its analysis with the key of
// its inputs, and a build of the same inputs takes it instead of
// analysing again; a changed source is analysed afresh.
func TestAnalysisKept(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list and the analysis")
	}
	ctx := context.Background()
	tg := writeModule(t)
	run := func() (*analysis.Result, bool) {
		t.Helper()
		var res *analysis.Result
		var reused bool
		err := withWork(ctx, tg, func(w *instrument.Work) error {
			in, err := inputsKey(ctx, w, tg)
			if err != nil {
				return err
			}
			res, reused, err = analyzeCached(ctx, w, kindKey(in, "analysis", false))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return res, reused
	}
	first, reused := run()
	if reused || len(first.Catalog.Sites) == 0 {
		t.Fatalf("first analysis: reused %v, %d sites", reused, len(first.Catalog.Sites))
	}
	again, reused := run()
	if !reused || again.Catalog.Hash != first.Catalog.Hash || again.Stats.Totals[analysis.CountErrorSites] != first.Stats.Totals[analysis.CountErrorSites] {
		t.Errorf("same inputs: reused %v, catalog %s (was %s), stats %v (were %v)", reused, again.Catalog.Hash, first.Catalog.Hash, again.Stats.Totals, first.Stats.Totals)
	}
	src := filepath.Join(tg.Module, "p", "p.go")
	if err := os.WriteFile(src, []byte("package p\n\nimport \"os\"\n\n// Run writes two files.\nfunc Run() { _ = os.WriteFile(\"x\", nil, 0o644); _ = os.WriteFile(\"y\", nil, 0o644) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, reused := run()
	if reused || len(changed.Catalog.Sites) == len(first.Catalog.Sites) {
		t.Errorf("changed source: reused %v, %d sites (was %d)", reused, len(changed.Catalog.Sites), len(first.Catalog.Sites))
	}
}
