// Package nats_test runs short real gofault campaigns on the NATS
// JetStream profile (gofault.yaml): nats-server's server package
// instrumented, built from the module proxy, three servers per trial, the
// workload and every checker.
package nats_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
)

// summary is the part of "gofault run --json" the test reads.
type summary struct {
	Trials         int `json:"trials"`
	InjectedTrials int `json:"injected_trials"`
	Findings       int `json:"findings"`
	FaultFree      int `json:"fault_free_failures"`
	ErrorTrials    int `json:"error_trials"`
	BaselineTrials int `json:"baseline_trials"`
}

// TestCampaigns runs a fault-free campaign, which must report nothing,
// and a short campaign with random faults, which must run every trial to
// its end (its findings are judged by a person, not here). About two
// minutes on 2 cores, most of it building the instrumented server.
func TestCampaigns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nats-server instrumented and runs real clusters")
	}
	bin := filepath.Join(t.TempDir(), "gofault")
	build := exec.Command("go", "build", "-o", bin, "./cmd/gofault")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build gofault: %v\n%s", err, out)
	}
	work := t.TempDir()
	common := []string{"--config", "gofault.yaml", "--json", "--set", "workdir=" + work,
		"--set", "checkers.baseline=1", "--set", "checkers.rerun_fault_free=-1"}
	campaign := func(args ...string) summary {
		t.Helper()
		cmd := exec.Command(bin, append(append([]string{"run"}, args...), common...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("gofault run %v: %v\n%s", args, err, errb.String())
		}
		var s summary
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatalf("summary is not JSON: %v\n%s", err, out.String())
		}
		if s.ErrorTrials != 0 {
			t.Errorf("%v: %d trials could not run\n%s", args, s.ErrorTrials, errb.String())
		}
		return s
	}
	clean := campaign("--policy", "none", "--trials", "2")
	if clean.Trials != 2 || clean.Findings != 0 || clean.FaultFree != 0 {
		t.Errorf("fault-free campaign: %+v, want 2 trials, 0 findings, 0 fault-free failures", clean)
	}
	faults := campaign("--policy", "random", "--trials", "3")
	if faults.Trials != 3 || faults.InjectedTrials == 0 {
		t.Errorf("campaign with faults: %+v, want 3 trials with injections", faults)
	}
	t.Logf("fault-free: %+v; random: %+v", clean, faults)
}
