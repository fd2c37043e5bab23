package controller

import (
	"cmp"
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
// one-way cut or split, disconnect.go and shapes.go). The fault's delay is
// only its cap. The session watches for the condition in what it already
// sees — the members' role events, the workload's client events, the
// members' requests and observed peer messages — and heals the cut the
// moment it holds (every arc of an arc cut at once), shortening the
// injection to the cut's real length and saying in it what met the
// condition (record.Injection.Met). At the cap the cut heals as any cut
// does, and Met stays empty.
//
// A held delay is a delayed call held the same way: the call sleeps
// (wire.ActHold) while its connection's plan lists it
// (wire.Plan.Holding), the cap at most; when the condition holds, the
// session pushes that connection a plan without it, which wakes the call
// (wake), and records the delay's real length. At the cap the call wakes
// by itself, as a fixed delay ends; its hold ends lazily, at the first
// event that would have met it (meet), as an arc cut's does.
//
// The cut members of a hold are those whose own clients' requests and
// own site reaches do not count toward its condition: the cut node of a
// node cut, both ends of a disconnect, the struck member of a one-way
// cut, the struck side of a split (the struck node and
// record.Injection.Side), the member whose call a held delay stalls.
//
// Conditions (config faults.partition.hold, faults.delay_hold):
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
//     (watchedRequest);
//   - "behind=N": the cut members' log fell at least N entries behind the
//     others', as the commit indexes observed in peer messages tell
//     (behind.go). While such a hold is on, the other members' plans ask
//     for observations (wire.FlagObserve) whatever the policy's plan says.

// holdShape is what a hold holds: a node cut, an arc cut or a delayed
// call.
type holdShape uint8

const (
	holdNodeCut holdShape = iota // a partition or leader cut (s.cuts)
	holdArcCut                   // a disconnect, one-way cut or split (s.arcs)
	holdDelay                    // a delayed call (wire.ActHold)
)

// holdKey names a hold in s.holds: the node a fault struck, the hold's
// shape and, for a held delay, its request (wire.Request.ID), so that one
// member's node cut, arc cut and each of its held calls are distinct
// holds.
type holdKey struct {
	node  string
	shape holdShape
	call  uint64
}

// compareHoldKeys orders hold keys by node, then shape (a node cut
// first), then call.
func compareHoldKeys(a, b holdKey) int {
	return cmp.Or(strings.Compare(a.node, b.node), cmp.Compare(a.shape, b.shape), cmp.Compare(a.call, b.call))
}

// hold is a held cut or delay in progress.
type hold struct {
	inj     int       // its injection in s.inj
	peer    PeerID    // a held delay's connection, to which wake pushes a plan
	end     time.Time // a held delay's cap: when its call wakes by itself
	until   string    // the condition
	leader  string    // who led when the cut began ("" none)
	need    int       // for "requests=K": K
	done    int       // successful requests of other members' clients since the cut began
	sites   []uint32  // for "site=S": the catalog's sites whose ID contains S, ascending
	behind  int64     // for "behind=N": N
	base    commitAt  // for "behind=N": the cut members' commit index when it began (behind.go)
	members []string  // the cut members, whose clients and reaches do not count
	arcs    []arc     // an arc cut's arcs; nil for a node cut
}

// watches reports whether h watches the other members through their
// plans — sites ("site=S", live in them) or observations ("behind=N",
// wire.FlagObserve in them) — so that its start and end change their
// plans too. False for nil.
func (h *hold) watches() bool { return h != nil && (len(h.sites) > 0 || h.behind > 0) }

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
	key := holdKey{node: node}
	if arcs != nil {
		key.shape = holdArcCut
	}
	s.holdAt(inj, key, f, members, arcs)
}

