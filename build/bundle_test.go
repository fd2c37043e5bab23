package build

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

func TestOpenBundle(t *testing.T) {
	version, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.New(catalog.Parts{Module: "m"})
	if err != nil {
		t.Fatal(err)
	}
	good := Manifest{Gofault: version, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Target: "t",
		CatalogHash: cat.Hash, Node: "t", Workload: "t-workload"}
	tests := []struct {
		name     string
		change   func(m *Manifest)
		remove   string
		mismatch bool   // errors.Is ErrBundleMismatch
		wantErr  string // "" for success
	}{
		{"matching", func(*Manifest) {}, "", false, ""},
		{"other gofault", func(m *Manifest) { m.Gofault = "v0.0.1" }, "", true, "built by gofault v0.0.1"},
		{"other arch", func(m *Manifest) { m.GOARCH = "mips" }, "", true, "/mips"},
		{"other os", func(m *Manifest) { m.GOOS = "plan9" }, "", true, "plan9/"},
		{"other catalog", func(m *Manifest) { m.CatalogHash = "0123" }, "", false, "catalog.json has hash"},
		{"no node binary", func(*Manifest) {}, "t", false, "no such file"},
		{"no manifest", func(*Manifest) {}, BundleManifest, false, "gofault build --bundle"},
		{"a test campaign's", func(m *Manifest) { m.Kind = KindTest }, "", false, "a test campaign's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			m := good
			tt.change(&m)
			if err := WriteJSONFile(filepath.Join(dir, BundleManifest), m); err != nil {
				t.Fatal(err)
			}
			if err := cat.Save(filepath.Join(dir, BundleCatalog)); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"t", "t-workload", BundleConfig} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tt.remove != "" {
				if err := os.Remove(filepath.Join(dir, tt.remove)); err != nil {
					t.Fatal(err)
				}
			}
			b, err := OpenBundle(dir)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("OpenBundle: %v", err)
			case tt.wantErr == "":
				if b.Node != filepath.Join(dir, "t") || b.Workload != filepath.Join(dir, "t-workload") || b.Catalog.Hash != cat.Hash {
					t.Errorf("bundle %+v", b)
				}
			case err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.Is(err, ErrBundleMismatch) != tt.mismatch:
				t.Errorf("OpenBundle error %v, want one with %q (mismatch %v)", err, tt.wantErr, tt.mismatch)
			}
		})
	}
}
