// Package boollike is shaped like a raft fork that keeps only whether a
// member leads: a bool isLeader, and an atomic.Bool for lock-free readers.
package boollike

import "sync/atomic"

type peer struct {
	isLeader bool
	amLeader atomic.Bool
	closed   bool
}

func (p *peer) setLeader(v bool) {
	p.isLeader = v // want "assign"
	p.amLeader.Store(v)
}

func (p *peer) stepDown() {
	p.isLeader = false // want "assign"
	p.amLeader.Store(false)
	p.closed = true
}

// IsLeader reads the atomic.Bool.
func (p *peer) IsLeader() bool { return p.amLeader.Load() }

// Leading reads the bool.
func (p *peer) Leading() bool { return p.isLeader }

// Demo makes a leader and steps it down.
func Demo() bool {
	p := &peer{}
	p.setLeader(true)
	p.stepDown()
	return p.Leading() || p.IsLeader()
}
