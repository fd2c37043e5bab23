package build

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/instrument"
)

func TestWriteCompileDropped(t *testing.T) {
	tests := []struct {
		ds   []instrument.Dropped
		want string
	}{
		{nil, ""},
		{[]instrument.Dropped{{ID: "p:f#1", What: "site", File: "/a/b.go", Line: 7, Reason: instrument.SkipNoErrResult}}, ""},
		{[]instrument.Dropped{{ID: "p:os.ReadDir#1", What: "site", File: "/a/b.go", Line: 7, Reason: instrument.SkipCompile,
			Errors: []string{"/a/b.go:7:3: undefined: fs.X", "/a/b.go:7:9: y"}}},
			"  dropped    site p:os.ReadDir#1 at /a/b.go:7: /a/b.go:7:3: undefined: fs.X; /a/b.go:7:9: y\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		writeCompileDropped(&b, tt.ds)
		if b.String() != tt.want {
			t.Errorf("writeCompileDropped(%+v) = %q, want %q", tt.ds, b.String(), tt.want)
		}
	}
}

// TestWriteDropped: the sites whose rewrite did not compile are listed
// with the compiler's error; nothing without a dropped.json.
func TestWriteDropped(t *testing.T) {
	work := t.TempDir()
	cfg := &config.Config{Name: "x", WorkDir: work}
	var none bytes.Buffer
	WriteDropped(&none, cfg)
	if none.Len() != 0 {
		t.Errorf("no dropped.json, output %q", none.String())
	}
	ds := []instrument.Dropped{
		{ID: "wal.go:10:3", What: "site", File: "wal.go", Line: 10, Reason: instrument.SkipCompile, Errors: []string{"wal.go:10:3: undefined: x"}},
		{ID: "wal.go:20:3", What: "site", File: "wal.go", Line: 20, Reason: "go statement"},
	}
	data, _ := json.Marshal(ds)
	os.MkdirAll(filepath.Join(work, "build"), 0o755)
	if err := os.WriteFile(instrument.DroppedFile(filepath.Join(work, "build")), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteDropped(&out, cfg)
	if !strings.Contains(out.String(), "dropped sites: 1 could not be instrumented") ||
		!strings.Contains(out.String(), "site wal.go:10:3 at wal.go:10: wal.go:10:3: undefined: x") {
		t.Errorf("output:\n%s", out.String())
	}
}
