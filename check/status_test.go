package check

import (
	"testing"

	"github.com/gofault/gofault/record"
)

func TestTrialStatus(t *testing.T) {
	failed := []record.Verdict{{Checker: "crash"}, {Checker: "hang", Failed: true}}
	passed := []record.Verdict{{Checker: "crash"}, {Checker: "linearizability", Unknown: true}}
	for _, tc := range []struct {
		name       string
		verdicts   []record.Verdict
		err        string
		injections int
		notJudged  bool
		want       record.Status
	}{
		{"all passed", passed, "", 0, false, record.StatusOK},
		{"a checker failed", failed, "", 1, false, record.StatusFailed},
		{"failed without faults is still failed", failed, "workload timed out", 0, false, record.StatusFailed},
		{"did not run, nothing injected: the setup", passed, "cluster did not start: boom", 0, false, record.StatusError},
		{"did not run after a fault: judged by the checkers", passed, "workload exited with status 1", 2, false, record.StatusOK},
		{"no verdicts", nil, "", 0, false, record.StatusOK},
		{"workload could not judge: never ok", passed, "", 1, true, record.StatusNotJudged},
		{"workload could not judge, no fault: still not judged", passed, "", 0, true, record.StatusNotJudged},
		{"workload could not judge but a checker failed: failed", failed, "", 1, true, record.StatusFailed},
		{"not judged and the setup broke: the setup", passed, "cluster did not start: boom", 0, true, record.StatusError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TrialStatus(tc.verdicts, tc.err, tc.injections, tc.notJudged); got != tc.want {
				t.Errorf("TrialStatus = %s, want %s", got, tc.want)
			}
		})
	}
}
