package controller

import (
	"fmt"
	"maps"
	"slices"
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
//     grew by up to K entries, enough for the leader to compact past it);
//   - "site=S": a member other than the cut one reached a site whose
//     stable ID contains S, e.g. the leader's snapshot or compaction
//     ("site=SaveSnap"). While such a cut is held, the sites it watches
//     are live in the other members' plans whatever the policy's plan
//     says, and the session answers their requests itself (no fault)
//     without asking the policy, unless the policy's plan has the site too
//     (watchedRequest).

// hold is a held cut in progress on a node.
type hold struct {
	inj    int      // its injection in s.inj
	until  string   // the condition
	leader string   // who led when the cut began ("" none)
	need   int      // for "requests=K": K
	done   int      // successful requests of other members' clients since the cut began
	sites  []uint32 // for "site=S": the catalog's sites whose ID contains S, ascending
}

// watches reports whether h watches sites ("site=S"): its cut's start and
// heal change the other members' plans too. False for nil.
func (h *hold) watches() bool { return h != nil && len(h.sites) > 0 }

// HoldSites returns the indexes of cat's sites that the hold condition
// "site=S" watches: those whose stable ID contains S, ascending; nil for
// any other condition, or when no site matches.
func HoldSites(cat *catalog.Catalog, until string) []uint32 {
	sub, ok := strings.CutPrefix(until, "site=")
	if !ok || sub == "" || cat == nil {
		return nil
	}
	var out []uint32
	for i := range cat.Sites {
		if strings.Contains(cat.Sites[i].ID, sub) {
			out = append(out, uint32(i))
		}
	}
	return out
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
	h.sites = HoldSites(s.cat, until)
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

// watchedSites returns the sites live in node's plan for the cuts held
// until a site ("site=S"): those of every other member's cut (the cut
// member's own reach does not count), or of every cut when processes hold
// members (TrialSpec.Members: one process reaches sites for them all);
// ascending, nil for none.
func (s *session) watchedSites(node string) []uint32 {
	var out []uint32
	for cutNode, h := range s.holds {
		if h.watches() && (cutNode != node || s.spec.Members) {
			out = append(out, h.sites...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// watchedRequest handles a request of node at site for the cuts held
// until a member other than theirs reached a site: it heals each such cut
// that watches site, unless node is the cut one. watched reports whether
// a held cut watches site; the request then goes to the policy only if
// its plan has the site live there (policyLive), so the policy is asked
// what it would have been asked without the hold.
func (s *session) watchedRequest(node string, site *catalog.Site, now time.Time) (watched bool, effs []Effect) {
	if site == nil || len(s.holds) == 0 {
		return false, nil
	}
	for _, cutNode := range slices.Sorted(maps.Keys(s.holds)) {
		h := s.holds[cutNode]
		if _, ok := slices.BinarySearch(h.sites, site.Index); !ok {
			continue
		}
		watched = true
		if cutNode == node {
			continue // the cut member's own reach does not count
		}
		effs = append(effs, s.meet(cutNode, now, fmt.Sprintf("%s reached %s", node, site.ID))...)
	}
	return watched, effs
}

// meet heals cutNode's held cut at now: what met its condition goes into
// its injection, whose length becomes the cut's real one. A cut past its
// cap, not yet healed (a cut of fixed length heals lazily, cutRequest),
// heals as at its cap, its condition unmet.
func (s *session) meet(cutNode string, now time.Time, what string) []Effect {
	h := s.holds[cutNode]
	c, cut := s.cuts[cutNode]
	if !cut || h.inj >= len(s.inj) {
		delete(s.holds, cutNode)
		return nil // healed at its cap already
	}
	if !now.Before(c.until) {
		return s.healCut(cutNode, now)
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
