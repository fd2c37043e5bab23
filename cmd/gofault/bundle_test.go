package main

import (
	"bytes"
	"encoding/json"
	"github.com/gofault/gofault/internal/version"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestBundle builds a minikv bundle, builds it again (reused), then runs a
// campaign and a replay from it with no go command on PATH, in another
// work dir.
func TestBundle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds minikv and runs a cluster")
	}
	cfg, err := filepath.Abs("../../examples/minikv/gofault.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	buildArgs := []string{"build", "--config", cfg, "--bundle", dir, "--set", "workdir=" + t.TempDir(), "--json"}
	type bundleOut struct {
		Reused   bool
		Bytes    int64
		Manifest struct {
			Node, Workload, CatalogHash string
		}
	}
	for i, wantReused := range []bool{false, true} {
		var out, errb bytes.Buffer
		if code := run(buildArgs, &out, &errb); code != 0 {
			t.Fatalf("build --bundle: exit %d\n%s", code, errb.String())
		}
		var res bundleOut
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		if res.Reused != wantReused || res.Bytes == 0 || res.Manifest.Workload == "" {
			t.Errorf("build %d: %s, want reused %v", i+1, out.String(), wantReused)
		}
	}
	for _, f := range []string{"minikv", "minikv-workload", "catalog.json", "gofault.yaml", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("bundle lacks %s: %v", f, err)
		}
	}

	t.Setenv("PATH", t.TempDir())
	if p, err := exec.LookPath("go"); err == nil {
		t.Fatalf("go still on PATH: %s", p)
	}
	work := t.TempDir()
	var out, errb bytes.Buffer
	runArgs := []string{"run", "--bundle", dir, "--trials", "1", "--set", "workdir=" + work, "--set", "checkers.baseline=1", "--json", "--fail-on", "failures"}
	code := run(runArgs, &out, &errb)
	if code != 0 && code != exitFound {
		t.Fatalf("run --bundle: exit %d\n%s", code, errb.String())
	}
	var sum struct {
		Version      version.Info `json:"version"`
		Campaign     int64        `json:"campaign"`
		Trials       int          `json:"trials"`
		FailedTrials int          `json:"failed_trials"`
		Findings     int          `json:"findings"`
		FaultFree    int          `json:"fault_free_failures"`
		Generic      int          `json:"generic_consequences"`
		ErrorTrials  int          `json:"error_trials"`
		DB           string       `json:"db"`
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	// --fail-on failures: exit 4 exactly when the summary has a failure.
	if failed := sum.FailedTrials+sum.Findings+sum.FaultFree+sum.Generic+sum.ErrorTrials > 0; failed != (code == exitFound) {
		t.Errorf("run --fail-on failures: exit %d with %d failed trials, %d findings\n%s", code, sum.FailedTrials, sum.Findings, errb.String())
	}
	if sum.Version.Wire == 0 {
		t.Errorf("run --json lacks gofault's version: %s", out.String())
	}
	if sum.Trials != 1 || sum.ErrorTrials != 0 || filepath.Dir(sum.DB) != work {
		t.Errorf("run --bundle: %s\n%s", out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"replay", "--bundle", dir, "--db", sum.DB, "--json", "1-1"}, &out, &errb); code != 0 && code != 3 {
		t.Fatalf("replay --bundle: exit %d\n%s", code, errb.String())
	}
	if !bytes.Contains(out.Bytes(), []byte(`"original": "1-1"`)) {
		t.Errorf("replay --bundle printed %s\n%s", out.String(), errb.String())
	}
}
