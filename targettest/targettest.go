// Package targettest runs real gofault campaigns on a target profile from
// the target module's own tests (targets/raft, targets/nats,
// targets/consul): it builds gofault's command from the gofault module,
// runs a fault-free campaign, which must report nothing, and a short
// campaign with random faults, which must run every trial to its end with
// faults injected (its findings are for a person to judge, not the test).
package targettest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Summary is the part of "gofault run --json" the tests read.
type Summary struct {
	Trials         int `json:"trials"`
	InjectedTrials int `json:"injected_trials"`
	Findings       int `json:"findings"`
	FaultFree      int `json:"fault_free_failures"`
	ErrorTrials    int `json:"error_trials"`
	BaselineTrials int `json:"baseline_trials"`
}

// Options says where the profile and gofault are and how long to run.
type Options struct {
	// Root is the gofault module's directory, relative to the test's.
	Root string
	// Config is the profile (default "gofault.yaml").
	Config string
	// Set are config overrides for both campaigns (--set).
	Set []string
	// Clean and Faults are the trials of the fault-free and the random
	// campaign (default 2 and 3).
	Clean, Faults int
}

// Campaigns builds gofault and runs the two campaigns in one work dir (the
// second reuses the first's instrumented build); each has one baseline
// trial and no re-run of fault-free failures.
func Campaigns(t *testing.T, o Options) (clean, faults Summary) {
	t.Helper()
	if o.Config == "" {
		o.Config = "gofault.yaml"
	}
	if o.Clean == 0 {
		o.Clean = 2
	}
	if o.Faults == 0 {
		o.Faults = 3
	}
	bin := filepath.Join(t.TempDir(), "gofault")
	build := exec.Command("go", "build", "-o", bin, "./cmd/gofault")
	build.Dir = o.Root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build gofault: %v\n%s", err, out)
	}
	common := []string{"--config", o.Config, "--json", "--set", "workdir=" + t.TempDir(),
		"--set", "checkers.baseline=1", "--set", "checkers.rerun_fault_free=-1"}
	for _, s := range o.Set {
		common = append(common, "--set", s)
	}
	run := func(args ...string) Summary {
		t.Helper()
		cmd := exec.Command(bin, append(append([]string{"run"}, args...), common...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("gofault run %v: %v\n%s", args, err, errb.String())
		}
		var s Summary
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatalf("summary is not JSON: %v\n%s", err, out.String())
		}
		if s.ErrorTrials != 0 {
			t.Errorf("%v: %d trials could not run\n%s", args, s.ErrorTrials, errb.String())
		}
		return s
	}
	clean = run("--policy", "none", "--trials", strconv.Itoa(o.Clean))
	if clean.Trials != o.Clean || clean.Findings != 0 || clean.FaultFree != 0 {
		t.Errorf("fault-free campaign: %+v, want %d trials, 0 findings, 0 fault-free failures", clean, o.Clean)
	}
	faults = run("--policy", "random", "--trials", strconv.Itoa(o.Faults))
	if faults.Trials != o.Faults || faults.InjectedTrials == 0 {
		t.Errorf("campaign with faults: %+v, want %d trials with injections", faults, o.Faults)
	}
	t.Logf("fault-free: %+v; random: %+v", clean, faults)
	return clean, faults
}
