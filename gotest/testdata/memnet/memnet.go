// Package memnet is a three-member "cluster" in one process whose
// members talk through an in-memory transport (Net), for gofault test's
// partitions of in-process transports: a leader commits an entry once a
// majority of the members (itself included) hold it. With
// MEMNET_BUG=ack, Commit counts a send that failed as acknowledged: a
// planted bug that a partition of the leader shows (every send fails, and
// the entry is acknowledged on the leader alone), and that one failed
// send, a one-way cut or a disconnect of the leader from one follower do
// not (the other follower still acknowledges).
package memnet

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// Net is the in-memory transport: members by address.
type Net struct {
	mu      sync.Mutex
	members map[string]*Member
}

// NewNet returns an empty transport.
func NewNet() *Net { return &Net{members: map[string]*Member{}} }

// send delivers entry to the member at address to.
func (n *Net) send(to, entry string) error {
	n.mu.Lock()
	m, ok := n.members[to]
	n.mu.Unlock()
	if !ok {
		return fmt.Errorf("no route to member %s", to)
	}
	m.receive(entry)
	return nil
}

// Member is one member, told apart by its id (gofault.yaml's
// test.member), reached at addr (test.transport.address).
type Member struct {
	id, addr string
	net      *Net
	mu       sync.Mutex
	log      []string
}

// Join returns member id at addr on net.
func Join(net *Net, id, addr string) *Member {
	m := &Member{id: id, addr: addr, net: net}
	net.mu.Lock()
	net.members[addr] = m
	net.mu.Unlock()
	return m
}

// Start starts the member (it announces its address to gofault's agent,
// as a raft member's loops do).
func (m *Member) Start() { m.Entries() }

// receive appends entry to the member's log.
func (m *Member) receive(entry string) {
	m.mu.Lock()
	m.log = append(m.log, entry)
	m.mu.Unlock()
}

// Entries returns the member's log.
func (m *Member) Entries() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.log...)
}

// ErrNoQuorum is Commit's error when a majority did not take the entry.
var ErrNoQuorum = errors.New("no quorum")

// Commit appends entry to the leader's log and sends it to the followers'
// addresses; it returns nil once a majority of the members hold it.
func (m *Member) Commit(entry string, followers []string) error {
	m.receive(entry)
	acks := 1
	for _, f := range followers {
		if err := m.net.send(f, entry); err == nil || os.Getenv("MEMNET_BUG") == "ack" {
			acks++
		}
	}
	if 2*acks <= len(followers)+1 {
		return fmt.Errorf("%s: %d of %d acknowledged: %w", entry, acks, len(followers)+1, ErrNoQuorum)
	}
	return nil
}
