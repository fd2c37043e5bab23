package instrument

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/internal/sumdbtest"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// fakeModule is a module version served by a file:// module proxy.
type fakeModule struct {
	path, version string
	requires      []string // path@version
	imports       []string // packages the module's one package imports
}

// fakeProxy writes mods as a module proxy directory and returns its URL,
// and puts them in sumdb, the checksum database the go command checks
// them against.
func fakeProxy(t *testing.T, sumdb *sumdbtest.DB, mods []fakeModule) string {
	t.Helper()
	root := t.TempDir()
	lists := map[string][]string{}
	for _, m := range mods {
		var gomod strings.Builder
		fmt.Fprintf(&gomod, "module %s\n\ngo 1.16\n", m.path)
		for _, r := range m.requires {
			path, v, _ := strings.Cut(r, "@")
			fmt.Fprintf(&gomod, "\nrequire %s %s\n", path, v)
		}
		src := t.TempDir()
		var imports strings.Builder
		for _, imp := range m.imports {
			fmt.Fprintf(&imports, "import _ %q\n", imp)
		}
		name := m.path[strings.LastIndex(m.path, "/")+1:]
		writeFiles(t, src, map[string]string{
			"go.mod":      gomod.String(),
			name + ".go":  fmt.Sprintf("package %s\n\n%s\nconst Version = %q\n", name, imports.String(), m.version),
			"LICENSE.txt": "fake\n",
		})
		esc, err := module.EscapePath(m.path)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, filepath.FromSlash(esc), "@v")
		var zip bytes.Buffer
		if err := modzip.CreateFromDir(&zip, module.Version{Path: m.path, Version: m.version}, src); err != nil {
			t.Fatal(err)
		}
		writeFiles(t, dir, map[string]string{
			m.version + ".mod":  gomod.String(),
			m.version + ".info": fmt.Sprintf(`{"Version":%q,"Time":"2021-01-01T00:00:00Z"}`, m.version),
			m.version + ".zip":  zip.String(),
		})
		if err := sumdb.Add(module.Version{Path: m.path, Version: m.version}, filepath.Join(dir, m.version+".zip"), []byte(gomod.String())); err != nil {
			t.Fatal(err)
		}
		lists[dir] = append(lists[dir], m.version)
	}
	for dir, vs := range lists {
		writeFiles(t, dir, map[string]string{"list": strings.Join(vs, "\n") + "\n"})
	}
	return "file://" + filepath.ToSlash(root)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResolveRelease prepares a work dir for releases of a fake module
