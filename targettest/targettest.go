// Package targettest runs real gofault campaigns on a target profile from
// the target module's own tests (targets/raft, targets/nats,
// targets/consul) through gofaulttest, gofault's Go API for tests: a
// fault-free campaign, which must report nothing, and a short campaign
// with random faults, which must run every trial to its end with faults
// injected (its findings are for a person to judge, not the test); and
// builds gofault's command for tests that run it.
package targettest

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gofault/gofault/gofaulttest"
)

// Options say which profile to run and how long.
type Options struct {
	// Config is the profile (default "gofault.yaml").
	Config string
	// Set are config overrides for both campaigns (--set).
	Set []string
	// Clean and Faults are the trials of the fault-free and the random
	// campaign (default 2 and 3).
	Clean, Faults int
}

// Campaigns runs the two campaigns in one work dir (the second reuses the
// first's instrumented build); each has one baseline trial and no re-run
// of fault-free failures.
func Campaigns(t *testing.T, o Options) (clean, faults *gofaulttest.Result) {
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
	common := []gofaulttest.Option{gofaulttest.WorkDir(t.TempDir()),
		gofaulttest.Set("checkers.baseline=1", "checkers.rerun_fault_free=-1"), gofaulttest.Set(o.Set...)}
	clean = gofaulttest.Run(t, o.Config, append(common, gofaulttest.Policy("none"), gofaulttest.Trials(o.Clean))...)
	if clean.Trials != o.Clean || clean.FaultFreeFailures != 0 {
		t.Errorf("fault-free campaign: %d trials, %d fault-free failures; want %d trials and none\n%s", clean.Trials, clean.FaultFreeFailures, o.Clean, clean.Report)
	}
	faults = gofaulttest.Campaign(t, o.Config, append(common, gofaulttest.Policy("random"), gofaulttest.Trials(o.Faults))...)
	if faults.Trials != o.Faults || faults.InjectedTrials == 0 || faults.ErrorTrials != 0 {
		t.Errorf("campaign with faults: %d trials, %d with injections, %d could not run; want %d trials with injections, all run",
			faults.Trials, faults.InjectedTrials, faults.ErrorTrials, o.Faults)
	}
	return clean, faults
}

// CLI builds gofault's command (github.com/gofault/gofault/cmd/gofault, at
// the version the test's module requires) into a temporary directory of t
// and returns its path, for tests that run the command itself: its exit
// statuses, `report --json`, `replay`. Their `run --json` output decodes
// into a campaign.Summary. It stops the test when the build fails.
func CLI(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gofault")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gofault/gofault/cmd/gofault").CombinedOutput(); err != nil {
		t.Fatalf("build gofault: %v\n%s", err, out)
	}
	return bin
}
