package minikv_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gofault/gofault/examples/minikv/server"
	"github.com/gofault/gofault/gofaulttest"
)

// TestAPI runs campaigns through gofault's Go API for tests, as a user's
// module would: with the planted install bug on (CoFI finds it at its
// first fault trial, docs/examples.md) the test must fail with the report
// in its log; with it off the same campaign must pass.
func TestAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end campaigns")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	work := t.TempDir() // shared: the second campaign reuses the first's build
	opts := []gofaulttest.Option{gofaulttest.WorkDir(work), gofaulttest.Policy("cofi"), gofaulttest.Trials(3),
		gofaulttest.Set("faults.kinds=partition", "workload.env.MINIKV_RECOVERY=4s", "checkers.rerun_fault_free=-1")}

	t.Run("planted bug fails the test", func(t *testing.T) {
		rec := &gofaulttest.Recorder{TB: t}
		var res *gofaulttest.Result
		rec.Do(func() {
			res = gofaulttest.Run(rec, "gofault.yaml", append(opts, gofaulttest.Set("cluster.env.MINIKV_BUGS="+server.BugInstall))...)
		})
		if rec.FailedNow || res == nil {
			t.Fatalf("the campaign could not run: %q", rec.Errors)
		}
		if !rec.Failed() || res.Findings == 0 {
			t.Fatalf("bug %s on: the test passed (%d findings); want it failed\n%s", server.BugInstall, res.Findings, strings.Join(rec.Logs, ""))
		}
		if errs := strings.Join(rec.Errors, "\n"); !strings.Contains(errs, "findings in 3 trials") {
			t.Errorf("failures %q do not name the findings", errs)
		}
		if logs := strings.Join(rec.Logs, "\n"); !strings.Contains(logs, "gofault report:") || !strings.Contains(logs, "replicas") {
			t.Errorf("the test's log lacks the report naming the replicas checker:\n%s", logs)
		}
	})
	t.Run("without the bug the test passes", func(t *testing.T) {
		res := gofaulttest.Run(t, "gofault.yaml", opts...)
		if res.InjectedTrials == 0 {
			t.Errorf("no fault injected in %d trials: the passing test showed nothing", res.Trials)
		}
	})
}
