package catalog

import (
	"slices"
	"strings"
)

// Observation-point kinds (ObservePoint.When).
const (
	ObserveSend    = "send"    // before peer messages are sent
	ObserveHandled = "handled" // after a peer message was handled
)

// ObservePoint is a function where the agent observes peer messages (CoFI's
// observation points): before a message is sent, or after one is handled.
// Its hook reports the message's type, sender and receiver and the values
// of Vars (agent.Observe), only while a plan asks for observations.
type ObservePoint struct {
	// Index is the dense, 0-based index the hook passes: its position in
	// Catalog.ObservePoints.
	Index uint32 `json:"index"`
	// ID is stable across edits that move code: "observe:pkg.Func".
	ID   string `json:"id"`
	Pkg  string `json:"pkg"`
	Func string `json:"func"`
	// When is ObserveSend or ObserveHandled.
	When string `json:"when"`
	// File, Line and Col locate the '{' that opens the function's body,
	// after which the hook is inserted.
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	// Msg is the parameter holding the message (or, for a send, the
	// slice of messages), and Slice says it is a slice.
	Msg   string `json:"msg"`
	Slice bool   `json:"slice,omitempty"`
	// Ptr says the message is passed by pointer (the hook checks for nil).
	Ptr bool `json:"ptr,omitempty"`
	// Type, From and To say where the message's type, sender and
	// receiver are. At a raftpb-shaped point (Message is "") they are
	// fields of the message: "Type", "From", "To". At a peer message
	// struct's they are Go expressions valid at the point (hashicorp/raft's
	// "args.ID", its Transport method's "id", the node's "r.localID"). An
	// empty one is not known there: the hook reports 0. A peer message
	// struct has no type field: its type is Message, and Type is empty or
	// its log entries (TypeEntries).
	Type string `json:"type"`
	From string `json:"from"`
	To   string `json:"to"`
	// FromHash and ToHash say that From and To are strings or byte
	// slices, which the hook hashes to integers (agent.PeerID): the same
	// node's ID gives the same integer at every point.
	FromHash bool `json:"from_hash,omitempty"`
	ToHash   bool `json:"to_hash,omitempty"`
	// TypeEntries says that Type is the slice of log entries a peer
	// message struct carries: the hook reports type 1 when it holds any
	// and 0 when it is empty (a heartbeat), so that appends and
	// heartbeats have invariants of their own.
	TypeEntries bool `json:"type_entries,omitempty"`
	// Message is the name of the message's Go type when it has no type
	// field (e.g. "AppendEntriesRequest"), "" for raftpb-shaped points.
	Message string `json:"message,omitempty"`
	// Vars are the observed variables, in the order their values are
	// reported.
	Vars []ObserveVar `json:"vars"`
}

// ObserveVar is one observed variable of an observation point.
type ObserveVar struct {
	// Name is how invariants name it: "msg.Term" for a field of the
	// message, "node.Term" for the node's state.
	Name string `json:"name"`
	// Expr is a Go expression of an integer or boolean type valid at the
	// point, with the message named by Msg (or, for a slice, by the loop
	// variable "gofaultmsg"), e.g. "m.Term" or "s.getCommittedIndex()".
	Expr string `json:"expr"`
}

// Observe returns the observation point with index i, or nil.
func (c *Catalog) Observe(i uint32) *ObservePoint {
	if int(i) >= len(c.ObservePoints) {
		return nil
	}
	return &c.ObservePoints[i]
}

// CommitVar reports whether the observed variable called name holds a
// commit index: its name contains "commit", case aside — etcd raftpb's
// "msg.Commit", hashicorp/raft's "msg.LeaderCommitIndex" and
// "node.getCommitIndex()", nats-server's "msg.commit" and "node.commit".
// A hold "behind=N" measures how far a member fell behind by them.
func CommitVar(name string) bool {
	return strings.Contains(strings.ToLower(name), "commit")
}

// ObservesCommit reports whether an observation point of c observes a
// commit index (CommitVar), without which a hold "behind=N" cannot be
// measured.
func (c *Catalog) ObservesCommit() bool {
	for i := range c.ObservePoints {
		if slices.ContainsFunc(c.ObservePoints[i].Vars, func(v ObserveVar) bool { return CommitVar(v.Name) }) {
			return true
		}
	}
	return false
}