// holdDelay makes the delay that injection inj starts at call of
// connection peer (its request, wire.Request.ID) at now a held one when f
// says so, and returns the plans that start it: peer's, which lists the
// call (wire.Plan.Holding) and goes out ahead of the response, and every
// member's when the hold watches them (sites or observations). held is
// false for a delay of fixed length.
func (s *session) holdDelay(inj *record.Injection, peer PeerID, call uint64, f policy.Fault, now time.Time) (effs []Effect, held bool) {
	h := s.holdAt(inj, holdKey{node: inj.Node, shape: holdDelay, call: call}, f, []string{inj.Node}, nil)
	if h == nil {
		return nil, false
	}
	h.peer, h.end = peer, now.Add(f.Delay)
	if h.watches() {
		return s.replan(0), true
	}
	return []Effect{s.planFor(peer)}, true
}

// holdAt makes key's fault a held one when f says so (f.Until; every cut
// and a delay can be held) and returns its hold, nil for a fault of fixed
// length (which ends any hold left of an earlier fault of key).
func (s *session) holdAt(inj *record.Injection, key holdKey, f policy.Fault, members []string, arcs []arc) *hold {
	delete(s.holds, key)
	until := f.Until
	if until == "" || !(f.Kind.Cuts() || f.Kind == catalog.KindDelay) {
		return nil
	}
	inj.Until, inj.Cap = until, f.Delay
	h := hold{inj: len(s.inj), until: until, members: members, arcs: arcs}
	if k, ok := strings.CutPrefix(until, "requests="); ok {
		h.need, _ = strconv.Atoi(k)
	}
	h.sites = HoldSites(s.cat, until)
	if n, ok := strings.CutPrefix(until, "behind="); ok {
		h.behind, _ = strconv.ParseInt(n, 10, 64)
		h.base = s.commitBase(members)
	}
	for n, r := range s.role {
		if s.leads(r) {
			h.leader = n
		}
	}
	if s.holds == nil {
		s.holds = map[holdKey]*hold{}
	}
	s.holds[key] = &h
	return &h
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

// meet ends the hold of key at now: what met its condition goes into
// its injection, whose length becomes the cut's or delay's real one, and
// the cut heals or the call wakes. A hold past its cap, not yet ended (a
// cut of fixed length heals lazily, cutRequest and linkRequest; a held
// call woke by itself), ends as at its cap, its condition unmet.
func (s *session) meet(key holdKey, now time.Time, what string) []Effect {
	h := s.holds[key]
	until, on := s.holdEnd(key, h)
	if !on || h.inj >= len(s.inj) {
		delete(s.holds, key)
		if h.watches() {
			return s.replan(0) // the other members' plans lose its watch
		}
		return nil // healed at its cap already
	}
	if now.Before(until) {
		in := &s.inj[h.inj]
		if now.After(in.Time) {
			in.Delay = now.Sub(in.Time).Round(time.Millisecond)
		}
		in.Met = what
	}
	switch key.shape {
	case holdArcCut:
		return s.healArcs(key)
	case holdDelay:
		return s.wake(key)
	}
	return s.healCut(key.node, now)
}

// holdEnd returns when the hold h of key ends at its cap, and whether its
// cut or call is still on: a held call is on while its connection lasts
// (detach ends it: the agent's lost connection ends every hold).
func (s *session) holdEnd(key holdKey, h *hold) (time.Time, bool) {
	switch key.shape {
	case holdArcCut:
		c, on := s.heldArcs(h)
		return c.until, on
	case holdDelay:
		_, on := s.members[h.peer]
		return h.end, on
	}
	c, on := s.cuts[key.node]
	return c.until, on
}

// wake ends the held delay of key and returns the plans that wake its
// call: its connection's, which no longer lists it, or every member's
// when the hold watched them (they lose the watched sites or
// observations).
func (s *session) wake(key holdKey) []Effect {
	h := s.holds[key]
	delete(s.holds, key)
	if h.watches() {
		return s.replan(0)
	}
	return []Effect{s.planFor(h.peer)}
}

// holding returns the calls of connection id whose held delay goes on
// (wire.Plan.Holding), ascending; nil for none.
func (s *session) holding(id PeerID) []uint64 {
	var out []uint64
	for key, h := range s.holds {
		if key.shape == holdDelay && h.peer == id {
			out = append(out, key.call)
		}
	}
	slices.Sort(out)
	return out
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
