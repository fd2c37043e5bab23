package check

import (
	"context"
	"fmt"
	"time"

	"github.com/gofault/gofault/record"
)

// Violations reports the guarantee violations the workload itself saw
// (record.EvViolation events, e.g. "watch-order" or "lease-keepalive").
// Its symptom names one guarantee, the primary one (RankGuarantees: lost
// data before wrong data before order before progress), never the set of
// names violated, so trials in which one fault broke several guarantees
// are one finding; Symptoms lists every violated guarantee's symptom,
// primary first, and the rest show as co-occurring.
type Violations struct{}

// Name implements Checker.
func (Violations) Name() string { return NameViolations }

// Check implements Checker.
func (Violations) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameViolations)
	nodes := map[string]bool{}
	var names, info []string
	for _, e := range in.Trial.Client {
		if e.Kind != record.EvViolation {
			continue
		}
		if n, since, ok := downAt(in.Trial, e); ok {
			info = append(info, fmt.Sprintf("informational: not judged here: %s %s [%s]: %s — node %s was down from %s to the end (%s); the crash checker judges why", clock(e.Time), e.Client, e.Checker, e.Msg, n.Name, clock(since), exitHow(n)))
			continue
		}
		names = append(names, e.Checker)
		if e.Node != "" {
			nodes[e.Node] = true
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("%s %s [%s]: %s", clock(e.Time), e.Client, e.Checker, e.Msg))
	}
	if len(names) == 0 {
		if len(info) > 0 {
			v.Symptom = "informational: a member that was down did not recover (the crash checker judges why)"
			v.Evidence = capEvidence(info)
		}
		return v
	}
	v.Failed = true
	for _, n := range RankGuarantees(names) {
		v.Symptoms = append(v.Symptoms, ViolationSymptom(n))
	}
	v.Symptom = v.Symptoms[0]
	if len(v.Symptoms) == 1 {
		v.Symptoms = nil // one symptom: Symptom says it all
	}
	v.Nodes = sortedSet(nodes)
	v.Evidence = capEvidence(append(v.Evidence, info...))
	return v
}

// checkRecovery is the workload's guarantee that every member serves a
// linearizable read and a write once the load stops (workload.CheckRecovery).
const checkRecovery = "recovery"

// downAt reports whether violation e is a recovery violation of a member
// whose process had ended before it and was not started again — exited
// on its own (a panic, a fatal error) or not back after a crash fault —,
// and since when. Such a member cannot serve, whatever the cluster does;
// why it is down is the crash checker's to judge (a failure, or the
// designed stop on an injected error). Other violations, and recovery
// violations of members that were running, are judged here.
func downAt(tr *record.Trial, e record.ClientEvent) (record.Node, time.Time, bool) {
	if e.Checker != checkRecovery || e.Node == "" {
		return record.Node{}, time.Time{}, false
	}
	for _, n := range tr.Nodes {
		if n.Name != e.Node || !n.Exited || n.ExitTime.IsZero() || n.ExitTime.After(e.Time) {
			continue
		}
		if k := len(n.Restarted); k > 0 && n.Restarted[k-1].After(n.ExitTime) && n.RestartErr == "" {
			return record.Node{}, time.Time{}, false // running again
		}
		return n, n.ExitTime, true
	}
	return record.Node{}, time.Time{}, false
}

// exitHow says how node n's process ended, for people.
func exitHow(n record.Node) string {
	switch {
	case n.RestartErr != "":
		return "not back after a restart: " + n.RestartErr
	case n.Signal != "":
		return "killed by " + n.Signal
	}
	return fmt.Sprintf("exited with status %d", n.ExitCode)
}
