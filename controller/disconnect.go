package controller

import (
	"net"
	"slices"
	"strings"
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
// lazily, at the first such request after its end.

// link is an unordered pair of members, a before b.
type link struct{ a, b string }

func linkOf(x, y string) link {
	if y < x {
		x, y = y, x
	}
	return link{x, y}
}

// other returns the member of l that is not node, and whether node is in l.
func (l link) other(node string) (string, bool) {
	switch node {
	case l.a:
		return l.b, true
	case l.b:
		return l.a, true
	}
	return "", false
}

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

// linked reports whether node is one end of a disconnect in progress.
func (s *session) linked(node string) bool {
	for l := range s.links {
		if _, ok := l.other(node); ok {
			return true
		}
	}
	return false
}

// startLink cuts node and peer apart from now for d and returns the plans
// that make their peer sites live.
func (s *session) startLink(node, peer string, d time.Duration, now time.Time) []Effect {
	if s.links == nil {
		s.links = map[link]cut{}
	}
	s.links[linkOf(node, peer)] = cut{from: now, until: now.Add(d)}
	return append(s.replanNode(node), s.replanNode(peer)...)
}

// linkRequest answers a request of node at a peer site whose call talks
// to peer, when node and peer are cut apart; handled is false when the
// request is not one, and it goes on as usual. A disconnect of node that
// is over heals first (both members' plans lose the peer sites), at any
// of node's peer calls.
func (s *session) linkRequest(node, peer string, site *catalog.Site, now time.Time) (act wire.Action, arg int64, effs []Effect, handled bool) {
	if site == nil || site.Peer == "" {
		return wire.ActNone, 0, nil, false
	}
	var over []link
	for l, c := range s.links {
		if _, ok := l.other(node); ok && !now.Before(c.until) {
			over = append(over, l)
		}
	}
	slices.SortFunc(over, func(x, y link) int { return strings.Compare(x.a+"\x00"+x.b, y.a+"\x00"+y.b) })
	for _, l := range over {
		delete(s.links, l)
		effs = append(effs, s.replanNode(l.a)...)
		effs = append(effs, s.replanNode(l.b)...)
	}
	c, ok := s.links[linkOf(node, peer)]
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
