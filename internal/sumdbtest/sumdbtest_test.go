package sumdbtest

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// fakeZip writes module m's zip (one Go file and its go.mod) and returns
// its path and go.mod.
func fakeZip(t *testing.T, m module.Version) (string, []byte) {
	t.Helper()
	src := t.TempDir()
	gomod := []byte("module " + m.Path + "\n\ngo 1.16\n")
	files := map[string]string{"go.mod": string(gomod), "x.go": "package x\n\nconst V = \"" + m.Version + "\"\n"}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := modzip.CreateFromDir(&b, m, src); err != nil {
		t.Fatal(err)
	}
	zip := filepath.Join(t.TempDir(), "m.zip")
	if err := os.WriteFile(zip, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return zip, gomod
}

// serve adds mods to db and serves it.
func serve(t *testing.T, db *DB, mods ...module.Version) (*httptest.Server, map[module.Version]string) {
	t.Helper()
	lines := map[module.Version]string{}
	for _, m := range mods {
		zip, gomod := fakeZip(t, m)
		if err := db.Add(m, zip, gomod); err != nil {
			t.Fatal(err)
		}
		l, err := Lines(m, zip, gomod)
		if err != nil {
			t.Fatal(err)
		}
		lines[m] = string(l)
	}
	srv := httptest.NewServer(db.Handler())
	t.Cleanup(srv.Close)
	return srv, lines
}

// TestChain serves a local database whose unknown modules are looked up,
// verified, in an upstream one, and looks modules up in it as the go
// command does (a verifying sumdb.Client): its own modules, the
// upstream's, neither's, and an upstream that lies.
func TestChain(t *testing.T) {
	up, err := New("upstream.test", nil)
	if err != nil {
		t.Fatal(err)
	}
	real := module.Version{Path: "example.com/real", Version: "v1.0.0"}
	upSrv, upLines := serve(t, up, real)
	// A proxy of the upstream that changes the hash of every record it
	// passes on.
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		up.Handler().ServeHTTP(rec, r)
		w.WriteHeader(rec.Code)
		w.Write(bytes.ReplaceAll(rec.Body.Bytes(), []byte(" h1:"), []byte(" h1:A")))
	}))
	t.Cleanup(liar.Close)

	own := module.Version{Path: "example.com/own", Version: "v0.1.0-test"}
	tests := []struct {
		name     string
		upstream string // URL
		key      string // of the upstream
		mod      module.Version
		want     string // lines; "" an error
		notFound bool   // the error is fs.ErrNotExist
	}{
		{"its own module", upSrv.URL, up.Key(), own, "own", false},
		{"the upstream's module, verified", upSrv.URL, up.Key(), real, upLines[real], false},
		{"a module neither knows", upSrv.URL, up.Key(), module.Version{Path: "example.com/none", Version: "v1.0.0"}, "", true},
		{"an upstream that lies", liar.URL, up.Key(), real, "", false},
		{"the upstream under another key", upSrv.URL, mustKey(t), real, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := NewUpstream(tt.upstream, tt.key, t.TempDir())
			db, err := New("local.test", u.Lookup)
			if err != nil {
				t.Fatal(err)
			}
			srv, lines := serve(t, db, own)
			if tt.want == "own" {
				tt.want = lines[own]
			}
			// The go command's side: a verifying client of db.
			got, err := NewUpstream(srv.URL, db.Key(), t.TempDir()).Lookup(tt.mod.Path, tt.mod.Version)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Lookup(%s) = %q, want an error", tt.mod, got)
				}
				t.Logf("Lookup(%s): %v", tt.mod, err)
				if errors.Is(err, fs.ErrNotExist) != tt.notFound {
					t.Fatalf("Lookup(%s): %v, not found %v, want %v", tt.mod, err, !tt.notFound, tt.notFound)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lookup(%s): %v", tt.mod, err)
			}
			if string(got) != tt.want {
				t.Errorf("Lookup(%s) =\n%s\nwant\n%s", tt.mod, got, tt.want)
			}
			if n := strings.Count(string(got), "\n"); n != 2 || !strings.Contains(string(got), tt.mod.Version+"/go.mod h1:") {
				t.Errorf("Lookup(%s) = %q, want the zip's and the go.mod's line", tt.mod, got)
			}
			if l := db.Looked(); len(l) != 1 || l[0] != tt.mod {
				t.Errorf("looked up %v, want [%s]", l, tt.mod)
			}
		})
	}
}

// TestUpstreamCache looks a module up again with the upstream gone: the
// cached, signed state answers, checked again.
func TestUpstreamCache(t *testing.T) {
	up, err := New("upstream.test", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := module.Version{Path: "example.com/real", Version: "v1.0.0"}
	srv, lines := serve(t, up, m)
	dir := t.TempDir()
	if _, err := NewUpstream(srv.URL, up.Key(), dir).Lookup(m.Path, m.Version); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	got, err := NewUpstream(srv.URL, up.Key(), dir).Lookup(m.Path, m.Version)
	if err != nil || string(got) != lines[m] {
		t.Fatalf("from the cache: %q, %v; want %q", got, err, lines[m])
	}
	// Under another key the cached tree is not trusted.
	if got, err := NewUpstream(srv.URL, mustKey(t), dir).Lookup(m.Path, m.Version); err == nil {
		t.Fatalf("from the cache under another key: %q, want an error", got)
	}
}

func mustKey(t *testing.T) string {
	t.Helper()
	db, err := New("upstream.test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return db.Key()
}

// TestSumGolangOrgKey compares SumGolangOrg with the key the go command
// has built in, in the toolchain's source.
func TestSumGolangOrgKey(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", "cmd", "go", "internal", "modfetch", "key.go"))
	if err != nil {
		t.Skipf("no source of the go command: %v", err)
	}
	if want := `"sum.golang.org": "` + SumGolangOrg + `"`; !strings.Contains(string(src), want) {
		t.Errorf("the go command's key.go has no %s:\n%s", want, src)
	}
}
