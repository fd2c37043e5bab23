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

// A held cut (policy.Fault.Until) is a cut that heals when something
// happened in the protocol rather than after a fixed time: a node cut (a
// partition or leader cut, partition.go) or an arc cut (a disconnect,
// one-way cut or split, disconnect.go and shapes.go). The fault's delay
// is only its cap. The session watches for the condition in what it
// already sees — the members' role events and the workload's client
// events — and heals the cut the moment it holds (every arc of an arc
// cut at once), shortening the injection to the cut's real length and
// saying in it what met the condition (record.Injection.Met). At the cap
// the cut heals as any cut does, and Met stays empty.
//
// The cut members of a hold are those whose own clients' requests and
// own site reaches do not count toward its condition: the cut node of a
// node cut, both ends of a disconnect, the struck member of a one-way
// cut, the struck side of a split (the struck node and
// record.Injection.Side).
//
// Conditions (config faults.partition.hold):
//   - "leader": leadership moved — a member other than the one that led
//     when the cut began (any member, when none led) took the leader role
//     (the catalog's role, catalog.Role.Leader);
//   - "requests=K": the clients of the members other than the cut ones
//     made K more requests that succeeded: the cluster moved on without
//     them (their logs fell up to K entries behind, enough for the leader
//     to compact past them);
//   - "site=S": a member other than the cut ones reached a site whose
//     stable ID contains S, e.g. the leader's snapshot or compaction
//     ("site=SaveSnap"). While such a cut is held, the sites it watches
//     are live in the other members' plans whatever the policy's plan
//     says, and the session answers their requests itself (no fault)
//     without asking the policy, unless the policy's plan has the site too
//     (watchedRequest).

// holdKey names a held cut in s.holds: the node a fault struck, and
// whether the cut is of arcs, so that one member's node cut and arc cut
// are two holds.
type holdKey struct {
	node string
	arcs bool
}

// compareHoldKeys orders hold keys by node, a node cut first.
func compareHoldKeys(a, b holdKey) int {
	if c := strings.Compare(a.node, b.node); c != 0 {
		return c
	}
	switch {
	case a.arcs == b.arcs:
		return 0
	case b.arcs:
		return -1
	}
	return 1
}

// hold is a held cut in progress.
type hold struct {
	inj     int      // its injection in s.inj
	until   string   // the condition
	leader  string   // who led when the cut began ("" none)
	need    int      // for "requests=K": K
	done    int      // successful requests of other members' clients since the cut began
	sites   []uint32 // for "site=S": the catalog's sites whose ID contains S, ascending
	members []string // the cut members, whose clients and reaches do not count
	arcs    []arc    // an arc cut's arcs; nil for a node cut
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

// hold makes the cut that injection inj starts at node (not yet
// appended: its index will be len(s.inj)) a held one when f says so: inj
// records the condition and the cap (f.Delay). arcs are the arcs of an
// arc cut (nil for a node cut), members its cut members. A cut that is
// not held ends any hold left of an earlier cut of the same key.
func (s *session) hold(inj *record.Injection, node string, f policy.Fault, members []string, arcs []arc) {
	key := holdKey{node, arcs != nil}
	delete(s.holds, key)
	until := f.Until
	if until == "" || !f.Kind.Cuts() { // every cut can be held: node cuts and arc cuts
		return
	}
	inj.Until, inj.Cap = until, f.Delay
	h := hold{inj: len(s.inj), until: until, members: members, arcs: arcs}
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
		s.holds = map[holdKey]*hold{}
	}
	s.holds[key] = &h
}

// roleChanged heals the cuts held until leadership moved when node's new
// role is the leader's and node is not who led when the cut began.
func (s *session) roleChanged(node, role string, now time.Time) []Effect {
	if !s.leads(role) {
		return nil
	}
	var effs []Effect
	for _, key := range s.holdKeys() {
		if h := s.holds[key]; h.until == "leader" && node != h.leader {
			effs = append(effs, s.meet(key, now, fmt.Sprintf("%s became %s", node, role))...)
		}
	}
	return effs
}

// succeeded counts a request that succeeded for client (a name "node/i")
// toward the cuts held until K more requests of the members other than
// their cut ones.
func (s *session) succeeded(client string, now time.Time) []Effect {
	node, _, _ := strings.Cut(client, "/")
	var effs []Effect
	for _, key := range s.holdKeys() {
		h := s.holds[key]
		if h.need == 0 || slices.Contains(h.members, node) {
			continue
		}
		h.done++
		if h.done >= h.need {
			effs = append(effs, s.meet(key, now, fmt.Sprintf("the other members' clients made %d requests that succeeded", h.done))...)
		}
	}
	return effs
}

// watchedSites returns the sites live in node's plan for the cuts held
// until a site ("site=S"): those of every cut that node is not a cut
// member of (a cut member's own reach does not count), or of every cut
// when processes hold members (TrialSpec.Members: one process reaches
// sites for them all); ascending, nil for none.
func (s *session) watchedSites(node string) []uint32 {
	var out []uint32
	for _, h := range s.holds {
		if h.watches() && (!slices.Contains(h.members, node) || s.spec.Members) {
			out = append(out, h.sites...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// watchedRequest handles a request of node at site for the cuts held
// until a member other than their cut ones reached a site: it heals each
// such cut that watches site, unless node is one of its cut members.
// watched reports whether a held cut watches site; the request then goes
// to the policy only if its plan has the site live there (policyLive), so
// the policy is asked what it would have been asked without the hold.
func (s *session) watchedRequest(node string, site *catalog.Site, now time.Time) (watched bool, effs []Effect) {
	if site == nil || len(s.holds) == 0 {
		return false, nil
	}
	for _, key := range s.holdKeys() {
		h := s.holds[key]
		if _, ok := slices.BinarySearch(h.sites, site.Index); !ok {
			continue
		}
		watched = true
		if slices.Contains(h.members, node) {
			continue // a cut member's own reach does not count
		}
		effs = append(effs, s.meet(key, now, fmt.Sprintf("%s reached %s", node, site.ID))...)
	}
	return watched, effs
}

// holdKeys returns the keys of s.holds in a fixed order.
func (s *session) holdKeys() []holdKey {
	return slices.SortedFunc(maps.Keys(s.holds), compareHoldKeys)
}

// meet heals the held cut of key at now: what met its condition goes
// into its injection, whose length becomes the cut's real one. A cut
// past its cap, not yet healed (a cut of fixed length heals lazily,
// cutRequest and linkRequest), heals as at its cap, its condition unmet.
func (s *session) meet(key holdKey, now time.Time, what string) []Effect {
	h := s.holds[key]
	c, cut := s.cuts[key.node]
	if key.arcs {
		c, cut = s.heldArcs(h)
	}
	if !cut || h.inj >= len(s.inj) {
		delete(s.holds, key)
		return nil // healed at its cap already
	}
	if now.Before(c.until) {
		in := &s.inj[h.inj]
		if now.After(in.Time) {
			in.Delay = now.Sub(in.Time).Round(time.Millisecond)
		}
		in.Met = what
	}
	if key.arcs {
		return s.healArcs(key)
	}
	return s.healCut(key.node, now)
}

// heldArcs returns the cut of h's arcs, and whether one of them is still
// cut.
func (s *session) heldArcs(h *hold) (cut, bool) {
	for _, a := range h.arcs {
		if c, ok := s.arcs[a]; ok {
			return c, true
		}
	}
	return cut{}, false
}
