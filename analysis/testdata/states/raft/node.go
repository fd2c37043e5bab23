// Package raft is a raft-like node for the states pass tests.
package raft

import (
	"errors"
	"log"
	"sync/atomic"
	"time"
)

// Role is a node's role.
type Role int

// Roles.
const (
	Follower Role = iota
	Candidate
	Leader
)

// Message is a raft message.
type Message struct {
	Type int
	Term uint64
	From uint64
}

// Node is a raft node.
type Node struct {
	id        uint64
	role      Role
	term      uint64
	lead      uint64
	applied   uint64
	snapIndex uint64
	snapCount uint64
	votes     map[uint64]bool
	stopped   atomic.Bool
	err       error

	recvc  chan Message
	propc  chan []byte
	tickc  chan struct{}
	stopc  chan struct{}
	applyc chan uint64
}

// NewNode returns a follower.
func NewNode(id uint64) *Node {
	n := &Node{id: id, snapCount: 100, votes: map[uint64]bool{}}
	n.recvc = make(chan Message)
	return n
}

// Start starts the node's goroutines.
func (n *Node) Start() {
	go n.run()
	go n.syncLoop()
	go func() {
		// A closure over the receiver.
		for range n.tickc {
			if n.role == Leader {
				n.heartbeat()
			}
		}
	}()
}

// run is the node loop: select on inputs, then act by role.
func (n *Node) run() {
	var propc chan []byte
	for {
		if n.role == Leader {
			propc = n.propc
		} else {
			propc = nil
		}
		select {
		case m := <-n.recvc:
			n.step(m)
		case p := <-propc:
			n.propose(p)
		case <-n.tickc:
			n.tick()
		case <-n.stopc:
			return
		}
		switch n.role {
		case Leader:
			n.heartbeat()
		case Candidate:
			n.campaign()
		case Follower:
			// No action: not a state.
		}
		role := n.role // local data flow
		if role != Follower && n.lead == 0 {
			log.Printf("no leader")
		}
		if n.err != nil { // errors are not state
			log.Printf("error: %v", n.err)
		}
		if n.stopped.Load() {
			return
		}
	}
}

// step is called from the loop; its branches on the node's state are
// states of the run task.
func (n *Node) step(m Message) {
	if m.Term > n.term {
		n.becomeFollower(m.Term, m.From)
	}
	switch m.Type {
	case 1: // a branch on the message only
		n.votes[m.From] = true
	}
	if len(n.votes) > 1 {
		n.becomeLeader()
	}
}

func (n *Node) tick()      {}
func (n *Node) heartbeat() {}
func (n *Node) propose([]byte) {
	n.applied++
}

func (n *Node) campaign() {
	n.role = Candidate
	n.term++
}

func (n *Node) becomeFollower(term, lead uint64) {
	n.role = Follower
	n.term = term
	n.lead = lead
}

func (n *Node) becomeLeader() {
	n.role = Leader
	n.lead = n.id
}

func (n *Node) isLeader() bool { return n.role == Leader }

// syncLoop applies entries and sometimes snapshots.
func (n *Node) syncLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case idx := <-n.applyc:
			n.applied = idx
		case <-t.C:
		case <-n.stopc:
			return
		}
		if n.applied-n.snapIndex > n.snapCount {
			n.snapshot()
		}
		if n.isLeader() {
			n.heartbeat()
		}
		if err := n.save(); err != nil {
			log.Printf("save: %v", err)
			continue // a guard on an error: what follows is no state
		}
		if !n.isLeader() {
			continue // a guard clause: the rest is the leader's state
		}
		go n.replicate(n.applied)
		if n.applied > n.snapIndex {
			// A branch without action.
			continue
		}
	}
}

func (n *Node) snapshot() { n.snapIndex = n.applied }

// replicate is a short task started on every round of the leader's sync
// loop: each run sees the state at its start, so it is a task unit.
func (n *Node) replicate(idx uint64) {
	if n.lead != n.id {
		return
	}
	n.heartbeat()
	_ = idx
}

func (n *Node) save() error {
	if n.term == 0 {
		return errors.New("no term")
	}
	return nil
}

// Status is not run by a goroutine: its branches are not states.
func (n *Node) Status() string {
	if n.role == Leader {
		return n.describe()
	}
	return "follower"
}

func (n *Node) describe() string { return "leader" }
