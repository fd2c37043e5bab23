// Package node is shaped like etcd's raft and transport: a message struct
// with Type, From and To, a transport that sends slices of them and a
// state machine that steps one.
package node

// MessageType is a message's type.
type MessageType int32

// Message is a peer message.
type Message struct {
	Type   MessageType
	From   uint64
	To     uint64
	Term   uint64
	Index  uint64
	Reject bool
}

type raft struct {
	Term  uint64
	lead  uint64
	votes map[uint64]bool
}

// Step handles m: an observation point after handling.
func (r *raft) Step(m Message) error {
	if m.Term > r.Term {
		r.Term, r.lead = m.Term, m.From
	}
	return nil
}

func (r *raft) getLead() uint64 { return r.lead }

// Transport sends messages.
type Transport struct{ sent int }

// Send is an observation point before sending.
func (t *Transport) Send(msgs []Message) { t.sent += len(msgs) }

// Process has no message parameter: no point.
func (t *Transport) Process(n int) { t.sent += n }

// Step of a type without state: a point with the message's fields only.
type relay struct{}

func (relay) Step(m *Message) {}

// deliver hands a message to the node under a name ObservePass does not
// know: a handled point only when Options.ObserveHandled names it.
func (r *raft) deliver(m Message) { r.Term = m.Term }

// broadcast sends under a name ObservePass does not know.
func broadcast(msgs []Message) int { return len(msgs) }
