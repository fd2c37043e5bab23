// Package goraftlike is shaped like goraft and its forks
// (github.com/seaweedfs/raft): the role is the string field server.state,
// written with untyped string constants through setState's parameter
// (and once directly, at Init), compared with them, and read by State()
// under a lock. The pass picks it unasked: its written constants say
// leader and follower.
package goraftlike

// rwMutex stands in for sync.RWMutex, which the test need not load.
type rwMutex struct{ readers int }

func (m *rwMutex) Lock()    { m.readers-- }
func (m *rwMutex) Unlock()  { m.readers++ }
func (m *rwMutex) RLock()   { m.readers++ }
func (m *rwMutex) RUnlock() { m.readers-- }

// The states of a server, goraft's.
const (
	Stopped      = "stopped"
	Initialized  = "initialized"
	Follower     = "follower"
	Candidate    = "candidate"
	Leader       = "leader"
	Snapshotting = "snapshotting"
)

type server struct {
	mutex  rwMutex
	name   string
	state  string
	leader string
	term   uint64
}

func newServer(name string) *server { return &server{name: name, state: Stopped} } // construction: no write

// State is goraft's: the state, read under the lock.
func (s *server) State() string {
	s.mutex.RLock()
	defer s.mutex.RUnlock()
	return s.state
}

func (s *server) setState(state string) {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	s.state = state // want "assign"
	if state == Leader {
		s.leader = s.name
	}
}

// Init makes a stopped server ready to start.
func (s *server) Init() {
	if s.state == Initialized {
		return
	}
	s.state = Initialized // want "assign"
}

func (s *server) loop() {
	for s.state != Stopped {
		switch s.state {
		case Follower:
			s.setState(Candidate)
		case Candidate:
			s.term++
			s.setState(Leader)
		case Leader:
			s.setState(Snapshotting)
			s.setState(Follower)
		}
	}
}

// Demo runs a server through its states.
func Demo() string {
	s := newServer("n1")
	s.Init()
	s.setState(Follower)
	s.loop()
	s.setState(Stopped)
	return s.State()
}
