package minikv_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gofault/gofault/examples/minikv/server"
	"github.com/gofault/gofault/gofaulttest"
)

// TestAPI runs campaigns through gofault's Go API for tests, as a user's
// module would: with the planted retry bug on (Sieve delays the forwarded
// write's timeout-protected RPC early, and the linearizability checker
// sees the write applied twice; TestCampaigns/retry) the test must fail
// with the report in its log; without it a fault-free campaign must pass.
func TestAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end campaigns")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	work := t.TempDir() // shared: the second campaign reuses the first's build
	opts := []gofaulttest.Option{gofaulttest.WorkDir(work), gofaulttest.Policy("sieve"), gofaulttest.Trials(12),
		gofaulttest.Set("workload.env.MINIKV_RECOVERY=4s", "checkers.baseline=1", "checkers.rerun_fault_free=-1")}

	t.Run("planted bug fails the test", func(t *testing.T) {
		rec := &gofaulttest.Recorder{TB: t}
		var res *gofaulttest.Result
		rec.Do(func() {
			res = gofaulttest.Run(rec, "gofault.yaml", append(opts, gofaulttest.Set("cluster.env.MINIKV_BUGS="+server.BugRetry))...)
		})
		if rec.FailedNow || res == nil {
			t.Fatalf("the campaign could not run: %q", rec.Errors)
		}
		if !rec.Failed() || res.Findings == 0 {
			t.Fatalf("bug %s on: the test passed (%d findings); want it failed\n%s", server.BugRetry, res.Findings, strings.Join(rec.Logs, ""))
		}
		if errs := strings.Join(rec.Errors, "\n"); !strings.Contains(errs, "findings in 12 trials") {
			t.Errorf("failures %q do not name the findings", errs)
		}
		if logs := strings.Join(rec.Logs, "\n"); !strings.Contains(logs, "gofault report:") || !strings.Contains(logs, "linearizability") {
			t.Errorf("the test's log lacks the report naming the linearizability checker:\n%s", logs)
		}
	})
	// Without the bug a fault-free campaign must pass. (Sieve's own
	// campaign is no control: its 6 s delay of the static leader's WAL
	// sync outlasts the workload's 4 s recovery bound, a finding of the
	// recovery check with or without the bug.)
	t.Run("without the bug a fault-free campaign passes", func(t *testing.T) {
		res := gofaulttest.Run(t, "gofault.yaml", append(opts, gofaulttest.Policy("none"), gofaulttest.Trials(2))...)
		if res.Trials != 2 || res.FailedTrials != 0 {
			t.Errorf("fault-free campaign: %d trials, %d failed; want 2 trials, none failed", res.Trials, res.FailedTrials)
		}
	})
}
