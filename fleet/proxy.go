package fleet

// The coordinator's policy as a worker's controller sees it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gofault/gofault/policy"
)

// proxy is a policy.Policy (and policy.Observer) whose calls go to the
// coordinator's policy: Begin returns the plan the coordinator gave the
// trial's delivery, Decide and Observe ask it, End is left to the
// coordinator (it learns the outcome when the result arrives). A call that
// fails grants nothing: the trial runs on, fail-open, as the agent does
// when its controller is gone. A call that no coordinator listens to (it
// ended, or was killed) stops the delivery: its result would be dropped.
type proxy struct {
	nc          *nats.Conn
	coordinator string
	name        string
	nodes       []string
	timeout     time.Duration
	log         *slog.Logger

	mu   sync.Mutex
	live map[int]live // by trial index
}

// live is a running delivery, its plan and what stops it.
type live struct {
	d    Delivery
	plan policy.Plan
	stop context.CancelCauseFunc
}

// errGone stops a delivery whose coordinator no longer listens.
var errGone = errors.New("its coordinator is gone")

var (
	_ policy.Policy   = (*proxy)(nil)
	_ policy.Observer = (*proxy)(nil)
)

// started records the plan of a delivery about to run, and stop, which
// cancels it with errGone when a call finds no coordinator listening.
func (p *proxy) started(d Delivery, plan policy.Plan, stop context.CancelCauseFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live[d.Index] = live{d: d, plan: plan, stop: stop}
}

// ended forgets a delivery.
func (p *proxy) ended(index int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.live, index)
}

func (p *proxy) delivery(index int) (live, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.live[index]
	return l, ok
}

// Name is the coordinator's policy's name.
func (p *proxy) Name() string { return p.name }

// Begin returns the plan the coordinator gave the trial.
func (p *proxy) Begin(info policy.TrialInfo) policy.Plan {
	l, _ := p.delivery(info.Index)
	return l.plan
}

// Decide asks the coordinator's policy.
func (p *proxy) Decide(req *policy.Request) policy.Decision {
	l, ok := p.delivery(req.Trial)
	if !ok || req.Site == nil {
		return policy.Decision{}
	}
	r := *req
	r.Site = nil
	var out DecideReply
	if err := p.call(context.Background(), "decide", DecideRequest{Delivery: l.d, Site: req.Site.Index, Request: r}, &out); err != nil {
		p.failed(l, err)
		p.log.Warn("queue: the coordinator did not decide; nothing injected", "index", req.Trial, "err", err)
		return policy.Decision{}
	}
	return out.Decision
}

// Observe asks the coordinator's policy.
func (p *proxy) Observe(ob *policy.Observation) policy.Partition {
	l, ok := p.delivery(ob.Trial)
	if !ok || ob.Point == nil {
		return policy.Partition{}
	}
	var out ObserveReply
	if err := p.call(context.Background(), "observe", ObserveRequest{Delivery: l.d, Point: ob.Point.Index, Observation: ob.Observation}, &out); err != nil {
		p.failed(l, err)
		p.log.Warn("queue: the coordinator did not answer an observation", "index", ob.Trial, "err", err)
		return policy.Partition{}
	}
	return out.Partition
}

// failed stops delivery l when err says no coordinator listens.
func (p *proxy) failed(l live, err error) {
	if errors.Is(err, nats.ErrNoResponders) && l.stop != nil {
		l.stop(errGone)
	}
}

// End does nothing here: the coordinator tells its policy the outcome.
func (p *proxy) End(policy.Outcome) {}

// call sends a request to the coordinator and decodes its reply into out.
func (p *proxy) call(ctx context.Context, name string, req, out any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	m, err := p.nc.RequestWithContext(ctx, callSubject(p.coordinator, name), data)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := json.Unmarshal(m.Data, out); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
