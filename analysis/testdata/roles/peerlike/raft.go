// Package peerlike has a string field compared with "leader" and
// "follower" but written only from configuration: it may hold anything,
// so the pass does not pick it unasked and suggests the role method that
// reads it.
package peerlike

type peer struct {
	name string
	kind string
}

// configure sets the peer's kind from its configuration.
func (p *peer) configure(kind string) {
	p.kind = kind
}

// IsLeader says whether the peer is configured to lead.
func (p *peer) IsLeader() bool { return p.kind == "leader" }

func (p *peer) follows() bool { return p.kind == "follower" }

// Demo configures a peer from kind.
func Demo(kind string) bool {
	p := &peer{name: "n1"}
	p.configure(kind)
	return p.IsLeader() || p.follows()
}
