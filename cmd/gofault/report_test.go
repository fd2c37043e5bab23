package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastDBRemembered(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if got := lastDB(); got != "" {
		t.Fatalf("lastDB() = %q before any run", got)
	}
	rememberDB("/work/x/.gofault/gofault.db")
	if got := lastDB(); got != "/work/x/.gofault/gofault.db" {
		t.Fatalf("lastDB() = %q", got)
	}
}

func TestReportWithoutDatabaseSaysWhatToDo(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var out, errb bytes.Buffer
	code := run([]string{"report", "--db", filepath.Join(t.TempDir(), "none.db")}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "run a campaign first") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
