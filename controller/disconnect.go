package controller

import (
	"net"
	"slices"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
)

// A disconnect (catalog.KindDisconnect) cuts one pair of members apart,
// both ways, in situ: while it lasts, both members' peer-network sites
// are live in their plans, and the session answers a request there
// itself when the call's peer (wire.Request.Peer, the address dialled or
// the one the calling goroutine last dialled) is the other member of the
// pair: a dial fails at once, a read or write stalls until the heal, as
// in a partition. Calls to the other members run (or go to the policy,
// when its plan has the site live), and so do calls whose peer is
// unknown: an accepted connection's remote address is an ephemeral port,
// so the cut is made at the calling side, on both members, which is
// enough for request/response transports and for streams the receiving
// side dials (etcd's rafthttp). A disconnect of fixed length heals
// lazily, at the first such request after its end. A disconnect is the
// pair's two arcs (one direction each); a one-way cut and a split are
// other sets of arcs (shapes.go).

// arc is one direction between two members: the calls of from whose
// peer is to. A disconnect cuts both arcs of a pair, a one-way cut one, a
// split every arc between its sides (shapes.go).
type arc struct{ from, to string }

// setAddresses tells the session which member listens at which address
// ("host:port"), so that a request's peer address names a member. Only
// the port is matched: every member of a trial runs on one host, and a
// dial may name it as localhost or 127.0.0.1.
func (s *session) setAddresses(addrs map[string]string) {
	s.ports = map[string]string{}
	for a, node := range addrs {
		if _, port, err := net.SplitHostPort(a); err == nil {
			s.ports[port] = node
		}
	}
}

// peerNode returns the member that listens at addr, or "".
func (s *session) peerNode(addr string) string {
	if addr == "" {
		return ""
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return s.ports[port]
}

// linked reports whether some of node's calls are cut from a member (a
// disconnect, one-way cut or split in progress makes node the calling
// side of an arc): its peer sites are live.
func (s *session) linked(node string) bool {
	for a := range s.arcs {
		if a.from == node {
			return true
		}
	}
	return false
}

// startArcs cuts the arcs of a fault that struck node from now for d and
// returns the plans that make their calling members' peer sites live:
// every member's, when the cut's hold watches the other members through
// their plans while it lasts (sites or observations, held.go).
func (s *session) startArcs(node string, arcs []arc, d time.Duration, now time.Time) []Effect {
	if s.arcs == nil {
		s.arcs = map[arc]cut{}
	}
	var nodes []string
	for _, a := range arcs {
		s.arcs[a] = cut{from: now, until: now.Add(d)}
		nodes = append(nodes, a.from)
	}
	if s.holds[holdKey{node: node, shape: holdArcCut}].watches() {
		return s.replan(0)
	}
	return s.replanNodes(nodes)
}

// disconnectArcs are the two arcs of a disconnect of node and peer.
func disconnectArcs(node, peer string) []arc {
	return []arc{{node, peer}, {peer, node}}
}

// healArcs ends the held arc cut of key at once, every arc of it, and
// returns the plans that heal it: its calling members' (without the peer
// sites unless another cut keeps them), or every member's when it
// watched them (sites or observations).
func (s *session) healArcs(key holdKey) []Effect {
	h := s.holds[key]
	delete(s.holds, key)
	var nodes []string
	for _, a := range h.arcs {
		if _, ok := s.arcs[a]; ok {
			delete(s.arcs, a)
			nodes = append(nodes, a.from)
		}
	}
	if h.watches() {
		return s.replan(0)
	}
	return s.replanNodes(nodes)
}

// dropArcHolds ends the holds of the arc cuts that one of healed (arcs
// that healed lazily at their cap) belongs to: their other arcs heal
// lazily in turn, as a fixed cut's do. wide reports whether one of them
// watched the other members (sites or observations), whose plans then
// lose the watch.
func (s *session) dropArcHolds(healed []arc) (wide bool) {
	for key, h := range s.holds {
		if key.shape == holdArcCut && slices.ContainsFunc(h.arcs, func(a arc) bool { return slices.Contains(healed, a) }) {
			wide = wide || h.watches()
			delete(s.holds, key)
		}
	}
	return wide
}

// replanNodes gives every agent connection of each of nodes (once, in
// name order) its current plan.
func (s *session) replanNodes(nodes []string) []Effect {
	nodes = slices.Clone(nodes)
	slices.Sort(nodes)
	var effs []Effect
	for _, n := range slices.Compact(nodes) {
		effs = append(effs, s.replanNode(n)...)
	}
	return effs
}

// linkRequest answers a request of node at a peer site whose call talks
// to peer, when the arc from node to peer is cut; handled is false when
// the request is not one, and it goes on as usual. The arcs from or to
// node that are over heal first (the members at their ends get their
// plans, without the peer sites unless another cut keeps them), at any of
// node's peer calls, and so does the hold of a held cut they belong to
// (every member's plan then loses what it watched).
func (s *session) linkRequest(node, peer string, site *catalog.Site, now time.Time) (act wire.Action, arg int64, effs []Effect, handled bool) {
	if site == nil || site.Peer == "" {
		return wire.ActNone, 0, nil, false
	}
	var ends []string
	var healed []arc
	for a, c := range s.arcs {
		if (a.from == node || a.to == node) && !now.Before(c.until) {
			delete(s.arcs, a)
			ends = append(ends, a.from, a.to)
			healed = append(healed, a)
		}
	}
	if s.dropArcHolds(healed) {
		effs = s.replan(0)
	} else {
		effs = s.replanNodes(ends)
	}
	c, ok := s.arcs[arc{node, peer}]
	if peer == "" || !ok {
		return wire.ActNone, 0, effs, len(effs) > 0
	}
	act, arg = cutAction(site, c.until.Sub(now))
	return act, arg, effs, true
}

// policyLive reports whether site is live on node by the policy's plan
// (not only for a partition or a disconnect).
func (s *session) policyLive(node string, site uint32) bool {
	if !s.armed || s.done || s.ended || !s.plan.LiveOn(node) {
		return false
	}
	_, ok := slices.BinarySearch(s.plan.Sites, site)
	return ok
}
