package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// writeAppConfig writes a gofault.yaml for the analysis testdata module.
func writeAppConfig(t *testing.T) string {
	t.Helper()
	mod, err := filepath.Abs(filepath.Join("..", "..", "analysis", "testdata", "app"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "gofault.yaml")
	data := "name: app\ntarget:\n  module: " + mod + "\n  main: ./cmd/node\n  packages:\n    - example.com/app/store\n"
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestAnalyzeJSON(t *testing.T) {
	cfg := writeAppConfig(t)
	catFile := filepath.Join(t.TempDir(), "catalog.json")
	var out, errOut bytes.Buffer
	// --set widens the packages to the whole module.
	code := run([]string{"analyze", "--config", cfg, "--json", "--catalog", catFile,
		"--set", "target.packages=example.com/app/..."}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if n := strings.Count(strings.TrimSpace(out.String()), "\n"); n != 0 {
		t.Errorf("want exactly one JSON line, got %d more:\n%s", n, out.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	for _, k := range []string{"packages", "functions", "error_sites", "delay_sites", "pruned_invalid", "seconds"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %q in %s", k, out.String())
		}
	}
	if m["packages"].(float64) != 3 {
		t.Errorf("packages = %v, want 3 (store, peer, cmd/node via --set)", m["packages"])
	}
	cat, err := catalog.Load(catFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := float64(len(cat.Sites)), m["delay_sites"].(float64); got < want || got == 0 {
		t.Errorf("catalog has %v sites, JSON says %v delay sites", got, want)
	}
}

func TestAnalyzeTable(t *testing.T) {
	cfg := writeAppConfig(t)
	var out, errOut bytes.Buffer
	if code := run([]string{"analyze", "--config", cfg}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"package", "error sites", "delay sites", "pruned invalid", "example.com/app/store", "total (1 packages)", "analysis took"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
}

func TestAnalyzeUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"analyze", "extra"}, &out, &errOut); code != 2 {
		t.Errorf("exit %d, want 2 for a stray argument", code)
	}
}

// TestAnalyzeVersion checks that analyze reads the tree build compiles:
// with target.version set, every site of a versioned dependency module is
// at that version, not at the one go.mod pins.
func TestAnalyzeVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("prepares a work dir with go get")
	}
	app, err := filepath.Abs(filepath.Join("..", "..", "instrument", "testdata", "app"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "gofault.yaml")
	yaml := "name: app\ntarget:\n  module: " + app + "\n  main: ./cmd/app\n  packages: [golang.org/x/mod/zip]\n  versioned: [golang.org/x/mod]\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"v0.41.0", "v0.42.0"} { // go.mod pins v0.42.0
		var out, errOut bytes.Buffer
		if code := run([]string{"analyze", "--config", cfg, "--sites", "--set", "target.version=" + version}, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		at, other := "golang.org/x/mod@"+version+"/", "golang.org/x/mod@v0.4"
		if !strings.Contains(out.String(), at) || strings.Count(out.String(), other) != strings.Count(out.String(), at) {
			t.Errorf("version %s: sites not all at %s:\n%s", version, at, out.String())
		}
	}
}
