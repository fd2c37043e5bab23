package controller

import (
	"slices"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
)

// A partition (catalog.KindPartition) cuts a node off from its peers in
// situ: while it lasts, the node's peer-network sites (catalog.Site.Peer)
// are live in its plan whatever the policy's plan says, and the session
// answers their requests itself, without the policy: a dial fails at once
// with a connection error, a read, write or accept stalls (wire.ActStall)
// until the heal (a blackholed link: nothing moves, then the connection
// carries on, as TCP does after a short outage). The heal is a new plan
// without the peer sites: it wakes the stalled calls, and new connections
// work again at once. A partition of fixed length heals lazily, at the
// first peer request after its end; healCut (the cofi policy) heals at once.

// cut is one node's partition in progress.
type cut struct {
	from, until time.Time
}

// peerSites returns the catalog's peer-network sites, ascending.
func (s *session) peerSites() []uint32 {
	if s.peers == nil {
		s.peers = []uint32{}
		for i := range s.cat.Sites {
			if s.cat.Sites[i].Peer != "" {
				s.peers = append(s.peers, uint32(i))
			}
		}
	}
	return s.peers
}

// withPeers adds the peer sites to the live sites of a cut node's plan.
func (s *session) withPeers(sites []uint32) []uint32 {
	out := append(slices.Clone(sites), s.peerSites()...)
	slices.Sort(out)
	return slices.Compact(out)
}

// startCut cuts node off from now for d and returns the plans that make
// its peer sites live on each of its connections.
func (s *session) startCut(node string, d time.Duration, now time.Time) []Effect {
	if s.cuts == nil {
		s.cuts = map[string]cut{}
	}
	s.cuts[node] = cut{from: now, until: now.Add(d)}
	return s.replanCut(node, s.holds[holdKey{node: node}].watches())
}

// replanCut gives the agents whose plans node's cut changes as it starts
// or heals their plans: node's own, and every member's when wide (the
// cut's hold watches the other members through their plans while it
// lasts: sites or observations, held.go).
func (s *session) replanCut(node string, wide bool) []Effect {
	if wide {
		return s.replan(0)
	}
	return s.replanNode(node)
}

// replanNode gives every agent connection of node its current plan
// (every agent's, when processes hold members, TrialSpec.Members: any
// process may hold node).
func (s *session) replanNode(node string) []Effect {
	var effs []Effect
	for _, id := range s.sortedMembers() {
		if m := s.members[id]; (m.node == node || s.spec.Members) && m.role == wire.RoleAgent {
			effs = append(effs, s.planFor(id))
		}
	}
	return effs
}

// cutRequest answers a request at a peer site of a cut node; handled is
// false when the request is not one (the node is not cut, or the site is
// no peer site), and the policy decides it as usual. Members of one
// process (TrialSpec.Members) only send: a cut member's sends fail, and so
// do the others' sends to it (peer, the member a send goes to), which is
// what cuts it both ways.
func (s *session) cutRequest(node, peer string, site *catalog.Site, now time.Time) (act wire.Action, arg int64, effs []Effect, handled bool) {
	if site == nil || site.Peer == "" {
		return wire.ActNone, 0, nil, false
	}
	cutNode := node
	c, ok := s.cuts[node]
	if !ok && s.spec.Members && peer != "" {
		cutNode = peer
		c, ok = s.cuts[peer]
	}
	if !ok {
		return wire.ActNone, 0, nil, false
	}
	if !now.Before(c.until) {
		// Healed: the node's plan loses the peer sites.
		return wire.ActNone, 0, s.healCut(cutNode, now), true // at its cap, a held one's condition unmet
	}
	act, arg = cutAction(site, c.until.Sub(now))
	return act, arg, nil, true
}

// cutAction is what a peer-network call does while its node is cut off
// for left more: a dial fails with the site's connection error (if it has
// one), an in-process send fails with the transport's error, everything
// else stalls for the rest of the partition.
func cutAction(site *catalog.Site, left time.Duration) (wire.Action, int64) {
	if site.Peer == catalog.PeerSend && len(site.Errors) > 0 {
		return wire.ActError, 1 // the transport's error for an unreachable peer
	}
	if site.Peer == catalog.PeerDial {
		if k := connectionError(site); k > 0 {
			return wire.ActError, int64(k)
		}
	}
	return wire.ActStall, int64(left)
}

// healCut ends node's partition at now, if it is cut off, and returns the
// plans that heal it.
func (s *session) healCut(node string, now time.Time) []Effect {
	if _, ok := s.cuts[node]; !ok {
		return nil
	}
	wide := s.holds[holdKey{node: node}].watches()
	delete(s.cuts, node)
	delete(s.holds, holdKey{node: node})
	return s.replanCut(node, wide)
}

// connectionError returns the 1-based index of the error a dial over a
// dropped link returns (refused, reset, timed out), or 0.
func connectionError(site *catalog.Site) int {
	for _, want := range []string{"ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "deadline", "EHOSTUNREACH"} {
		for i, e := range site.Errors {
			if e.Name == want {
				return i + 1
			}
		}
	}
	return 0
}
