package controller

import (
	"maps"
	"slices"
)

// The other partition shapes are made of the same in-situ cuts as a
// disconnect (disconnect.go): an arc from A to B is cut when A's
// peer-network calls whose peer (wire.Request.Peer) is B fail (a dial) or
// stall until the heal (a read, write or accept), and A's peer sites are
// live in its plan meanwhile. The cut is made at the calling side: A's
// calls on a connection B dialled have no known peer (an accepted
// connection's remote address is an ephemeral port), and run.
//
// A one-way cut (catalog.KindOneWay) of A from B cuts the arc A→B only:
// A cannot reach B — A's dials to B fail, and A's writes and reads on the
// connections A dialled to B stall, so neither A's requests nor B's
// replies on them move (a stream A dialled stalls whichever way its
// messages flow: etcd's rafthttp streams, which the receiving member
// dials, carry B's messages to A) — while B still reaches A: B's dials to
// A, B's requests on them and A's replies (A's calls on a connection B
// dialled, whose peer is unknown at A) all run.
//
// A split (catalog.KindSplit) cuts every arc between two sides, both
// ways: the struck member and the others the policy chose (Fault.Side),
// a minority, against the rest. Within a side traffic flows.
//
// A leader cut (catalog.KindLeaderCut) is a partition (partition.go) of a
// member that leads when it makes the call: it starts right after the
// call (a peer call is the first one cut), at the protocol moment the
// site is, e.g. the leader's log append before the entry can commit.

// splitArcs returns the arcs between side and the other members, both
// ways, in a fixed order.
func splitArcs(side, members []string) []arc {
	var out []arc
	for _, a := range side {
		for _, b := range members {
			if !slices.Contains(side, b) {
				out = append(out, arc{a, b}, arc{b, a})
			}
		}
	}
	return out
}

// splitSide checks a split's side: node plus side are distinct members,
// peer is a member not among them, and they are fewer than the rest (a
// minority, or one member of two). It returns the struck side, sorted,
// and whether it is sound.
func splitSide(node, peer string, side, members []string) ([]string, bool) {
	struck := append([]string{node}, side...)
	slices.Sort(struck)
	if len(slices.Compact(slices.Clone(struck))) != len(struck) || peer == "" || slices.Contains(struck, peer) || !slices.Contains(members, peer) {
		return nil, false
	}
	for _, m := range struck {
		if !slices.Contains(members, m) {
			return nil, false
		}
	}
	if len(struck) > 1 && 2*len(struck) >= len(members) {
		return nil, false
	}
	return struck, true
}

// leads reports whether role, a request's role, is the catalog's leader.
func (s *session) leads(role string) bool {
	leader, ok := s.cat.Role.Leader()
	return ok && role == leader
}

// leader is the node that leads now by the role hooks (Trial.Leader).
func (s *session) leader() string {
	for _, rc := range slices.Backward(s.roles) {
		if s.leads(rc.Role) && s.role[rc.Node] == rc.Role {
			return rc.Node
		}
	}
	// The role changes are capped (maxRoleChanges): any current leader.
	for _, n := range slices.Sorted(maps.Keys(s.role)) {
		if s.leads(s.role[n]) {
			return n
		}
	}
	return ""
}
