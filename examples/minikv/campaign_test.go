package minikv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/examples/minikv/server"
)

// gofaultCLI builds gofault's command into a temporary directory.
func gofaultCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gofault")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/gofault")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build gofault: %v\n%s", err, out)
	}
	return bin
}

// summary is the part of `gofault run --json` the test reads.
type summary struct {
	Trials       int     `json:"trials"`
	FailedTrials int     `json:"failed_trials"`
	ErrorTrials  int     `json:"error_trials"`
	Findings     int     `json:"findings"`
	MedianTrial  float64 `json:"median_trial_seconds"`
}

// campaign runs one gofault campaign on a copy-free work dir of its own and
// returns its JSON summary.
func campaign(t *testing.T, bin string, args ...string) summary {
	t.Helper()
	work := t.TempDir()
	// A failing trial waits out the workload's recovery bound: 4 s is
	// enough past the targeted campaigns' delays of at most 3 s.
	args = append([]string{"run", "--config", "gofault.yaml", "--json",
		"--set", "workdir=" + work, "--set", "workload.env.MINIKV_RECOVERY=4s", "--set", "checkers.baseline=1"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gofault %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var s summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("decode summary: %v\n%s", err, stdout.String())
	}
	t.Logf("gofault %s: %d trials (median %.1fs), %d failed, %d could not run, %d findings",
		strings.Join(args[10:], " "), s.Trials, s.MedianTrial, s.FailedTrials, s.ErrorTrials, s.Findings)
	return s
}

// TestCampaigns runs short gofault campaigns on minikv: fault-free trials
// with every planted bug on must be clean (the bugs are only reachable
// through faults), and each planted bug must be found by a targeted
// campaign.
func TestCampaigns(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end campaigns")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	if _, err := os.Stat("gofault.yaml"); err != nil {
		t.Fatal(err)
	}
	bin := gofaultCLI(t)

	t.Run("fault-free", func(t *testing.T) {
		s := campaign(t, bin, "--policy", "none", "--trials", "3", "--set", "cluster.env.MINIKV_BUGS=all")
		if s.Findings != 0 || s.FailedTrials != 0 || s.ErrorTrials != 0 {
			t.Errorf("fault-free trials with every bug on: %d failed, %d could not run, %d findings; want none", s.FailedTrials, s.ErrorTrials, s.Findings)
		}
	})

	for _, tc := range targeted {
		t.Run(tc.bug, func(t *testing.T) {
			args := append([]string{"--set", "cluster.env.MINIKV_BUGS=" + tc.bug}, tc.args...)
			s := campaign(t, bin, args...)
			if s.Findings == 0 {
				t.Errorf("bug %s: no finding in %d trials", tc.bug, s.Trials)
			}
		})
	}
}

// targeted are the reachability checks: each campaign makes one bug's
// trigger common — the rare state frequent (a snapshot after every applied
// entry, a WAL rotation after every append) and only the fault kind that
// triggers it — so a few dozen random trials reach it. The policy comparisons in
// docs/examples.md measure how fast each policy finds the bugs in their
// realistic, rare settings.
var targeted = []struct {
	bug  string
	args []string
}{
	{server.BugSnapshot, []string{"--policy", "random", "--trials", "8", "--set", "cluster.env.MINIKV_SNAP_EVERY=1", "--set", "faults.kinds=error"}},
	{server.BugRotate, []string{"--policy", "random", "--trials", "16", "--set", "cluster.env.MINIKV_SEGMENT_BYTES=1", "--set", "faults.kinds=error"}},
	{server.BugFence, []string{"--policy", "random", "--trials", "14", "--set", "cluster.env.MINIKV_SNAP_EVERY=1", "--set", "faults.kinds=delay", "--set", "faults.delay=3s"}},
	// Sieve delays the forwarded write's timeout-protected RPC early.
	{server.BugRetry, []string{"--policy", "sieve", "--trials", "6"}},
}
