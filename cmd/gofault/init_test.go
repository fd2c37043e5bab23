package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/config"
)

func TestInit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gofault.yaml")
	var out, errb bytes.Buffer
	if code := run([]string{"init", "--name", "kv", "-o", path}, &out, &errb); code != 0 {
		t.Fatalf("init exit %d: %s", code, errb.String())
	}
	c, err := config.Load(path, `cluster.command=["{{.Bin}}", "--port={{.Port.client}}"]`, "workload.package=./workload")
	if err != nil {
		t.Fatalf("written config does not load: %v", err)
	}
	c.Defaults()
	if err := c.Validate(config.Known{}); err != nil {
		t.Errorf("written config (filled) does not validate: %v", err)
	}
	if c.Name != "kv" || c.Dir != dir {
		t.Errorf("name %q dir %q", c.Name, c.Dir)
	}
	// A second init refuses to overwrite; --force does.
	errb.Reset()
	if code := run([]string{"init", "-o", path}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "already exists") {
		t.Errorf("overwrite: exit %d, stderr %q", code, errb.String())
	}
	if code := run([]string{"init", "--force", "-o", path}, &out, &errb); code != 0 {
		t.Errorf("--force: exit %d", code)
	}
	c, err = config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != filepath.Base(dir) {
		t.Errorf("default name %q, want %q", c.Name, filepath.Base(dir))
	}
}

// TestInitModule runs init in a Go module built on a known library: the
// config names the module's node program and the library's packages and
// ports, the workload skeleton is written beside it, and neither is
// overwritten by a second init.
func TestInitModule(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	for p, c := range map[string]string{
		"go.mod":                 "module example.com/jet\n\ngo 1.21\n\nrequire github.com/nats-io/nats-server/v2 v2.15.2\n",
		"cmd/jetserver/main.go":  "package main\n\nfunc main() {}\n",
		"deploy/placeholder.txt": "",
	} {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The config in a subdirectory of the module: target.module and
	// workload.package are relative to the right directories.
	path := filepath.Join(dir, "deploy", "gofault.yaml")
	var out, errb bytes.Buffer
	if code := run([]string{"init", "-o", path}, &out, &errb); code != 0 {
		t.Fatalf("init exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "node program ./cmd/jetserver (its name says server; the only main package)") ||
		!strings.Contains(out.String(), "consensus library nats-server (listed in go.mod, though ./cmd/jetserver does not import it)") {
		t.Errorf("init output does not name the library:\n%s", out.String())
	}
	c, err := config.Load(path, `cluster.command=["{{.Bin}}", "--port={{.Port.client}}"]`)
	if err != nil {
		t.Fatalf("written config does not load: %v", err)
	}
	if c.Target.Module != ".." || c.Target.Main != "./cmd/jetserver" || c.Workload.Package != "./deploy/workload" ||
		!slices.Contains(c.Target.Packages, "github.com/nats-io/nats-server/v2/server") || !slices.Equal(c.Cluster.Ports, []string{"client", "cluster", "monitor"}) {
		t.Errorf("config: module %q main %q workload %q packages %v ports %v", c.Target.Module, c.Target.Main, c.Workload.Package, c.Target.Packages, c.Cluster.Ports)
	}
	if _, err := os.Stat(filepath.Join(dir, "deploy", "workload", "main.go")); err != nil {
		t.Errorf("no workload skeleton: %v", err)
	}
	errb.Reset()
	if code := run([]string{"init", "-o", path}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "already exists") {
		t.Errorf("second init: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"init", "-o", filepath.Join(dir, "deploy", "other.yaml")}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "main.go already exists") {
		t.Errorf("init over an existing skeleton: exit %d, stderr %q", code, errb.String())
	}
	if code := run([]string{"init", "--workload", "../../elsewhere", "-o", filepath.Join(dir, "deploy", "third.yaml")}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "outside the module") {
		t.Errorf("--workload outside the module: exit %d, stderr %q", code, errb.String())
	}
}
