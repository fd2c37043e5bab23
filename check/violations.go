package check

import (
	"context"
	"fmt"

	"github.com/gofault/gofault/record"
)

// Violations reports the guarantee violations the workload itself saw
// (record.EvViolation events, e.g. "watch-order" or "lease-keepalive").
type Violations struct{}

// Name implements Checker.
func (Violations) Name() string { return NameViolations }

// Check implements Checker.
func (Violations) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameViolations)
	nodes := map[string]bool{}
	var first string
	counts := map[string]int{}
	for _, e := range in.Trial.Client {
		if e.Kind != record.EvViolation {
			continue
		}
		if first == "" {
			first = e.Checker
		}
		counts[e.Checker]++
		if e.Node != "" {
			nodes[e.Node] = true
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("%s %s [%s]: %s", clock(e.Time), e.Client, e.Checker, e.Msg))
	}
	if first == "" {
		return v
	}
	v.Failed = true
	v.Symptom = "workload saw " + first + " violated"
	if len(counts) > 1 {
		v.Symptom = "workload saw " + fmt.Sprint(sortedSet(keys(counts))) + " violated"
	}
	v.Nodes = sortedSet(nodes)
	v.Evidence = capEvidence(v.Evidence)
	return v
}

func keys(m map[string]int) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
