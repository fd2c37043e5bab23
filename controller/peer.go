package controller

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// helloTimeout bounds how long a new connection may take to say hello.
const helloTimeout = 5 * time.Second

// peer is one connected process: an agent or a workload.
type peer struct {
	c     *Controller
	nc    net.Conn
	id    PeerID
	hello wire.Hello
	trial *Trial

	// Replies are appended to wbuf and written when no more input is
	// buffered, so a burst of requests is answered with one write. Plans
	// pushed from other goroutines use the same buffer.
	wmu      sync.Mutex
	wbuf     []byte
	spare    []byte
	flushing bool
	epoch    uint32
	planSeq  uint64 // the session's sequence number of the last plan queued
	// welcomed is set once the Welcome is queued: it must be the first
	// frame, so a plan pushed before it (an Arm racing the join) replaces
	// the Welcome's plan instead of going out ahead of it.
	welcomed bool
	pending  *wire.Plan
}

// serve runs the connection until it ends.
func (p *peer) serve() error {
	r := wire.NewReader(p.nc)
	if err := p.nc.SetReadDeadline(time.Now().Add(helloTimeout)); err != nil {
		return err
	}
	t, payload, err := r.ReadFrame()
	if err != nil {
		return fmt.Errorf("read hello: %w", err)
	}
	if t != wire.THello {
		return fmt.Errorf("first frame is %v, want hello", t)
	}
	if err := wire.DecodeHello(payload, &p.hello); err != nil {
		return fmt.Errorf("decode hello: %w", err)
	}
	if err := p.nc.SetReadDeadline(time.Time{}); err != nil {
		return err
	}
	plan, seq := p.join()
	p.wmu.Lock()
	if p.pending != nil && p.planSeq > seq {
		plan = *p.pending // newer than the join's
	}
	p.planSeq = max(p.planSeq, seq)
	p.welcomed, p.pending = true, nil
	p.epoch++
	plan.Epoch = p.epoch
	p.wbuf = wire.AppendWelcome(p.wbuf, &wire.Welcome{Version: wire.Version, Plan: plan})
	if err := p.flushLocked(); err != nil {
		return err
	}

	var (
		req wire.Request
		evs wire.Events
	)
	for {
		t, payload, err := r.ReadFrame()
		if err != nil {
			return err
		}
		switch t {
		case wire.TRequest:
			if err := wire.DecodeRequest(payload, &req); err != nil {
				return err
			}
			resp := wire.Response{ID: req.ID}
			var plan *Effect
			if p.trial != nil {
				resp, plan = p.trial.decide(p, &req)
			}
			p.wmu.Lock()
			if plan != nil {
				// The new plan goes first, so the agent has installed it
				// before the hook that asked returns.
				p.queuePlanLocked(plan.Seq, plan.Plan)
			}
			p.wbuf = wire.AppendResponse(p.wbuf, &resp)
			if r.Buffered() > 0 {
				p.wmu.Unlock() // more requests are waiting: answer them together
				continue
			}
			if err := p.flushLocked(); err != nil {
				return err
			}
		case wire.TEvents:
			if err := wire.DecodeEvents(payload, &evs); err != nil {
				return err
			}
			if p.trial != nil {
				p.trial.events(p, evs.Events)
			}
			if r.Buffered() == 0 {
				p.wmu.Lock()
				if err := p.flushLocked(); err != nil {
					return err
				}
			}
		case wire.TBye:
			return nil
		default:
			return fmt.Errorf("unexpected %v frame", t)
		}
	}
}

// join attaches the peer to the trial named in its hello and returns its
// first plan and that plan's sequence number.
func (p *peer) join() (wire.Plan, uint64) {
	c := p.c
	if p.hello.Version != wire.Version {
		c.log.Error("controller: agent speaks another protocol version", "node", p.hello.Node, "version", p.hello.Version, "want", wire.Version)
		c.otherVersion.CompareAndSwap(nil, &AgentVersion{Node: p.hello.Node, Version: p.hello.Version})
		return wire.Plan{}, 0
	}
	c.mu.Lock()
	t := c.trials[p.hello.Trial]
	ended := slices.Contains(c.ended, p.hello.Trial)
	c.mu.Unlock()
	switch {
	case t == nil && ended:
		// A member restarted after a crash fault while its trial was
		// stopping: nothing of it is recorded any more.
		c.log.Debug("controller: connection for a trial that ended; no faults", "trial", p.hello.Trial, "node", p.hello.Node)
		return wire.Plan{}, 0
	case t == nil:
		c.log.Warn("controller: connection for unknown trial; no faults", "trial", p.hello.Trial, "node", p.hello.Node)
		return wire.Plan{}, 0
	}
	catalogOK := p.hello.CatalogHash == c.cat.Hash
	if p.hello.Role == wire.RoleAgent && !catalogOK {
		c.mismatch.CompareAndSwap(nil, &p.hello.CatalogHash)
		c.log.Error("controller: node built from another catalog; no faults on it (rebuild with gofault build)",
			"node", p.hello.Node, "agent_catalog", p.hello.CatalogHash, "catalog", c.cat.Hash)
	}
	p.trial = t
	return t.attach(p, catalogOK)
}

// sendPlan queues plan number seq of the peer's trial and writes it, unless
// a newer plan has been queued already (the goroutines that compute plans
// under the trial's lock send them after releasing it, in any order).
func (p *peer) sendPlan(seq uint64, wp wire.Plan) {
	p.wmu.Lock()
	p.queuePlanLocked(seq, wp)
	if err := p.flushLocked(); err != nil {
		p.nc.Close()
	}
}

// queuePlanLocked appends plan number seq to wbuf unless a newer one was
// queued; wmu is held.
func (p *peer) queuePlanLocked(seq uint64, wp wire.Plan) {
	if seq <= p.planSeq {
		return
	}
	p.planSeq = seq
	if !p.welcomed {
		p.pending = &wp
		return
	}
	p.epoch++
	wp.Epoch = p.epoch
	p.wbuf = wire.AppendPlan(p.wbuf, &wp)
}

// flushLocked writes wbuf; called with wmu held, it releases it. If another
// goroutine is writing, the frames are left for it to send.
func (p *peer) flushLocked() error {
	if p.flushing {
		p.wmu.Unlock()
		return nil
	}
	p.flushing = true
	var err error
	for len(p.wbuf) > 0 && err == nil {
		buf := p.wbuf
		p.wbuf = p.spare[:0]
		p.wmu.Unlock()
		// No write deadline: a peer that stops reading blocks only its own
		// writer, and Close unblocks it.
		_, err = p.nc.Write(buf)
		p.wmu.Lock()
		p.spare = buf[:0]
	}
	if err != nil {
		p.wbuf = p.wbuf[:0]
	}
	p.flushing = false
	p.wmu.Unlock()
	return err
}
