// Package transport is minikv's peer transport: the messages its members
// exchange (replication, forwarded writes, read indices, snapshots) and
// their carriage over HTTP, kept apart from the client API the way etcd's
// rafthttp is kept apart from etcd's client handlers. gofault's partition
// faults cut this package's network calls (faults.partition.packages in
// gofault.yaml), so a cut member's clients still reach it.
package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MsgType is the kind of a peer message.
type MsgType int

// The message types. A message's answer has the same type.
const (
	// MsgApp carries the leader's entries after Index (none: a
	// heartbeat) and its commit index to a follower; the answer's Index
	// is the follower's last index, Reject set when it has a gap.
	MsgApp MsgType = 1 + iota
	// MsgProp forwards a write (Payload: the entry) from a follower to
	// the leader; the answer's Payload is the write's result.
	MsgProp
	// MsgReadIndex asks the leader for the index a linearizable read
	// must wait for; the answer carries it in Index.
	MsgReadIndex
	// MsgSnap sends a follower that fell behind the leader's compacted
	// log the leader's state as of Index (Payload: the snapshot); the
	// answer's Index is the follower's last index after installing it.
	MsgSnap
)

func (t MsgType) String() string {
	switch t {
	case MsgApp:
		return "MsgApp"
	case MsgProp:
		return "MsgProp"
	case MsgReadIndex:
		return "MsgReadIndex"
	case MsgSnap:
		return "MsgSnap"
	}
	return fmt.Sprintf("MsgType(%d)", int(t))
}

// Message is one peer message or its answer. From and To are member IDs
// (Transport.Peers).
type Message struct {
	Type   MsgType `json:"type"`
	From   uint64  `json:"from"`
	To     uint64  `json:"to"`
	Epoch  int64   `json:"epoch,omitempty"`  // the sender's process epoch: a leader's in its messages, a follower's in its answers
	Index  uint64  `json:"index,omitempty"`  // see the message types
	Commit uint64  `json:"commit,omitempty"` // the leader's commit index
	Reject bool    `json:"reject,omitempty"`
	// Lease is a read lease the leader grants a follower (lease reads):
	// the follower may serve reads from its own state until this wall
	// clock time (Unix nanoseconds); 0 grants none.
	Lease int64 `json:"lease,omitempty"`
	// Payload is the type's body: entries, a proposal, a snapshot, a
	// result.
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Handler is a member's side of the protocol: it handles a peer's message
// and returns the answer.
type Handler interface {
	Step(ctx context.Context, m Message) (Message, error)
}

// Path is where a member serves its peers' messages.
const Path = "/raft/message"

// Transport carries one member's messages to its peers and serves theirs.
type Transport struct {
	// ID is this member's ID.
	ID uint64
	// Peers maps every member's ID to its host:port.
	Peers   map[uint64]string
	handler Handler
	client  *http.Client
}

// New returns the transport of member id, whose messages h handles.
func New(id uint64, peers map[uint64]string, h Handler) *Transport {
	return &Transport{ID: id, Peers: peers, handler: h,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
}

// Send sends msgs, in order, each to its member To, and returns their
// answers; it stops at the first that fails.
func (t *Transport) Send(ctx context.Context, msgs []Message) ([]Message, error) {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		m.From = t.ID
		resp, err := t.roundTrip(ctx, m)
		if err != nil {
			return out, fmt.Errorf("%s to %d: %w", m.Type, m.To, err)
		}
		out = append(out, resp)
	}
	return out, nil
}

// roundTrip posts m to its member and decodes the answer of a 200.
func (t *Transport) roundTrip(ctx context.Context, m Message) (Message, error) {
	var resp Message
	addr, ok := t.Peers[m.To]
	if !ok {
		return resp, fmt.Errorf("unknown member %d", m.To)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return resp, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+Path, bytes.NewReader(body))
	if err != nil {
		return resp, err
	}
	r, err := t.client.Do(req)
	if err != nil {
		return resp, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return resp, fmt.Errorf("read answer: %w", err)
	}
	if r.StatusCode != http.StatusOK {
		return resp, &RemoteError{Status: r.StatusCode, Msg: strings.TrimSpace(string(b))}
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return resp, fmt.Errorf("decode answer: %w", err)
	}
	return resp, nil
}

// RemoteError is a peer's failure to handle a message.
type RemoteError struct {
	Status int // the HTTP status
	Msg    string
}

func (e *RemoteError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Msg) }

// StatusError makes a handler's error answer with an HTTP status other
// than 500.
type StatusError struct {
	Status int
	Err    error
}

func (e *StatusError) Error() string { return e.Err.Error() }

func (e *StatusError) Unwrap() error { return e.Err }

// ServeHTTP serves a peer's message (POST Path).
func (t *Transport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m Message
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp, err := t.handler.Step(r.Context(), m)
	if err != nil {
		code := http.StatusInternalServerError
		var se *StatusError
		if errors.As(err, &se) {
			code = se.Status
		}
		http.Error(w, err.Error(), code)
		return
	}
	resp.Type, resp.From, resp.To = m.Type, t.ID, m.From
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(resp); err != nil {
		return // the peer sees the connection fail
	}
}
