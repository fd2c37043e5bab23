package controller

import (
	"github.com/gofault/gofault/agent/wire"
)

// after is a crash after a call that the session armed on a node
// (catalog.KindCrashAfter, KindPowerLossAfter): the agent ran the call and
// asks again once it returned (wire.Request.After).
type after struct {
	site      uint32
	powerLoss bool
}

// afterReturned answers the request of a call armed for a crash after it
// (r.After): ActCrash and the node's kill (a power loss's, when armed so)
// when the node has that crash armed at r's site, once; else nothing (the
// trial ended, or the request is stale). The agent then waits to be
// killed before the caller's next instruction.
func (s *session) afterReturned(node string, r *wire.Request) (wire.Response, []Effect) {
	resp := wire.Response{ID: r.ID}
	a, ok := s.after[node]
	if !ok || a.site != r.Site || s.ended {
		return resp, nil
	}
	delete(s.after, node)
	resp.Action = wire.ActCrash
	return resp, []Effect{{Crash: node, PowerLoss: a.powerLoss}}
}
