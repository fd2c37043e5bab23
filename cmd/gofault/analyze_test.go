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
