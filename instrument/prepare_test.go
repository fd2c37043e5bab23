package instrument

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

func TestWorkModFile(t *testing.T) {
	in := `module example.com/m

go 1.25

require (
	example.com/a v1.0.0
	github.com/gofault/gofault/agent v0.0.0
)

replace example.com/a => ../a

replace example.com/b v1.2.0 => example.com/c v1.3.0

replace github.com/gofault/gofault/agent => ./agent
`
	out, err := workModFile([]byte(in), "/src/m")
	if err != nil {
		t.Fatal(err)
	}
	out, err = addReplacements(out, "/work/go.mod", map[string]string{
		AgentModule:     "/work/agent",
		"example.com/d": "/work/mod/example.com/d@v1.0.0",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		"replace example.com/a => /src/a\n",
		"replace example.com/b v1.2.0 => example.com/c v1.3.0\n",
		"replace github.com/gofault/gofault/agent => /work/agent\n",
		"replace example.com/d => /work/mod/example.com/d@v1.0.0\n",
		"example.com/d v0.0.0\n",
		"github.com/gofault/gofault/agent v0.0.0\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("work go.mod lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "./agent") || strings.Count(got, AgentModule+" =>") != 1 {
		t.Errorf("the user's agent replacement survived:\n%s", got)
	}
}

func TestGoEnv(t *testing.T) {
	got := goEnv([]string{"HOME=/h", "GOWORK=/w/go.work", "GOFLAGS=-mod=vendor -trimpath -modfile=x"})
	want := []string{"HOME=/h", "GOFLAGS=-trimpath", "GOWORK=off"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("goEnv = %q, want %q", got, want)
	}
}

func TestBlame(t *testing.T) {
	a := &catalog.Site{Index: 0, ID: "a"}
	b := &catalog.Site{Index: 1, ID: "b"}
	c := &catalog.Site{Index: 2, ID: "c"}
	ov := &overlaySet{
		edits: map[string][]siteEdit{
			"/work/mod/m@v1/p/p.go": {{site: a, startLine: 10, endLine: 12}, {site: b, startLine: 20, endLine: 20}},
			"/src/q/q.go":           {{site: c, startLine: 5, endLine: 5}},
		},
		lineNames: map[string]string{"/work/mod/m@v1/p/p.go": "/cache/m@v1/p/p.go", "/src/q/q.go": "/src/q/q.go"},
		errFiles: map[string]*errFile{
			"/work/mod/m@v1/p/gofault_errors.go": {lineOf: map[uint32][2]int{1: {7, 12}}},
		},
		written: map[string]string{"/work/mod/m@v1/p/gofault_errors.go": "/work/overlay/0003_gofault_errors.go"},
	}
	w := &Work{ModuleDir: "/src"}
	tests := []struct {
		out  string
		want string // id=message|message ...
	}{
		{"# m/p\n/cache/m@v1/p/p.go:11:3: cannot use x\n", "a=/cache/m@v1/p/p.go:11:3: cannot use x"},
		{"/cache/m@v1/p/p.go:13:3: not a site line\n", ""},
		{"/work/overlay/0003_gofault_errors.go:9:10: undefined: fs.X\n", "b=/work/overlay/0003_gofault_errors.go:9:10: undefined: fs.X"},
		{"q/q.go:5:9: wrong\n/cache/m@v1/p/p.go:10:1: x\n/cache/m@v1/p/p.go:12: y\n",
			"a=/cache/m@v1/p/p.go:10:1: x|/cache/m@v1/p/p.go:12: y c=q/q.go:5:9: wrong"},
		{"go: updates to go.mod needed\n", ""},
	}
	for _, tt := range tests {
		bad := ov.blame(w, tt.out)
		var got []string
		for _, id := range sortedKeys(bad) {
			got = append(got, id+"="+strings.Join(bad[id], "|"))
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("blame(%q) = %q, want %q", tt.out, g, tt.want)
		}
	}
}

func TestPaths(t *testing.T) {
	w := &Work{Copies: []ModuleCopy{{Path: "m", Version: "v1", Orig: "/cache/m@v1", Dir: "/work/mod/m@v1"}}}
	for _, tt := range []struct{ copy, orig string }{
		{"/work/mod/m@v1/p/p.go", "/cache/m@v1/p/p.go"},
		{"/src/q.go", "/src/q.go"},
		{"/work/mod/m@v10/p.go", "/work/mod/m@v10/p.go"},
	} {
		if got := w.OrigPath(tt.copy); got != tt.orig {
			t.Errorf("OrigPath(%s) = %s, want %s", tt.copy, got, tt.orig)
		}
		if tt.copy != tt.orig {
			if got := w.CopyPath(tt.orig); got != tt.copy {
				t.Errorf("CopyPath(%s) = %s, want %s", tt.orig, got, tt.copy)
			}
		}
	}
}

// TestCopyModuleGoMod: the copy of a module published without a go.mod
// gets the one the go command synthesizes (a module line), since a
// replacement directory must have one; a module's own go.mod is kept.
func TestCopyModuleGoMod(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no go.mod", map[string]string{"db.go": "package bolt\n"}, "module github.com/boltdb/bolt\n"},
		{"its own go.mod", map[string]string{"db.go": "package bolt\n", "go.mod": "module github.com/boltdb/bolt\n\ngo 1.12\n"},
			"module github.com/boltdb/bolt\n\ngo 1.12\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := t.TempDir()
			for name, text := range tt.files {
				if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c, err := copyModule(listedModule{Path: "github.com/boltdb/bolt", Version: "v1.3.1", Dir: src}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(c.Dir, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("go.mod %q, want %q", got, tt.want)
			}
			if _, err := os.Stat(filepath.Join(src, "go.mod")); (err == nil) != (tt.files["go.mod"] != "") {
				t.Errorf("the module's own directory changed: go.mod stat %v", err)
			}
		})
	}
}
