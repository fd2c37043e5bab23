package minikv_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/targettest"
)

// TestBench runs gofault bench on the rotate bug of bugs.yaml with two
// policies, interrupted once (Ctrl-C) and run again to the end: the
// affected release (the bug on) must show the bug's recovery finding in at
// least one policy's campaign, the fixed release (the bug off) never; the
// interrupted run's campaign is continued, not started again; and the
// same command once more runs nothing (every run is done in the store) and
// prints the same table, and --json the same results.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end campaigns")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	t.Parallel() // two at a time with the other parallel campaigns, after the sequential tests (see TestCampaigns)
	bin := targettest.CLI(t)
	work := t.TempDir()
	// The rotate bug (a failed WAL rotation leaves the log closed, so
	// the node never recovers) with its scenario's rotation at every
	// append: random's error faults strike a rotation in one trial of
	// three or four (random found it at its first trial in a run here).
	// The split bug used before is rare since followers install the
	// leader's snapshot (it missed in 6 trials of both policies in a
	// fresh-check). No baseline trials: only the violations checker's
	// recovery findings count, and the log checker's baseline does not
	// matter to them. A trial's history can keep the linearizability
	// search busy for its whole timeout (10 s in gofault.yaml); undecided
	// is not a failure, and 1 s keeps the test short.
	args := []string{"bench", "--config", "gofault.yaml", "--bugs", "bugs.yaml", "--bug", "rotate",
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
	// Ctrl-C in the second run's campaign: exit status 130, the first run
	// kept.
	start := time.Now()
	cmd := exec.Command(bin, args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(pipe)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "bench: run 2 of 4") {
	}
	time.Sleep(2 * time.Second) // into its campaign
	cmd.Process.Signal(os.Interrupt)
	var rest bytes.Buffer
	io.Copy(&rest, pipe)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(rest.String(), "run the same command again") {
		t.Fatalf("interrupted bench: %v, want exit status 130\n%s", err, rest.String())
	}

	// The same command finishes the bench: the first run is done, the
	// second continues its campaign.
	table, log := bench()
	t.Logf("interrupted and finished, %s:\n%s", time.Since(start).Round(time.Second), table)
	if !strings.Contains(log, "run 1 of 4, rotate affected, policy random, seed 1: done earlier") || strings.Count(log, "done earlier") != 1 {
		t.Errorf("the finishing run did not skip exactly the first run:\n%s", log)
	}
	for _, w := range []string{"bug     policy  found", "rotate  random  ", "rotate  bsrr    ", "0/1", "a seed that missed counts as the cap (6 trials"} {
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

	type summary struct {
		Rows []struct {
			Policy              string
			Seeds, Found        int
			FalsePositives      int      `json:"false_positives"`
			FalsePositiveTrials []string `json:"false_positive_trials"`
			Campaigns           []int64
		}
	}
	results := func(extra ...string) (sum summary, found int) {
		t.Helper()
		out, _ := bench(append([]string{"--json"}, extra...)...)
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatalf("decode --json: %v\n%s", err, out)
		}
		for _, r := range sum.Rows {
			found += r.Found
			if r.FalsePositives != 0 {
				t.Errorf("policy %s: %d false positives on the fixed release (trials %v): without the bug the log never stays closed", r.Policy, r.FalsePositives, r.FalsePositiveTrials)
			}
		}
		return sum, found
	}
	sum, found := results()
	// Four runs, four campaigns: the interrupted one was continued, not
	// started again.
	var campaigns []int64
	for _, r := range sum.Rows {
		campaigns = append(campaigns, r.Campaigns...)
	}
	slices.Sort(campaigns)
	if !slices.Equal(campaigns, []int64{1, 2, 3, 4}) {
		t.Errorf("campaigns %v, want 1 to 4", campaigns)
	}
	if found == 0 {
		// Both seed-1 campaigns missed. Measured at loads 25-37 on 2
		// cores (2026-12-07, the same flags, --seeds 10): random found
		// rotate in 10 of 10 seeds (at fault trials 1, 1, 1, 1, 5, 2, 1,
		// 1, 2, 1: about 10 hits in 16 trials), bsrr in 7 of 10; as
		// independent draws both would miss in 6 trials about 4 times in
		// 10,000 (the trigger is an error at createSegment's OpenFile,
		// one of the sites every append's rotation reaches; an error at
		// the old segment's Close only logs a warning). Yet 1 of 2
		// fresh-checks of session 20 saw both miss (its logs were lost),
		// so a miss is logged with every trial of the two campaigns, and
		// a bench of two seeds runs (a bench of its own in the same
		// store: eight campaigns more, 1.5 to 3 min): the bug must be
		// found in one of them.
		for _, c := range []string{"1", "2"} {
			rep, err := exec.Command(bin, "report", "--db", filepath.Join(work, "gofault.db"), "--campaign", c, "--trials").CombinedOutput()
			t.Logf("seed 1 missed; campaign %s's trials (err %v):\n%s", c, err, rep)
		}
		sum, found = results("--seeds", "2")
	}
	if len(sum.Rows) != 2 || found == 0 {
		t.Errorf("rows %+v: want 2, and the bug found by some policy", sum.Rows)
	}
}
