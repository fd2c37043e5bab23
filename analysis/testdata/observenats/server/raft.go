// Package server is shaped like nats-server's Raft: messages with
// unexported fields, encoded by methods of their own before they are sent
// on internal subjects and decoded by functions, then processed by the
// node, which embeds its lock.
package server

import (
	"encoding/binary"
	"sync"
)

type subscription struct{ subject string }

// Entry is a log entry.
type Entry struct{ Data []byte }

type raft struct {
	sync.RWMutex
	id      string
	term    uint64
	pterm   uint64
	pindex  uint64
	commit  uint64
	applied uint64
	leader  string
	vote    string
}

// Term takes the node's lock: not called by the hooks (raft embeds its
// lock, and a handler's caller may hold it).
func (n *raft) Term() uint64 {
	n.RLock()
	defer n.RUnlock()
	return n.term
}

type appendEntry struct {
	leader  string
	term    uint64
	commit  uint64
	pterm   uint64
	pindex  uint64
	entries []*Entry
	reply   string
	sub     *subscription
	buf     []byte
}

// encode is a send point: the message is its receiver.
func (ae *appendEntry) encode(b []byte) ([]byte, error) {
	b = binary.LittleEndian.AppendUint64(b, ae.term)
	return append(b, ae.leader...), nil
}

type appendEntryResponse struct {
	term    uint64
	index   uint64
	peer    string
	reply   string
	success bool
}

func (ar *appendEntryResponse) encode(b []byte) []byte {
	return binary.LittleEndian.AppendUint64(b, ar.term)
}

type voteRequest struct {
	term      uint64
	lastTerm  uint64
	lastIndex uint64
	candidate string
	reply     string
}

func (vr *voteRequest) encode() []byte {
	return binary.LittleEndian.AppendUint64(nil, vr.term)
}

type voteResponse struct {
	term    uint64
	peer    string
	granted bool
}

func (vr *voteResponse) encode() []byte {
	return binary.LittleEndian.AppendUint64(nil, vr.term)
}

// msgScheduling is encoded too, but names no sender: no message.
type msgScheduling struct{ ttl int64 }

func (ms *msgScheduling) encode(highSeq uint64) []byte {
	return binary.LittleEndian.AppendUint64(nil, highSeq)
}

func decodeAppendEntry(msg []byte, sub *subscription) (*appendEntry, error) {
	return &appendEntry{term: binary.LittleEndian.Uint64(msg), sub: sub}, nil
}

// handleAppendEntry takes the wire bytes, no message: no point.
func (n *raft) handleAppendEntry(sub *subscription, msg []byte) {
	ae, err := decodeAppendEntry(msg, sub)
	if err == nil {
		n.processAppendEntry(ae, sub)
	}
}

// processAppendEntry is a handled point, to the node's id.
func (n *raft) processAppendEntry(ae *appendEntry, sub *subscription) {
	n.Lock()
	defer n.Unlock()
	if ae.term > n.term {
		n.term, n.leader = ae.term, ae.leader
	}
	if ae.commit > n.commit {
		n.commit = ae.commit
	}
}

func (n *raft) processAppendEntryResponse(ar *appendEntryResponse) {
	n.Lock()
	defer n.Unlock()
	if ar.term > n.term {
		n.term = ar.term
	}
}

func (n *raft) processVoteRequest(vr *voteRequest) error {
	if vr == nil {
		return nil
	}
	n.Lock()
	defer n.Unlock()
	if vr.term > n.term {
		n.term, n.vote = vr.term, vr.candidate
	}
	return nil
}

// storeToWAL takes a message but is no handler: no point.
func (n *raft) storeToWAL(ae *appendEntry) error {
	_, err := ae.encode(nil)
	return err
}

func (n *raft) sendRPC(subject, reply string, msg []byte) {}

func (n *raft) sendHeartbeat() {
	ae := &appendEntry{leader: n.id, term: n.term}
	b, _ := ae.encode(nil)
	n.sendRPC("$NRG.AE", "", b)
}

// Run sends and handles a message of each kind: the instrumented binary
// runs its hooks without a controller.
func Run() uint64 {
	n := &raft{id: "n1"}
	n.sendHeartbeat()
	n.processAppendEntry(&appendEntry{leader: "n2", term: 2, commit: 1, entries: []*Entry{{}}}, nil)
	_ = n.processVoteRequest(&voteRequest{term: 3, candidate: "n3"})
	_ = n.processVoteRequest(nil)
	n.processAppendEntryResponse(&appendEntryResponse{term: 3, peer: "n2"})
	_ = (&appendEntryResponse{}).encode(nil)
	_ = (&voteRequest{}).encode()
	_ = (&voteResponse{}).encode()
	_ = (&msgScheduling{}).encode(1)
	return n.term
}
