package analysis

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestTestingImporters: a package importing "testing" is a test helper,
// skipped under a "..." pattern, but analysed when a pattern names it
// exactly — hashicorp/raft keeps its cluster test helpers (testing.go) in
// the library package itself.
func TestTestingImporters(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/lib\n\ngo 1.22\n",
		"lib.go": `package lib

import (
	"os"
	"testing"
)

// Save writes data.
func Save(data []byte) error { return os.WriteFile("f", data, 0o644) }

// Helper is a test helper in the library package.
func Helper(t *testing.T) { t.Helper() }
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		pattern string
		want    int // target packages
	}{
		{"example.com/lib", 1},
		{"example.com/lib/...", 0},
	} {
		prog, err := load(context.Background(), Options{Dir: dir, Patterns: []string{tc.pattern}})
		if tc.want == 0 {
			if err == nil {
				t.Errorf("%s: analysed %d packages, want an error naming the skipped test helper", tc.pattern, len(prog.Targets))
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if len(prog.Targets) != tc.want {
			t.Errorf("%s: analysed %d packages, want %d", tc.pattern, len(prog.Targets), tc.want)
		}
	}
}
