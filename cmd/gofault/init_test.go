package main

import (
	"bytes"
	"path/filepath"
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
