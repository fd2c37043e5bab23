// Package controller is the campaign's decision server. It accepts the
// agents of instrumented nodes and the workload clients over the wire
// protocol, runs the trial lifecycle (begin → plan → events and decisions →
// end), tracks each node's abstract-state machines per task instance, asks
// the policy about every request from a live site, and records every event
// and injection of a trial for the checkers and the store.
package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// maxClientEvents limits what one trial records of its workload's events,
// so a chatty workload cannot exhaust memory.
const maxClientEvents = 200_000

// Options configure a Controller.
type Options struct {
	// Catalog is the catalog the nodes were built with. Agents whose
	// catalog hash differs get an empty plan: gofault never injects at a
	// site it cannot name.
	Catalog *catalog.Catalog
	// Policy decides injections.
	Policy policy.Policy
	Logger *slog.Logger
}

// Controller serves agents and workloads of one campaign; it can run several
// trials at once.
type Controller struct {
	ln   net.Listener
	addr string
	cat  *catalog.Catalog
	log  *slog.Logger

	pmu    sync.Mutex // serialises policy calls
	policy policy.Policy

	mu     sync.Mutex
	trials map[string]*Trial
	conns  map[*peer]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Listen starts a controller on network ("unix" or "tcp") and address. For
// "unix", address is a socket path (removed first if stale); for "tcp" use a
// loopback address such as "127.0.0.1:0".
func Listen(network, address string, opts Options) (*Controller, error) {
	if opts.Policy == nil {
		return nil, errors.New("controller: no policy")
	}
	if opts.Catalog == nil {
		return nil, errors.New("controller: no catalog")
	}
	if network == "unix" {
		os.Remove(address)
	}
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, fmt.Errorf("controller: listen: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Controller{
		ln:     ln,
		addr:   network + ":" + ln.Addr().String(),
		cat:    opts.Catalog,
		log:    log,
		policy: opts.Policy,
		trials: make(map[string]*Trial),
		conns:  make(map[*peer]struct{}),
	}
	c.wg.Add(1)
	go c.accept()
	return c, nil
}

// Addr is the value for GOFAULT_CONTROLLER.
func (c *Controller) Addr() string { return c.addr }

// Policy returns the controller's policy; callers must not use it while
// trials run.
func (c *Controller) Policy() policy.Policy { return c.policy }

// Close stops accepting, closes every connection and waits for the
// controller's goroutines to end. Agents fail open.
func (c *Controller) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	err := c.ln.Close()
	for p := range c.conns {
		p.nc.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
	if u, ok := c.ln.Addr().(*net.UnixAddr); ok {
		os.Remove(u.Name)
	}
	return err
}

func (c *Controller) accept() {
	defer c.wg.Done()
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			return
		}
		p := &peer{c: c, nc: nc}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			nc.Close()
			return
		}
		c.conns[p] = struct{}{}
		c.wg.Add(1)
		c.mu.Unlock()
		go func() {
			defer c.wg.Done()
			err := p.serve()
			if err != nil && !errors.Is(err, net.ErrClosed) {
				c.log.Debug("controller: connection ended", "node", p.hello.Node, "err", err)
			}
			c.mu.Lock()
			delete(c.conns, p)
			c.mu.Unlock()
			if p.trial != nil {
				p.trial.detach(p)
			}
			nc.Close()
		}()
	}
}

// TrialSpec describes a trial to begin.
type TrialSpec struct {
	// ID is the trial key the nodes and workload carry in GOFAULT_TRIAL.
	ID    string
	Index int
	Nodes []string
	// Crash kills node; the controller calls it when the policy decides a
	// crash fault. It may be nil when crashes are not allowed.
	Crash func(node string)
	// NoFaults runs the trial without asking the policy: a fault-free
	// baseline trial whose states and events are still recorded.
	NoFaults bool
}

// Trial is a running trial.
type Trial struct {
	c    *Controller
	spec TrialSpec
	plan policy.Plan

	mu       sync.Mutex
	armed    bool // faults may be injected (see Arm)
	done     bool // the policy said it grants nothing more
	ended    bool
	peers    map[*peer]struct{}
	requests int
	hits     map[hitKey]int // requests per node and site
	inj      []record.Injection
	visits   map[visitKey]*record.StateVisit
	current  map[instKey]uint32 // per node and task instance: current state
	timeouts []record.Timeout
	client   []record.ClientEvent
	dropped  int
	progress map[string]time.Time // client → last progress
	result   *Result              // set by the first End
}

type instKey struct {
	node string
	task uint32
	inst uint64
}

type hitKey struct {
	node string
	site uint32
}

type visitKey struct {
	node        string
	task, state uint32
}

