package check

import "github.com/gofault/gofault/record"

// NotJudgedReason is the reason of a trial's first record.EvNotJudged
// event (the workload said it could not judge the trial), and whether
// there was one.
func NotJudgedReason(client []record.ClientEvent) (string, bool) {
	for _, e := range client {
		if e.Kind == record.EvNotJudged {
			return e.Msg, true
		}
	}
	return "", false
}

// TrialStatus gives a trial its status: failed when a checker failed it; an
// error when it did not run (tr.Err) although nothing was injected — the
// setup is broken (ports, binary, config), not the target; not judged when
// the workload said it could not judge the trial (notJudged: it could not
// set up what its checks need), since passing checkers then prove nothing;
// ok otherwise.
func TrialStatus(verdicts []record.Verdict, runErr string, injections int, notJudged bool) record.Status {
	switch {
	case Failed(verdicts):
		return record.StatusFailed
	case runErr != "" && injections == 0:
		return record.StatusError
	case notJudged:
		return record.StatusNotJudged
	}
	return record.StatusOK
}

// Template is msg with what differs between runs of the same event —
// timestamps, quoted values, IDs, addresses, paths, numbers — replaced by
// placeholders: the template the log checker compares lines by, for
// messages other than log lines (a workload's setup error) that are
// compared across trials.
func Template(msg string) string { return normalize(msg) }
