// Package hashilike is shaped like hashicorp/raft: the role field has the
// role type and is written with atomic.StoreUint32 through its address.
package hashilike

import "sync/atomic"

// RaftState is the role of a raft node.
type RaftState uint32

// Roles.
const (
	Follower RaftState = iota
	Candidate
	Leader
	Shutdown
)

type raftState struct {
	currentTerm uint64
	state       RaftState
}

func (r *raftState) getState() RaftState {
	return RaftState(atomic.LoadUint32((*uint32)(&r.state)))
}

func (r *raftState) setState(s RaftState) {
	atomic.StoreUint32((*uint32)(&r.state), uint32(s)) // want "atomic"
}

// Raft embeds its state.
type Raft struct {
	raftState
	ch chan bool
}

// Run flips the role.
func (r *Raft) Run() {
	for range r.ch {
		if r.getState() == Leader {
			r.setState(Follower)
		} else {
			r.setState(Leader)
		}
	}
}

// Demo makes a leader and returns its role.
func Demo() RaftState {
	var r Raft
	r.setState(Leader)
	return r.getState()
}
