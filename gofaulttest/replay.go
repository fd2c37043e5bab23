package gofaulttest

import (
	"fmt"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// DefaultReplays is the number of times Run replays a finding (Replay)
// when Trials does not say: a replay repeats the faults, not the timing,
// so a bug that shows in one run may hide in the next.
const DefaultReplays = 3

// A Finding is a finding of a gofault campaign as plain data, for a
// regression test to replay (Replay); gofault export --go-test writes one.
type Finding struct {
	// ID is the finding's ID in gofault report ("2ee8b133dc"); Trial the
	// trial whose faults are replayed ("3-17").
	ID, Trial string
	// Checker is the checker whose failure the finding is; Symptom what
	// it said (for people: a replay is judged by the checker).
	Checker, Symptom string
	// Injections are the faults of the trial, in the order they struck.
	Injections []record.Injection
}

// Replay makes Run a regression test of the finding f: every fault trial
// injects f's recorded faults again (the same kind at the same site, on
// the same node (on whichever member leads, for a fault that struck the
// leader), from the same call stack, at the same occurrence), is
// judged by the config's checkers, and the test fails when f's checker
// fails in any of them — the bug is still there. Other checkers' failures
// are logged, not failed on. Trials sets the number of replays (default
// DefaultReplays); the test fails too when no replay reached the
// recorded faults, which then says nothing about the bug.
func Replay(f Finding) Option { return func(o *options) { o.replay = &f } }

// replayVerdict returns why the replays trials of finding f fail a test
// (Run with Replay): f's checker failed again in some, or none injected
// f's faults (role: the build's catalog role, check.NotInjected), or some
// could not run; and notes for the log.
func replayVerdict(f *Finding, trials []*record.Trial, role *catalog.Role) (failures, notes []string) {
	orig := &record.Trial{Injections: f.Injections}
	replayed, reached := 0, 0
	for _, tr := range trials {
		if tr.Policy == record.BaselinePolicy {
			continue
		}
		replayed++
		if tr.Status == record.StatusError {
			failures = append(failures, fmt.Sprintf("replay %s could not run: %s", tr.ID, tr.Err))
			continue
		}
		missing := check.NotInjected(orig, tr, role)
		if len(missing) == 0 {
			reached++
		} else {
			notes = append(notes, fmt.Sprintf("replay %s did not inject %s (the run never got there)", tr.ID, strings.Join(missing, "; ")))
		}
		for _, v := range tr.Verdicts {
			switch {
			case v.Failed && v.Checker == f.Checker:
				failures = append(failures, fmt.Sprintf("finding %s recurred in replay %s: [%s] %s (logs %s)", f.ID, tr.ID, v.Checker, v.Symptom, tr.Dir))
			case v.Failed:
				notes = append(notes, fmt.Sprintf("replay %s: [%s] %s (not the finding's checker)", tr.ID, v.Checker, v.Symptom))
			}
		}
	}
	if replayed > 0 && reached == 0 {
		failures = append(failures, fmt.Sprintf("none of %d replays injected the recorded faults of finding %s, so they say nothing about it: "+
			"if a fix removed the faulted call, export the test again from a campaign on the fixed code", replayed, f.ID))
	}
	return failures, notes
}