// BeginTrial asks the policy for the trial's plan and registers it, so agents
// and workloads that connect with spec.ID join it.
func (c *Controller) BeginTrial(spec TrialSpec) (*Trial, error) {
	if spec.ID == "" {
		return nil, errors.New("controller: trial without ID")
	}
	plan := policy.Plan{States: true}
	if !spec.NoFaults {
		c.pmu.Lock()
		plan = c.policy.Begin(policy.TrialInfo{Index: spec.Index, Nodes: spec.Nodes})
		c.pmu.Unlock()
	}
	t := &Trial{
		c:        c,
		spec:     spec,
		plan:     plan,
		peers:    make(map[*peer]struct{}),
		current:  make(map[instKey]uint32),
		visits:   make(map[visitKey]*record.StateVisit),
		hits:     make(map[hitKey]int),
		progress: make(map[string]time.Time),
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("controller: closed")
	}
	if _, dup := c.trials[spec.ID]; dup {
		return nil, fmt.Errorf("controller: trial %q already running", spec.ID)
	}
	c.trials[spec.ID] = t
	return t, nil
}

// Result is what a trial recorded.
type Result struct {
	Requests   int
	Injections []record.Injection
	// States are the abstract states entered, by node, task and state.
	States   []record.StateVisit
	Timeouts []record.Timeout
	Client   []record.ClientEvent
	// Dropped counts events not recorded because of the per-trial limits.
	Dropped int
}

// End ends the trial: its agents get an empty plan and the trial's record
// is returned. Events that arrive later are not recorded; calling End again
// returns the same record. Tell the policy the outcome with Judge.
func (t *Trial) End() Result {
	c := t.c
	c.mu.Lock()
	delete(c.trials, t.spec.ID)
	c.mu.Unlock()
	t.mu.Lock()
	if t.ended {
		res := *t.result
		t.mu.Unlock()
		return res
	}
	t.ended = true
	for p := range t.peers {
		p.sendPlan(wire.Plan{})
	}
	res := Result{
		Requests:   t.requests,
		Injections: t.inj,
		States:     t.stateVisits(),
		Timeouts:   t.timeouts,
		Client:     t.client,
		Dropped:    t.dropped,
	}
	t.result = &res
	t.mu.Unlock()
	return res
}

// Judge tells the policy how the ended trial was judged. Baseline trials
// (TrialSpec.NoFaults) are not the policy's and are not judged.
func (c *Controller) Judge(index int, res Result, failed bool) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.policy.End(policy.Outcome{Index: index, Requests: res.Requests, Injections: res.Injections, Timeouts: res.Timeouts, Failed: failed})
}

// SnapshotPolicy returns the policy's state for the store, or nil if the
// policy keeps none.
func (c *Controller) SnapshotPolicy() ([]byte, error) {
	s, ok := c.policy.(policy.Stateful)
	if !ok {
		return nil, nil
	}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return s.Snapshot()
}

// LastProgress returns, per workload client, the time of its last reported
// progress, so a campaign can end a trial whose clients are stuck.
func (t *Trial) LastProgress() map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]time.Time, len(t.progress))
	for k, v := range t.progress {
		out[k] = v
	}
	return out
}

// Injections returns the injections so far.
func (t *Trial) Injections() []record.Injection {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]record.Injection(nil), t.inj...)
}

// wirePlan is the plan a node of this trial gets now.
func (t *Trial) wirePlan(node string) wire.Plan {
	var wp wire.Plan
	if t.plan.States {
		wp.Flags |= wire.FlagStates
	}
	if t.plan.Stacks {
		wp.Flags |= wire.FlagStacks
	}
	if t.plan.Timeouts {
		wp.Flags |= wire.FlagTimeouts
	}
	if t.armed && !t.done && !t.ended && t.plan.LiveOn(node) {
		wp.Sites = t.plan.Sites
	}
	return wp
}

// Arm starts the injection phase: until it is called, agents get plans
// without live sites (states and events are still recorded), so faults
// strike the running cluster under the workload, not its start-up. Nodes
// that start later — a node restarted after a crash fault — get the live
// plan at once, so recovery paths are injected too.
func (t *Trial) Arm() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.armed || t.ended {
		return
	}
	t.armed = true
	for p := range t.peers {
		if p.hello.Role == wire.RoleAgent {
			p.sendPlan(t.wirePlan(p.hello.Node))
		}
	}
}

func (t *Trial) attach(p *peer) wire.Plan {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.peers[p] = struct{}{}
	if p.hello.Role != wire.RoleAgent {
		return wire.Plan{}
	}
	return t.wirePlan(p.hello.Node)
}

func (t *Trial) detach(p *peer) {
	t.mu.Lock()
	delete(t.peers, p)
	t.mu.Unlock()
}

