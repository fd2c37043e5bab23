// Package etcdlike is shaped like etcd's raft: the role is a plain field of
// a named integer type, assigned in becomeX methods.
package etcdlike

// StateType is the role of a raft node.
type StateType uint64

// Roles.
const (
	StateFollower StateType = iota
	StateCandidate
	StateLeader
	StatePreCandidate
	numStates // a bound, not a role
)

// ProgressState is not a role: no leader, no follower.
type ProgressState int

// Progress states.
const (
	ProgressProbe ProgressState = iota
	ProgressReplicate
)

type progress struct {
	state ProgressState
}

type raft struct {
	term  uint64
	state StateType
	lead  uint64
	prs   map[uint64]*progress
	// prev is another field of the role type, written less and not named
	// state or role.
	prev StateType
}

func newRaft() *raft {
	r := &raft{prs: map[uint64]*progress{}}
	r.becomeFollower(1, 0)
	return r
}

func (r *raft) becomeFollower(term, lead uint64) {
	r.term = term
	r.state = StateFollower // want "assign StateFollower"
	r.lead = lead
}

func (r *raft) becomeCandidate() {
	r.prev = r.state
	r.state = StateCandidate // want "assign"
}

func (r *raft) becomeLeader() {
	r.state = StateLeader // want "assign"
	r.lead = 1
	for _, p := range r.prs {
		p.state = ProgressReplicate
	}
}

// Run keeps a raft going.
func Run(stop chan struct{}) {
	r := newRaft()
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			r.becomeCandidate()
			r.becomeLeader()
		}
	}()
}

// Demo elects a leader and returns its role.
func Demo() StateType {
	r := newRaft()
	r.becomeCandidate()
	r.becomeLeader()
	return r.state
}
