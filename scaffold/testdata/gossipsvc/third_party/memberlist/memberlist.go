// Package memberlist stands in for github.com/hashicorp/memberlist: SWIM
// membership and gossip.
package memberlist

// Memberlist is one member.
type Memberlist struct{}

// Create starts a member.
func Create() (*Memberlist, error) { return &Memberlist{}, nil }
