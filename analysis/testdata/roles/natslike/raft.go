// Package natslike is shaped like the NATS server's raft: the role field is
// an atomic.Int32 set with Store from a role value.
package natslike

import "sync/atomic"

// RaftState is the role of a raft node.
type RaftState uint8

// Roles.
const (
	Follower RaftState = iota
	Leader
	Candidate
	Closed
)

type raft struct {
	state atomic.Int32
	term  atomic.Uint64
	ch    chan RaftState
}

func (n *raft) switchState(newState RaftState) {
	n.state.Store(int32(newState)) // want "method"
	n.term.Add(1)
}

func (n *raft) State() RaftState { return RaftState(n.state.Load()) }

// Run switches roles as told.
func Run(n *raft) {
	for s := range n.ch {
		n.switchState(s)
	}
}

// Demo makes a leader and returns its role.
func Demo() RaftState {
	var n raft
	n.switchState(Leader)
	return n.State()
}
