package check

import (
	"context"
	"fmt"

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
	var names []string
	for _, e := range in.Trial.Client {
		if e.Kind != record.EvViolation {
			continue
		}
		names = append(names, e.Checker)
		if e.Node != "" {
			nodes[e.Node] = true
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("%s %s [%s]: %s", clock(e.Time), e.Client, e.Checker, e.Msg))
	}
	if len(names) == 0 {
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
	v.Evidence = capEvidence(v.Evidence)
	return v
}