// decide answers one request.
func (t *Trial) decide(p *peer, r *wire.Request) wire.Response {
	resp := wire.Response{ID: r.ID}
	c := t.c
	t.mu.Lock()
	if t.done || t.ended {
		t.mu.Unlock()
		return resp
	}
	site := c.cat.Site(r.Site)
	if site == nil {
		t.mu.Unlock()
		return resp
	}
	hk := hitKey{node: p.hello.Node, site: site.Index}
	t.hits[hk]++
	req := policy.Request{
		Trial:      t.spec.Index,
		Seq:        t.requests,
		Node:       p.hello.Node,
		Site:       site,
		Stack:      frames(r.Stack),
		Occurrence: t.hits[hk],
		Task:       r.Task,
		Inst:       r.Inst,
		State:      r.State,
	}
	t.requests++
	c.pmu.Lock()
	d := c.policy.Decide(&req)
	c.pmu.Unlock()

	crash := false
	if f := d.Fault; f.Kind != policy.None {
		inj := record.Injection{
			Time:       time.Now(),
			Node:       req.Node,
			Site:       site.Index,
			SiteID:     site.ID,
			Kind:       f.Kind.String(),
			Stack:      req.Stack,
			Occurrence: req.Occurrence,
			Task:       req.Task,
			Inst:       req.Inst,
			State:      req.State,
		}
		if st := c.cat.State(req.State); st != nil {
			inj.StateID = st.ID
		}
		switch f.Kind {
		case policy.Error:
			if f.Error < 1 || f.Error > len(site.Errors) {
				t.mu.Unlock()
				c.log.Error("policy chose an error the site does not have", "site", site.ID, "error", f.Error)
				return resp
			}
			inj.Error = site.Errors[f.Error-1].Name
			resp.Action, resp.Arg = wire.ActError, int64(f.Error)
		case policy.Delay:
			inj.Delay = f.Delay
			resp.Action, resp.Arg = wire.ActDelay, int64(f.Delay)
		case policy.Crash:
			if t.spec.Crash == nil {
				t.mu.Unlock()
				return resp
			}
			resp.Action = wire.ActCrash
			crash = true
		}
		t.inj = append(t.inj, inj)
	}
	if d.Done && !t.done {
		t.done = true
		for q := range t.peers {
			if q != p && q.hello.Role == wire.RoleAgent {
				q.sendPlan(t.wirePlan(q.hello.Node))
			}
		}
		// p's own plan goes out after its response; see peer.handle.
		p.planDue = true
	}
	t.mu.Unlock()
	if crash {
		go t.spec.Crash(req.Node)
	}
	return resp
}

func frames(fs []wire.Frame) []record.Frame {
	if len(fs) == 0 {
		return nil
	}
	out := make([]record.Frame, len(fs))
	for i, f := range fs {
		out[i] = record.Frame{Func: f.Func, File: f.File, Line: int(f.Line)}
	}
	return out
}

// events records a batch.
func (t *Trial) events(p *peer, evs []wire.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	node := p.hello.Node
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case wire.EvState:
			k := instKey{node: node, task: uint32(e.A), inst: e.C}
			if t.current[k] == uint32(e.B) {
				continue
			}
			t.current[k] = uint32(e.B)
			vk := visitKey{node: node, task: uint32(e.A), state: uint32(e.B)}
			v := t.visits[vk]
			if v == nil {
				v = &record.StateVisit{Node: node, Task: vk.task, State: vk.state, First: time.Unix(0, e.Time)}
				t.visits[vk] = v
			}
			v.Entries++
		case wire.EvTimeout:
			t.timeouts = append(t.timeouts, record.Timeout{Node: node, Site: uint32(e.A), Duration: time.Duration(e.B)})
		case wire.EvWorkload:
			var ce record.ClientEvent
			if err := json.Unmarshal(e.Data, &ce); err != nil {
				t.c.log.Warn("controller: bad workload event", "err", err)
				continue
			}
			if ce.Time.IsZero() {
				ce.Time = time.Unix(0, e.Time)
			}
			if ce.Kind == record.EvProgress || ce.Kind == record.EvOp {
				t.progress[ce.Client] = ce.Time
			}
			if len(t.client) >= maxClientEvents {
				t.dropped++
				continue
			}
			t.client = append(t.client, ce)
		}
	}
}

// stateVisits returns the trial's state visits by node, task and state.
// t.mu is held.
func (t *Trial) stateVisits() []record.StateVisit {
	out := make([]record.StateVisit, 0, len(t.visits))
	for _, v := range t.visits {
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Node != b.Node {
			return a.Node < b.Node
		}
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		return a.State < b.State
	})
	return out
}

// StateOf returns the current abstract state of a task instance on a node.
func (t *Trial) StateOf(node string, task uint32, inst uint64) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current[instKey{node, task, inst}]
}

// Serve blocks until ctx is done, then closes the controller.
func (c *Controller) Serve(ctx context.Context) error {
	<-ctx.Done()
	return c.Close()
}
