package gotest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
)

// TestPackageFiles: a bundle copies the package directory's files and its
// testdata tree, not other packages' directories, and refuses more than
// its bound.
func TestPackageFiles(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{
		"a.go": 10, "golden.txt": 20, "testdata/in/x.json": 30, "testdata/y": 5, "sub/other.go": 1000,
	} {
		f := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		limit   int64
		want    []string
		wantErr string
	}{
		{1 << 20, []string{"a.go", "golden.txt", "testdata/in/x.json", "testdata/y"}, ""},
		{65, []string{"a.go", "golden.txt", "testdata/in/x.json", "testdata/y"}, ""},
		{64, nil, "holds more than"},
	} {
		got, err := PackageFiles(dir, tc.limit)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("limit %d: err %v, want %q", tc.limit, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("limit %d: %v", tc.limit, err)
		default:
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("limit %d: files %v, want %v", tc.limit, got, tc.want)
			}
		}
	}
}

// TestOpenBundleKinds: a test bundle opens; a cluster bundle, another
// gofault's and one without its package dir are refused.
func TestOpenBundleKinds(t *testing.T) {
	version, err := build.Version()
	if err != nil {
		t.Fatal(err)
	}
	c := &campaignRun{o: Options{Package: "example.com/p", Env: []string{"K=V"}, Module: "/m", WorkDir: "/w"},
		bin: filepath.Join(t.TempDir(), "pkg.test"), pkgDir: t.TempDir(), cat: mustCatalog(t)}
	if err := os.WriteFile(c.bin, []byte("bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.pkgDir, "golden.txt"), []byte("g"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		change  func(dir string) error
		wantErr string
	}{
		{"written", func(string) error { return nil }, ""},
		{"a cluster's", func(dir string) error { return setManifest(dir, func(m *build.Manifest) { m.Kind = "" }) }, "not a test campaign's"},
		{"another gofault's", func(dir string) error { return setManifest(dir, func(m *build.Manifest) { m.Gofault = "v0.0.1" }) }, "built by gofault v0.0.1"},
		{"no package dir", func(dir string) error { return os.RemoveAll(filepath.Join(dir, BundlePackage)) }, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bundle")
			if _, err := c.writeBundle(dir); err != nil {
				t.Fatal(err)
			}
			if err := tc.change(dir); err != nil {
				t.Fatal(err)
			}
			b, err := OpenBundle(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("OpenBundle: %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Manifest.Gofault != version || b.Manifest.GOARCH != runtime.GOARCH || b.Options.Package != "example.com/p" ||
				!slices.Equal(b.Options.Env, []string{"K=V"}) || b.Options.Module != "" || b.Options.WorkDir != "" {
				t.Errorf("bundle %+v", b)
			}
			if data, err := os.ReadFile(filepath.Join(b.PkgDir, "golden.txt")); err != nil || string(data) != "g" {
				t.Errorf("package file: %q, %v", data, err)
			}
		})
	}
}

func setManifest(dir string, change func(*build.Manifest)) error {
	file := filepath.Join(dir, build.BundleManifest)
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var m build.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	change(&m)
	return build.WriteJSONFile(file, m)
}

func mustCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.New(catalog.Parts{Module: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}
