package check

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gofault/gofault/record"
)

// Replicas compares the members' data: at every point the workload took
// digests (workload.Client.Digest, e.g. etcd's HashKV at one revision on
// every member once the faults are over), all members that reported must
// agree. A crash can leave members that silently disagree — acknowledged
// writes lost on one, applied twice on another — while every client call
// looked fine; this checker is the one that sees it.
//
// The members that differ from the majority are named (from the first
// reported digest when there is no majority); a member that reported
// nothing is not judged here (the recovery and hang checkers see a member
// that never caught up). Without digests the checker passes.
type Replicas struct{}

// Name implements Checker.
func (Replicas) Name() string { return NameReplicas }

// Check implements Checker.
func (Replicas) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameReplicas)
	byPoint := map[string]map[string]string{} // point → node → last digest
	var points []string
	for _, e := range in.Trial.Client {
		if e.Kind != record.EvDigest || e.Node == "" {
			continue
		}
		if byPoint[e.Msg] == nil {
			byPoint[e.Msg] = map[string]string{}
			points = append(points, e.Msg)
		}
		byPoint[e.Msg][e.Node] = e.Digest
	}
	odd := map[string]bool{}
	for _, p := range points {
		digests := byPoint[p]
		count := map[string]int{}
		var nodes []string
		for n, d := range digests {
			count[d]++
			nodes = append(nodes, n)
		}
		if len(count) < 2 {
			continue
		}
		sort.Strings(nodes)
		// The majority digest (ties: the first node's) is the reference.
		ref := digests[nodes[0]]
		for d, c := range count {
			if c > count[ref] {
				ref = d
			}
		}
		var lines []string
		for _, n := range nodes {
			mark := ""
			if digests[n] != ref {
				mark = "  ← differs"
				odd[n] = true
			}
			lines = append(lines, fmt.Sprintf("%s: %s%s", n, digests[n], mark))
		}
		v.Failed = true
		v.Evidence = append(v.Evidence, fmt.Sprintf("at %q the members' digests differ:\n  %s", p, strings.Join(lines, "\n  ")))
		if v.Symptom == "" {
			v.Symptom = fmt.Sprintf("members' data differ at %q", p)
		}
	}
	v.Nodes = sortedSet(odd)
	return v
}
