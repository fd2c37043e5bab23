package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildCommand runs the analysis and the instrumented and plain builds
// of the instrument package's testdata module through the CLI.
func TestBuildCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	app, err := filepath.Abs(filepath.Join("..", "..", "instrument", "testdata", "app"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gofault.yaml")
	yaml := "name: app\ntarget:\n  module: " + app + "\n  main: ./cmd/app\n  packages: [example.com/app/store]\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"build", "--config", cfg, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("build exit %d: %s", code, errb.String())
	}
	var res struct {
		Binary  string
		Catalog string
		Stats   struct {
			Sites, Instrumented int
		}
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if res.Binary != filepath.Join(dir, ".gofault", "bin", "app") || res.Catalog != filepath.Join(dir, ".gofault", "bin", "catalog.json") {
		t.Errorf("binary %s, catalog %s", res.Binary, res.Catalog)
	}
	if res.Stats.Instrumented == 0 {
		t.Errorf("no site instrumented: %s", out.String())
	}
	out.Reset()
	if code := run([]string{"build", "--config", cfg, "--uninstrumented", "-o", filepath.Join(dir, "plain")}, &out, &errb); code != 0 {
		t.Fatalf("plain build exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "uninstrumented") {
		t.Errorf("plain build printed %q", out.String())
	}
	runApp := func(bin string) string {
		b, err := exec.Command(bin, t.TempDir()).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, b)
		}
		return string(b)
	}
	if a, b := runApp(res.Binary), runApp(filepath.Join(dir, "plain")); a != b {
		t.Errorf("instrumented output %q, plain %q", a, b)
	}
}
