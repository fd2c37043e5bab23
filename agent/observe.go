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
