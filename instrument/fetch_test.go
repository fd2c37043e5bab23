package instrument

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFetchModule fetches a small module (google/renameio/v2 at v2.0.0,
// from the module proxy or the module cache) into a work dir: the copy is
// writable, holds that version's go.mod, and is reused by the next fetch
// (a file written into it stays), unless an earlier copy was cut short
// (no completion mark: it is made again).
func TestFetchModule(t *testing.T) {
	const path, version = "github.com/google/renameio/v2", "v2.0.0"
	downloadModule(t, path, version) // a clear failure where the proxy is out of reach
	root := t.TempDir()
	ctx := context.Background()
	c, err := FetchModule(ctx, path, version, root)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "github.com", "google", "renameio", "v2@v2.0.0"); c.Dir != want || c.Path != path || c.Version != version {
		t.Fatalf("copy %+v, want %s@%s in %s", c, path, version, want)
	}
	mod, err := os.ReadFile(filepath.Join(c.Dir, "go.mod"))
	if err != nil || !strings.Contains(string(mod), "module github.com/google/renameio/v2\n\ngo 1.13") {
		t.Fatalf("copied go.mod %q (%v), want v2.0.0's (go 1.13)", mod, err)
	}
	// Writable: the module cache's files are read-only.
	mark := filepath.Join(c.Dir, "tempfile.go")
	if err := os.WriteFile(mark, []byte("package renameio // written by the test\n"), 0o644); err != nil {
		t.Fatalf("copy not writable: %v", err)
	}
	if _, err := FetchModule(ctx, path, version, root); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(mark); !strings.Contains(string(data), "written by the test") {
		t.Errorf("a complete copy was made again, want it reused")
	}
	if err := os.Remove(filepath.Join(c.Dir, ".gofault-copied")); err != nil {
		t.Fatal(err)
	}
	if _, err := FetchModule(ctx, path, version, root); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(mark); strings.Contains(string(data), "written by the test") {
		t.Errorf("a copy without its completion mark was reused, want it made again")
	}
}

// TestFetchModuleErrors: a version the go command cannot fetch is an error
// naming module@version and the go command's reason; no copy is left.
func TestFetchModuleErrors(t *testing.T) {
	t.Setenv("GOPROXY", "off") // nothing is fetched: the cache alone answers
	for _, tc := range []struct {
		path, version string
		want          []string
	}{
		{"github.com/google/renameio/v2", "v2.99.99", []string{"fetch module github.com/google/renameio/v2@v2.99.99: go mod download:", "GOPROXY=off"}},
		{"example.com/gofault/no-such-module", "v1.0.0", []string{"fetch module example.com/gofault/no-such-module@v1.0.0: go mod download:"}},
	} {
		root := t.TempDir()
		_, err := FetchModule(context.Background(), tc.path, tc.version, root)
		if err == nil {
			t.Errorf("%s@%s: no error", tc.path, tc.version)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s@%s: error %q lacks %q", tc.path, tc.version, err, w)
			}
		}
		if left, _ := os.ReadDir(root); len(left) != 0 {
			t.Errorf("%s@%s: left %v in the work dir", tc.path, tc.version, left)
		}
	}
}
