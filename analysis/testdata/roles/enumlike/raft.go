// Package enumlike is shaped like a raft fork whose role is a named string
// type with constants.
package enumlike

// State is a member's role.
type State string

// Roles.
const (
	Follower  State = "follower"
	Candidate State = "candidate"
	Leader    State = "leader"
)

type node struct {
	role State
	term uint64
}

func (n *node) step(to State) {
	n.role = to // want "assign"
	n.term++
}

func (n *node) lead() {
	n.role = Leader // want "assign"
}

// Role returns the role.
func (n *node) Role() State { return n.role }

// Demo makes a leader and returns its role.
func Demo() State {
	n := &node{role: Follower}
	n.step(Candidate)
	n.lead()
	return n.Role()
}
