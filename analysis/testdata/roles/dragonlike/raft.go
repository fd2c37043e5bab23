// Package dragonlike is shaped like dragonboat's raft: a named integer
// state read through a getter by IsLeader; and a replica whose mode has
// constants that do not say leader, read by IsPrimary.
package dragonlike

// State is a member's role.
type State uint64

// Roles.
const (
	follower State = iota
	candidate
	leader
	observer
	numStates
)

type raft struct{ state State }

func (r *raft) becomeLeader()   { r.state = leader }   // want "assign"
func (r *raft) becomeFollower() { r.state = follower } // want "assign"
func (r *raft) getState() State { return r.state }

// IsLeader compares the state through its getter.
func (r *raft) IsLeader() bool { return r.getState() == leader }

// Mode is a replica's mode.
type Mode int

// Modes.
const (
	Primary Mode = iota
	Backup
)

type replica struct{ mode Mode }

func (r *replica) promote(m Mode) { r.mode = m }

// IsPrimary compares the mode.
func (r *replica) IsPrimary() bool { return r.mode == Primary }

// Demo makes a leader and a primary.
func Demo() bool {
	r := &raft{}
	r.becomeLeader()
	r.becomeFollower()
	p := &replica{mode: Backup}
	p.promote(Primary)
	return r.IsLeader() && p.IsPrimary() && candidate != observer && numStates > 0
}
