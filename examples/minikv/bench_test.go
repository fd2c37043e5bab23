package minikv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBench runs gofault bench on the split bug of bugs.yaml with two
// policies: the affected release (the bug on) must show the bug's
// replicas finding in at least one policy's campaign, the fixed release
// (the bug off) never; then the same command again must run nothing (every
// run is done in the store) and print the same table, and --json the same
// results.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end campaigns")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	bin := gofaultCLI(t)
	work := t.TempDir()
	// A quarter of random's and bsrr's crashes strike the split window
	// (campaign_test.go); two crashes per trial make a trial hit it about
	// 44% of the time, so with 6 trials both policies miss the bug with a
	// chance of about 0.1%. No baseline trials: only the replicas
	// checker's findings count, and the log checker's baseline does not
	// matter to it. A crash trial's history can keep the linearizability
	// search busy for its whole timeout (10 s in gofault.yaml); undecided
	// is not a failure, and 1 s keeps the test short.
	args := []string{"bench", "--config", "gofault.yaml", "--bugs", "bugs.yaml", "--bug", "split",
		"--policies", "random,bsrr", "--seeds", "1", "--trials", "6", "--parallel", "2",
		"--set", "workdir=" + work, "--set", "checkers.baseline=-1", "--set", "policy.per_trial=2",
		"--set", "checkers.linearizability_timeout=1s"}
	bench := func(extra ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(args, extra...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("gofault %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	start := time.Now()
	table, _ := bench()
	t.Logf("first run, %s:\n%s", time.Since(start).Round(time.Second), table)
	for _, w := range []string{"bug    policy  found", "split  random  ", "split  bsrr    ", "0/1", "a seed that missed counts as the cap (6 trials"} {
		if !strings.Contains(table, w) {
			t.Errorf("table lacks %q", w)
		}
	}

	again, stderr := bench()
	if again != table {
		t.Errorf("the second run printed another table:\n%s\nfirst:\n%s", again, table)
	}
	if n := strings.Count(stderr, "done earlier"); n != 4 || strings.Contains(stderr, "campaign ") && strings.Contains(stderr, "fault trials,") {
		t.Errorf("the second run ran campaigns (%d of 4 runs done earlier):\n%s", n, stderr)
	}

	out, _ := bench("--json")
	var sum struct {
		Rows []struct {
			Policy              string
			Seeds, Found        int
			FalsePositives      int      `json:"false_positives"`
			FalsePositiveTrials []string `json:"false_positive_trials"`
		}
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("decode --json: %v\n%s", err, out)
	}
	found := 0
	for _, r := range sum.Rows {
		found += r.Found
		if r.FalsePositives != 0 {
			t.Errorf("policy %s: %d false positives on the fixed release (trials %v): without the bug the replicas never differ", r.Policy, r.FalsePositives, r.FalsePositiveTrials)
		}
	}
	if len(sum.Rows) != 2 || found == 0 {
		t.Errorf("rows %+v: want 2, and the bug found by some policy", sum.Rows)
	}
}
