// Package stringlike is shaped like a raft fork whose role field is a plain
// string: the server's state is set to "follower", "candidate" or "leader"
// and compared with them, and read through goraft's State() under a lock.
package stringlike

// rwMutex stands in for sync.RWMutex, which the test need not load.
type rwMutex struct{ readers int }

func (m *rwMutex) RLock()   { m.readers++ }
func (m *rwMutex) RUnlock() { m.readers-- }

type server struct {
	mu    rwMutex
	id    string
	state string
	term  uint64
	peer  interface{ IsLeader() bool }
}

func newServer(id string) *server { return &server{id: id, state: "follower"} } // construction: no write

func (s *server) becomeFollower() {
	s.state = "follower" // want "assign"
}

func (s *server) becomeCandidate() {
	s.state = "candidate" // want "assign"
	s.term++
}

func (s *server) becomeLeader() {
	if s.state == "candidate" {
		s.state = "leader" // want "assign"
	}
}

func (s *server) setState(st string) {
	s.state = st // want "assign"
}

// IsLeader is the role method the fork's API has.
func (s *server) IsLeader() bool { return s.state == "leader" }

// State is goraft's: the state, read under the lock.
func (s *server) State() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.state
}

// Methods no role resolves from.
func (s *server) Busy() bool      { return s.state == "leader" && s.term > 0 }
func (s *server) Always() bool    { return true }
func (s *server) PeerLeads() bool { return s.peer.IsLeader() }
func (s *server) Which(id bool) string {
	if id {
		return s.id
	}
	return s.state
}

// Demo runs a member through its roles.
func Demo() bool {
	s := newServer("n1")
	s.becomeCandidate()
	s.becomeLeader()
	s.setState("stopped")
	s.becomeFollower()
	s.id = "n2" // a string field that no leader or follower constant touches
	return s.IsLeader() && s.State() != "" && !s.Busy() && s.Always() && s.peer == nil
}
