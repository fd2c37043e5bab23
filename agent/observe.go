package agent

import (
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// Observing reports whether the plan asks for observations; the hooks at
// observation points call it before they read any variable, so they cost
// an atomic load while it does not.
func Observing() bool { return current.Load().flags&wire.FlagObserve != 0 }

// Observe reports that, at observation point point (its catalog index), a
// peer message of type typ from from to to was about to be sent or was
// just handled, with the point's variables at vals. Observations are
// batched with the other events.
func Observe(point uint32, typ int64, from, to uint64, vals ...int64) {
	if !Observing() {
		return
	}
	c := client.Load()
	if c == nil {
		return
	}
	c.event(wire.Event{Kind: wire.EvObserve, Time: time.Now().UnixNano(),
		A: uint64(point), B: uint64(typ), C: from, D: to, Data: wire.AppendValues(nil, vals)})
}

// PeerID turns a peer's ID that is a string or byte slice (hashicorp/raft's
// ServerID and RPCHeader.ID, nats-server's node IDs) into the integer that
// Observe reports as a sender or receiver: its 64-bit FNV-1a hash, the
// same for the same bytes at every point and in every process; 0 for an
// empty ID, which names no one.
func PeerID[T ~string | ~[]byte](id T) uint64 {
	if len(id) == 0 {
		return 0
	}
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}

// Entries is the type an observation point reports for a peer message
// that carries n log entries (hashicorp/raft's AppendEntriesRequest,
// nats-server's appendEntry): 1 when it carries any, 0 for a heartbeat.
func Entries(n int) int64 {
	if n > 0 {
		return 1
	}
	return 0
}