// graph: the work go.mod holds the release's own graph (not the user's
// newer pins, nor what the user's other programs need), the user's version
// of what the main package imports from outside the release, floors raised,
// and a second Prepare reuses the resolved go.mod with no module proxy.
func TestResolveRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go get against a fake module proxy")
	}
	// The fake modules' own checksum database: the go command checks every
	// one of them against its signed tree, as it checks real modules
	// against sum.golang.org; nothing is exempted.
	sumdb, err := sumdbtest.New("sumdb.example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	sumdbSrv := httptest.NewServer(sumdb.Handler())
	defer sumdbSrv.Close()
	proxy := fakeProxy(t, sumdb, []fakeModule{
		{path: "example.com/rel", version: "v1.0.0", requires: []string{"example.com/dep@v1.0.0", "example.com/old@v1.0.0"}, imports: []string{"example.com/dep", "example.com/old"}},
		{path: "example.com/rel", version: "v1.1.0", requires: []string{"example.com/dep@v1.1.0", "example.com/old@v1.2.0"}, imports: []string{"example.com/dep", "example.com/old"}},
		{path: "example.com/dep", version: "v1.0.0"},
		{path: "example.com/dep", version: "v1.1.0"},
		{path: "example.com/dep", version: "v1.2.0"},
		{path: "example.com/old", version: "v1.0.0"},
		{path: "example.com/old", version: "v1.1.0"},
		{path: "example.com/old", version: "v1.2.0"},
		{path: "example.com/extra", version: "v1.0.0", requires: []string{"example.com/dep@v1.0.0"}},
		{path: "example.com/tool", version: "v1.0.0", requires: []string{"example.com/dep@v1.2.0"}, imports: []string{"example.com/dep"}},
	})
	t.Setenv("GOPROXY", proxy)
	t.Setenv("GOSUMDB", sumdb.GOSUMDB(sumdbSrv.URL))
	t.Setenv("GOPRIVATE", "")
	t.Setenv("GONOPROXY", "")
	// The go command keeps the database's latest tree in GOPATH/pkg/sumdb:
	// a fresh one, since each run's database has a new key.
	t.Setenv("GOPATH", t.TempDir())
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-modcacherw") // so that the temp module cache can be removed
	t.Setenv("GOTOOLCHAIN", "local")

	// The user's module pins newer versions than the releases use, and
	// its workload needs example.com/tool, which needs dep v1.2.0.
	app := t.TempDir()
	writeFiles(t, app, map[string]string{
		"go.mod": `module example.com/app

go 1.26.0

require (
	example.com/dep v1.2.0
	example.com/extra v1.0.0
	example.com/local v0.0.0
	example.com/old v1.2.0
	example.com/rel v1.1.0
	example.com/tool v1.0.0
)

replace example.com/local => ./local
`,
		"node/main.go":     "package main\n\nimport (\n\t_ \"example.com/extra\"\n\t_ \"example.com/local\"\n\t_ \"example.com/rel\"\n)\n\nfunc main() {}\n",
		"workload/main.go": "package main\n\nimport _ \"example.com/tool\"\n\nfunc main() {}\n",
		"local/go.mod":     "module example.com/local\n\ngo 1.16\n",
		"local/local.go":   "package local\n",
	})
	// go.sum of the user's module, as go mod tidy leaves it.
	runGo(t, app, "mod", "tidy")

	floors := []Floor{{Path: "example.com/old", Version: "v1.1.0", Why: "test"}}
	tests := []struct {
		version string
		want    map[string]string // requirements of the work go.mod
	}{
		{"v1.0.0", map[string]string{
			"example.com/rel":   "v1.0.0",
			"example.com/dep":   "v1.0.0", // the release's, not the user's v1.2.0
			"example.com/old":   "v1.1.0", // raised from v1.0.0 to its floor
			"example.com/extra": "v1.0.0", // the main package imports it; not in the release
			"example.com/local": "v0.0.0", // replaced by a local directory
			AgentModule:         "v0.0.0",
		}},
		{"v1.1.0", map[string]string{
			"example.com/rel":   "v1.1.0",
			"example.com/dep":   "v1.1.0",
			"example.com/old":   "v1.2.0", // above its floor: the release's
			"example.com/extra": "v1.0.0",
			"example.com/local": "v0.0.0",
			AgentModule:         "v0.0.0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			target := Target{Module: app, Main: "./node", Packages: []string{"example.com/rel"},
				Version: tt.version, Versioned: []string{"example.com/rel"}, WorkDir: filepath.Join(t.TempDir(), "build")}
			saved := Floors
			Floors = floors
			defer func() { Floors = saved }()
			w, err := Prepare(context.Background(), target)
			if err != nil {
				t.Fatal(err)
			}
			got := requirements(t, w.ModFile)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("work go.mod requires\n%v\nwant\n%v", got, tt.want)
			}
			if len(w.Copies) != 1 || w.Copies[0].Version != tt.version {
				t.Errorf("copies %+v, want example.com/rel@%s", w.Copies, tt.version)
			}
			before := readFile(t, w.ModFile)
			// The node builds with it.
			runGo(t, app, "build", "-modfile="+w.ModFile, "-mod=mod", "-o", os.DevNull, "./node")
			// The same release again: the resolved go.mod is reused,
			// with no module proxy to ask.
			t.Setenv("GOPROXY", "off")
			w, err = Prepare(context.Background(), target)
			if err != nil {
				t.Fatal(err)
			}
			if after := readFile(t, w.ModFile); after != before {
				t.Errorf("second Prepare's go.mod differs:\n%s\nfirst:\n%s", after, before)
			}
		})
		t.Setenv("GOPROXY", proxy)
	}
	if got := readFile(t, filepath.Join(app, "go.mod")); !strings.Contains(got, "example.com/rel v1.1.0") {
		t.Errorf("the user's go.mod changed:\n%s", got)
	}
	// Every fake module the builds used was checked against the database.
	looked := map[string]bool{}
	for _, m := range sumdb.Looked() {
		looked[m.String()] = true
	}
	for _, tt := range tests {
		for path, v := range tt.want {
			if m := path + "@" + v; path != "example.com/local" && path != AgentModule && !looked[m] {
				t.Errorf("%s was not looked up in the checksum database (looked up: %v)", m, sumdb.Looked())
			}
		}
	}
}

func TestReleaseModFile(t *testing.T) {
	user := `module example.com/m

go 1.25.0

toolchain go1.26.1

require (
	example.com/a v1.0.0
	example.com/v v1.5.0
)

exclude example.com/x v1.0.0

replace example.com/a => /src/a

replace example.com/v => /src/v

replace example.com/b v1.2.0 => example.com/c v1.3.0
`
	want := `module example.com/m

go 1.25.0

toolchain go1.26.1

exclude example.com/x v1.0.0

replace example.com/a => /src/a

replace example.com/b v1.2.0 => example.com/c v1.3.0
`
	got, err := releaseModFile([]byte(user), []string{"example.com/v"})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("releaseModFile =\n%s\nwant\n%s", got, want)
	}
}

// runGo runs the go command in dir and fails the test if it fails.
func runGo(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := osexec.Command("go", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func requirements(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := modfile.Parse(file, []byte(readFile(t, file)), nil)
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]string{}
	for _, r := range f.Require {
		req[r.Mod.Path] = r.Mod.Version
	}
	return req
}

func readFile(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestReleaseDecisions(t *testing.T) {
	graph := map[string]string{"a": "v1.0.0", "b": "v1.2.0", "c": "v0.0.0-20210101000000-abcdefabcdef"}
	floors := []Floor{{Path: "a", Version: "v1.0.1"}, {Path: "b", Version: "v1.2.0"}, {Path: "c", Version: "v0.1.0"}, {Path: "x", Version: "v9.0.0"}}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"missing", missing([]string{"a@v2.0.0", "x@v1.0.0", "y@v0.0.0"}, graph), []string{"x@v1.0.0", "y@v0.0.0"}},
		{"missing none", missing([]string{"b@v1.9.0"}, graph), []string(nil)},
		// a below its floor, b at it, c a pseudo-version below v0.1.0, x not in the graph
		{"below floor", belowFloor(floors, graph), []Floor{floors[0], floors[2]}},
		{"moved", moved(graph, map[string]string{"a": "v1.0.1", "b": "v1.3.0", "c": graph["c"]}, floors[:1]), []string{"b"}},
		{"moved none", moved(graph, graph, nil), []string(nil)},
	}
	for _, tt := range tests {
		if fmt.Sprintf("%#v", tt.got) != fmt.Sprintf("%#v", tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
}
