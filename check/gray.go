package check

import (
	"context"
	"fmt"

	"github.com/gofault/gofault/record"
)

// Gray is the gray-failure checker (Legolas §5.3, after Panorama's
// differential observability). Over the clients' stalls in which requests
// failed (see Hang), it reports a trial when
//
//  1. the faults were all on one node, yet only clients of other nodes
//     failed;
//  2. the system said a node was healthy (record.EvHealthy) while that
//     node's clients were failing;
//  3. only a subset of the clients failed while the others kept making
//     progress.
//
// Clients of a node gofault killed are excluded, and a delay, partition
// or disconnect extends the threshold of its own node's clients only (or
// of every client where the profile excuses it, or while the faults had
// half the members or more out), as for Hang; the evidence shows every
// stall those allowances dismissed.
type Gray struct{}

// Name implements Checker.
func (Gray) Name() string { return NameGray }

// Check implements Checker.
func (Gray) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameGray)
	tr := in.Trial
	tls := timelines(tr)
	if len(tls) < 2 {
		return v
	}
	failing := map[string]stall{} // by client, the first failing stall
	var failingStalls []stall
	for _, s := range stalls(in) {
		if !s.failing() {
			continue
		}
		failingStalls = append(failingStalls, s)
		if _, ok := failing[s.client]; !ok {
			failing[s.client] = s
		}
	}
	excused := allowanceExcused(in)
	if len(failingStalls) == 0 {
		v.Evidence = capEvidence(excused)
		return v
	}
	killed := killedSince(tr)
	faultNodes := map[string]bool{}
	for _, inj := range tr.Injections {
		faultNodes[inj.Node] = true
	}
	failNodes := map[string]bool{}
	var okClients []string
	clientsOf := map[string]int{}
	for _, tl := range tls {
		clientsOf[tl.node]++
		if _, f := failing[tl.name]; f {
			failNodes[tl.node] = true
			continue
		}
		if _, k := killed[tl.node]; !k {
			okClients = append(okClients, tl.name)
		}
	}
	for _, s := range failingStalls {
		v.Evidence = append(v.Evidence, fmt.Sprintf("client %s (node %s) failing from %s to %s: %d failed requests, last: %s",
			s.client, s.node, clock(s.from), clock(s.to), s.errors, s.lastErr))
	}

	// (2) The system's own view disagrees with its clients'.
	for _, s := range failingStalls {
		for _, e := range tr.Client {
			if e.Kind == record.EvHealthy && e.Node == s.node && !e.Time.Before(s.from) && !e.Time.After(s.to) {
				v.Failed = true
				v.Symptom = "node reported healthy while its clients failed"
				v.Evidence = append([]string{fmt.Sprintf("node %s reported healthy at %s (%s) while client %s was failing", s.node, clock(e.Time), e.Msg, s.client)}, v.Evidence...)
				v.Nodes = sortedSet(failNodes)
				v.Evidence = capEvidence(append(v.Evidence, excused...))
				return v
			}
		}
	}
	if len(okClients) == 0 {
		// Everyone failed: not differential; the hang checker reports it.
		v = pass(NameGray)
		v.Evidence = capEvidence(excused)
		return v
	}
	v.Failed = true
	v.Nodes = sortedSet(failNodes)
	v.Evidence = append(v.Evidence, fmt.Sprintf("clients still making progress: %v", okClients))
	v.Evidence = capEvidence(append(v.Evidence, excused...))
	// (1) The fault was on one node but only other nodes' clients failed.
	if len(faultNodes) == 1 {
		var x string
		for n := range faultNodes {
			x = n
		}
		if !failNodes[x] && clientsOf[x] > 0 {
			v.Symptom = "fault on one node, only clients of other nodes failed"
			return v
		}
		if len(failNodes) == 1 && failNodes[x] {
			v.Symptom = "clients of the faulted node failed while other clients succeeded"
			return v
		}
	}
	// (3) Partial failure.
	v.Symptom = "only a subset of clients failed"
	return v
}
