package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/gofault/gofault/record"
)

// Hang is the progress checker: it reports a client that made no progress
// for longer than Input.Progress while the workload ran (plus the delay,
// partition or disconnect that overlaps the period and hit the client's
// own node, or that the profile excuses; excluding clients of a node
// gofault killed), a workload that did not finish by its deadline, and a
// workload phase that failed. A delay on another member extends no
// client's allowance: a healthy cluster routes around one slow member (the
// slow checker says which).
type Hang struct{}

// Name implements Checker.
func (Hang) Name() string { return NameHang }

// Check implements Checker.
func (Hang) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameHang)
	tr := in.Trial
	nodes := map[string]bool{}
	if in.WorkloadTimedOut || workloadTimedOut(tr) {
		v.Failed = true
		v.Symptom = "workload did not finish before its deadline"
		for _, e := range tr.Client {
			if e.Client == workloadClient && e.Kind == record.EvError {
				v.Evidence = append(v.Evidence, e.Msg)
			}
		}
	} else if phase, msg, ok := failedPhase(tr); ok {
		v.Failed = true
		v.Symptom = "workload phase " + phase + " failed"
		v.Evidence = append(v.Evidence, msg)
	}
	ss := stalls(in)
	for _, s := range ss {
		nodes[s.node] = true
		how := "requests hanging"
		if s.failing() {
			how = fmt.Sprintf("%d failed requests, last: %s", s.errors, s.lastErr)
		}
		end := "until its next progress"
		if s.open {
			end = "until its last event"
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("client %s (node %s): no progress from %s to %s (%s, %s), %s",
			s.client, s.node, clock(s.from), clock(s.to), s.to.Sub(s.from).Round(1e6), end, how))
	}
	if len(ss) > 0 && !v.Failed {
		v.Failed = true
		how := "requests hanging"
		for _, s := range ss {
			if s.failing() {
				how = "requests failing"
				break
			}
		}
		v.Symptom = fmt.Sprintf("client made no progress for over %s (%s)", in.progress(), how)
	}
	v.Nodes = sortedSet(nodes)
	v.Evidence = capEvidence(append(v.Evidence, allowanceExcused(in)...))
	return v
}

// failedPhase returns the first failed phase the workload reported.
func failedPhase(tr *record.Trial) (phase, msg string, ok bool) {
	for _, e := range tr.Client {
		if e.Client != workloadClient || e.Kind != record.EvError {
			continue
		}
		rest, found := strings.CutPrefix(e.Msg, "phase ")
		if !found {
			continue
		}
		name, _, _ := strings.Cut(rest, ":")
		return name, e.Msg, true
	}
	return "", "", false
}
