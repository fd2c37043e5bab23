// Package raft is shaped like hashicorp/raft: RPC request and response
// structs with an embedded RPCHeader naming the sender, a Transport
// interface that sends them to a peer by ID and address, a network
// transport implementing it, and a Raft node whose handlers take them.
package raft

import "sync/atomic"

// ServerID names a member.
type ServerID string

// ServerAddress is a member's network address.
type ServerAddress string

// RPCHeader is the header of every RPC: the sender's ID and address.
type RPCHeader struct {
	ProtocolVersion int
	ID              []byte
	Addr            []byte
}

// Log is a log entry: integer fields but no sender, not a message.
type Log struct {
	Index uint64
	Term  uint64
	Data  []byte
}

// AppendEntriesRequest is a message: sent through Transport.
type AppendEntriesRequest struct {
	RPCHeader
	Term              uint64
	Leader            []byte
	PrevLogEntry      uint64
	PrevLogTerm       uint64
	Entries           []*Log
	LeaderCommitIndex uint64
}

// AppendEntriesResponse answers an AppendEntriesRequest.
type AppendEntriesResponse struct {
	RPCHeader
	Term    uint64
	LastLog uint64
	Success bool
}

// RequestVoteRequest asks for a vote.
type RequestVoteRequest struct {
	RPCHeader
	Term         uint64
	LastLogIndex uint64
	LastLogTerm  uint64
}

// RequestVoteResponse answers a RequestVoteRequest.
type RequestVoteResponse struct {
	RPCHeader
	Term    uint64
	Granted bool
}

// Transport sends RPCs to peers.
type Transport interface {
	AppendEntries(id ServerID, target ServerAddress, args *AppendEntriesRequest, resp *AppendEntriesResponse) error
	RequestVote(id ServerID, target ServerAddress, args *RequestVoteRequest, resp *RequestVoteResponse) error
}

// AppendPipeline sends AppendEntries to one peer, pipelined.
type AppendPipeline interface {
	AppendEntries(args *AppendEntriesRequest, resp *AppendEntriesResponse) error
}

// LogStore stores logs: Log is no message (no sender field).
type LogStore interface {
	StoreLog(l *Log) error
}

// NetworkTransport implements Transport: its methods are send points.
type NetworkTransport struct{ sent int }

// AppendEntries sends args to id: a send point, to id.
func (n *NetworkTransport) AppendEntries(id ServerID, target ServerAddress, args *AppendEntriesRequest, resp *AppendEntriesResponse) error {
	return n.genericRPC(id, target, args, resp)
}

// RequestVote sends args to id: a send point, to id.
func (n *NetworkTransport) RequestVote(id ServerID, target ServerAddress, args *RequestVoteRequest, resp *RequestVoteResponse) error {
	return n.genericRPC(id, target, args, resp)
}

// genericRPC takes no message type: no point.
func (n *NetworkTransport) genericRPC(id ServerID, target ServerAddress, args, resp any) error {
	n.sent++
	return nil
}

// netPipeline implements AppendPipeline: a send point with no receiver
// known.
type netPipeline struct{ n int }

func (p *netPipeline) AppendEntries(args *AppendEntriesRequest, resp *AppendEntriesResponse) error {
	p.n++
	return nil
}

type raftState struct {
	currentTerm uint64
	commitIndex uint64
	lastApplied uint64
}

func (r *raftState) getCurrentTerm() uint64 { return atomic.LoadUint64(&r.currentTerm) }
func (r *raftState) getCommitIndex() uint64 { return atomic.LoadUint64(&r.commitIndex) }
func (r *raftState) getLastApplied() uint64 { return atomic.LoadUint64(&r.lastApplied) }

// CurrentTerm only returns getCurrentTerm(): the same variable, not
// observed twice.
func (r *Raft) CurrentTerm() uint64 { return r.getCurrentTerm() }

// LastIndex computes its value: observed.
func (r *Raft) LastIndex() uint64 {
	if c := r.getCommitIndex(); c > r.lastApplied {
		return c
	}
	return r.lastApplied
}

// RPC is a received request.
type RPC struct{ Command any }

// Raft is a node.
type Raft struct {
	raftState
	localID ServerID
	trans   Transport
}

// appendEntries handles a request: a handled point, named like its
// message type, to the node's localID.
func (r *Raft) appendEntries(rpc RPC, a *AppendEntriesRequest) {
	if a.Term > r.getCurrentTerm() {
		atomic.StoreUint64(&r.currentTerm, a.Term)
	}
}

// requestVote handles a vote request: a handled point.
func (r *Raft) requestVote(rpc RPC, req *RequestVoteRequest) {
	if req.Term > r.getCurrentTerm() {
		atomic.StoreUint64(&r.currentTerm, req.Term)
	}
}

// setupAppendEntries fills a request: not named like a handler, no point.
func (r *Raft) setupAppendEntries(req *AppendEntriesRequest, next uint64) {
	req.Term, req.PrevLogEntry = r.getCurrentTerm(), next-1
}

// replicateTo sends through the Transport interface: no point itself.
func (r *Raft) replicateTo(id ServerID, addr ServerAddress) error {
	req := &AppendEntriesRequest{}
	r.setupAppendEntries(req, 1)
	return r.trans.AppendEntries(id, addr, req, &AppendEntriesResponse{})
}

// stats has no state variables: its handler-named method is no point.
type stats struct{ calls int }

func (s *stats) processAppendEntries(a *AppendEntriesRequest) { s.calls++ }

// Request carries an ID and is passed to a method of one of the target's
// interfaces (like etcd's RequestV2), but no node handles it and it
// resembles nothing handled: no message, store.Put is no point.
type Request struct {
	ID    uint64
	Index uint64
}

// Applier applies requests.
type Applier interface {
	Put(r *Request) error
}

type store struct{ puts int }

func (s *store) Put(r *Request) error {
	s.puts++
	return nil
}

// Run sends and handles a message of each kind: the instrumented binary
// runs its hooks without a controller.
func Run() uint64 {
	r := &Raft{localID: "n1", trans: &NetworkTransport{}}
	r.appendEntries(RPC{}, &AppendEntriesRequest{RPCHeader: RPCHeader{ID: []byte("n2")}, Term: 2, Entries: []*Log{{Index: 1}}})
	r.requestVote(RPC{}, &RequestVoteRequest{RPCHeader: RPCHeader{ID: []byte("n3")}, Term: 3})
	_ = r.replicateTo("n2", "127.0.0.1:1")
	_ = (&netPipeline{}).AppendEntries(&AppendEntriesRequest{}, &AppendEntriesResponse{})
	return r.getCurrentTerm()
}
