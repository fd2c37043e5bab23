package controller

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// A held cut (policy.Fault.Until) is a partition or leader cut that heals
// when something happened in the protocol rather than after a fixed time:
// the fault's delay is only its cap. The session watches for the
// condition in what it already sees — the members' role events and the
// workload's client events — and heals the cut the moment it holds,
// shortening the injection to the cut's real length and saying in it what
// met the condition (record.Injection.Met). At the cap the cut heals as
// any cut does, and Met stays empty.
//
// Conditions (config faults.partition.hold):
//   - "leader": leadership moved — a member other than the one that led
//     when the cut began (any member, when none led) took the leader role
//     (the catalog's role, catalog.Role.Leader);
//   - "requests=K": the clients of the other members made K more requests
//     that succeeded: the cluster moved on without the cut member (its log
//     grew by up to K entries, enough for the leader to compact past it).

// hold is a held cut in progress on a node.
type hold struct {
	inj    int    // its injection in s.inj
	until  string // the condition
	leader string // who led when the cut began ("" none)
	need   int    // for "requests=K": K
	done   int    // successful requests of other members' clients since the cut began
}

// hold makes the cut of node that injection inj starts (not yet
// appended: its index will be len(s.inj)) a held one when f says so: inj
// records the condition and the cap (f.Delay).
func (s *session) hold(inj *record.Injection, node string, f policy.Fault) {
	until := f.Until
	if until == "" || !heldKind(f.Kind) {
		return
	}
	inj.Until, inj.Cap = until, f.Delay
	h := hold{inj: len(s.inj), until: until}
	if k, ok := strings.CutPrefix(until, "requests="); ok {
		h.need, _ = strconv.Atoi(k)
	}
	for n, r := range s.role {
		if s.leads(r) {
			h.leader = n
		}
	}
	if s.holds == nil {
		s.holds = map[string]*hold{}
	}
	s.holds[node] = &h
}

// roleChanged heals the cuts held until leadership moved when node's new
// role is the leader's and node is not who led when the cut began.
func (s *session) roleChanged(node, role string, now time.Time) []Effect {
	if !s.leads(role) {
		return nil
	}
	var effs []Effect
	for cutNode, h := range s.holds {
		if h.until == "leader" && node != h.leader {
			effs = append(effs, s.meet(cutNode, now, fmt.Sprintf("%s became %s", node, role))...)
		}
	}
	return effs
}

// succeeded counts a request that succeeded for client (a name "node/i")
// toward the cuts held until K more requests of the other members.
func (s *session) succeeded(client string, now time.Time) []Effect {
	node, _, _ := strings.Cut(client, "/")
	var effs []Effect
	for cutNode, h := range s.holds {
		if h.need == 0 || node == cutNode {
			continue
		}
		h.done++
		if h.done >= h.need {
			effs = append(effs, s.meet(cutNode, now, fmt.Sprintf("the other members' clients made %d requests that succeeded", h.done))...)
		}
	}
	return effs
}

// meet heals cutNode's held cut at now: what met its condition goes into
// its injection, whose length becomes the cut's real one.
func (s *session) meet(cutNode string, now time.Time, what string) []Effect {
	h := s.holds[cutNode]
	delete(s.holds, cutNode)
	if _, cut := s.cuts[cutNode]; !cut || h.inj >= len(s.inj) {
		return nil // healed at its cap already
	}
	in := &s.inj[h.inj]
	if now.After(in.Time) {
		in.Delay = now.Sub(in.Time).Round(time.Millisecond)
	}
	in.Met = what
	return s.healCut(cutNode, now)
}

// heldKind reports whether a cut of kind k can be held (a partition or a
// leader cut: one node cut off; the link and split shapes heal at their
// length).
func heldKind(k catalog.Kind) bool {
	return k == catalog.KindPartition || k == catalog.KindLeaderCut
}
