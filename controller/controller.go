// Package controller is the campaign's decision server. It accepts the
// agents of instrumented nodes and the workload clients over the wire
// protocol, runs the trial lifecycle (begin → plan → events and decisions →
// end), tracks each node's abstract-state machines per task instance, asks
// the policy about every request from a live site, and records every event
// and injection of a trial for the checkers and the store.
//
// A trial's logic is a single-threaded state machine (session): connections,
// requests and events go in, responses and Effects (plans to push, a node to
// crash, warnings) come out, with no I/O, lock or clock, and it is tested
// without sockets. Trial and peer are the shell: they serialise the calls to
// the session and carry out its effects after releasing the trial's lock;
// plans carry the session's sequence numbers, so a connection never gets an
// older plan after a newer one.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// maxClientEvents limits what one trial records of its workload's events,
// so a chatty workload cannot exhaust memory.
const maxClientEvents = 200_000

// maxReached and maxRoleChanges bound what one trial records of the
// (site, role, state) triples its requests arrived in and of the nodes'
// role changes: a site is reached in few states, and elections are rare.
const (
	maxReached     = 4096
	maxRoleChanges = 1024
	// maxObservations bounds the observed peer messages one trial keeps.
	maxObservations = 1 << 16
)

// Options configure a Controller.
type Options struct {
	// Catalog is the catalog the nodes were built with. Agents whose
	// catalog hash differs get an empty plan: gofault never injects at a
	// site it cannot name.
	Catalog *catalog.Catalog
	// Policy decides injections.
	Policy policy.Policy
	Logger *slog.Logger
	// Disconnects says the policy may choose disconnect faults: the
	// agents then tag each goroutine with the peer it dials, so that
	// requests name the member they talk to (wire.FlagPeers). Off, peer
	// dials cost nothing more than other hooks.
	Disconnects bool
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

	disconnects bool // Options.Disconnects

	mu     sync.Mutex
	trials map[string]*Trial
	// ended are the IDs of the last trials that ended (at most
	// maxEnded), to tell a node that connects after its trial ended (a
	// crashed member restarted as the trial stops) from a stranger.
	ended []string
	conns map[*peer]struct{}
	// mismatch is the catalog hash of the first node agent that connected
	// with another catalog than the controller's.
	mismatch atomic.Pointer[string]
	// otherVersion is the first agent (a node's or the workload's) that
	// spoke another protocol version than this gofault's.
	otherVersion atomic.Pointer[AgentVersion]
	closed       bool
	wg           sync.WaitGroup
	nextID       atomic.Uint64 // PeerIDs, from 1
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
		ln:          ln,
		addr:        network + ":" + ln.Addr().String(),
		cat:         opts.Catalog,
		log:         log,
		policy:      opts.Policy,
		disconnects: opts.Disconnects,
		trials:      make(map[string]*Trial),
		conns:       make(map[*peer]struct{}),
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
		p := &peer{c: c, nc: nc, id: PeerID(c.nextID.Add(1))}
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
	// PowerLoss kills node like Crash and rolls its data dir back to what
	// it synced before the restart (a power-loss crash); nil: the
	// controller cannot inject one.
	PowerLoss func(node string)
	// Reboot restarts node cleanly: its shutdown signal, then a start
	// (a reboot fault); nil: the controller cannot inject one.
	Reboot func(node string)
	// Stop kills node like Crash and starts it again only down later
	// (a stop fault); nil: the controller cannot inject one.
	Stop func(node string, down time.Duration)
	// Pause stops node's whole process for d, then lets it go on (a
	// pause fault); nil: the controller cannot inject one.
	Pause func(node string, d time.Duration)
	// NoFaults runs the trial without asking the policy: a fault-free
	// baseline trial whose states and events are still recorded.
	NoFaults bool
	// Members splits a process that holds several members of an
	// in-process cluster (gofault test) into nodes: its agent tags
	// goroutines with the member whose methods they run
	// (wire.FlagMembers), and a request that names a member is the
	// node "n<rank>" (MemberNode), rank 1 the member the process saw
	// first; a request that names none stays its connection's node.
	Members bool
	// Reach, when not nil, narrows the policy's plan to these sites
	// (policy.TrialInfo.Reach): the sites the trial's workload reached
	// fault-free.
	Reach []uint32
	// Expected is policy.TrialInfo.Expected: the requests the trial's
	// workload made fault-free at its live sites, 0 when not known.
	Expected int
}

// Trial is a running trial: the shell around its session. Every call
// takes mu only around the session's step; the effects the step returns
// (plans to push, a node to crash, warnings) are carried out after mu is
// released, so no lock of a trial is held while writing to a connection.
type Trial struct {
	c  *Controller
	id string

	mu    sync.Mutex
	s     *session
	peers map[PeerID]*peer
}

// BeginTrial asks the policy for the trial's plan and registers it, so agents
// and workloads that connect with spec.ID join it.
func (c *Controller) BeginTrial(spec TrialSpec) (*Trial, error) {
	if spec.ID == "" {
		return nil, errors.New("controller: trial without ID")
	}
	// Fault-free trials observe peer messages when the policy learns
	// from them (cofi mines its invariants).
	_, learns := c.policy.(policy.Learner)
	plan := policy.Plan{States: true, Observe: learns && len(c.cat.ObservePoints) > 0}
	if !spec.NoFaults {
		c.pmu.Lock()
		plan = c.policy.Begin(policy.TrialInfo{Index: spec.Index, Nodes: spec.Nodes, Reach: spec.Reach, Expected: spec.Expected})
		c.pmu.Unlock()
		if spec.Reach != nil {
			plan = plan.Within(spec.Reach)
		}
	}
	t := &Trial{c: c, id: spec.ID, peers: map[PeerID]*peer{}}
	t.s = newSession(c.cat, spec, plan, func(r *policy.Request) policy.Decision {
		c.pmu.Lock()
		defer c.pmu.Unlock()
		return c.policy.Decide(r)
	})
	t.s.tagPeers = c.disconnects
	if o, ok := c.policy.(policy.Observer); ok && !spec.NoFaults {
		t.s.observer = func(ob *policy.Observation) policy.Partition {
			c.pmu.Lock()
			defer c.pmu.Unlock()
			return o.Observe(ob)
		}
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
	// Reached counts the requests by site, role and state.
	Reached []record.Reach
	// Roles are the nodes' role changes.
	Roles []record.RoleChange
	// Observations are the peer messages observed (bounded).
	Observations []record.Observation
	// Dropped counts events not recorded because of the per-trial limits.
	Dropped int
	// Blocks are the basic blocks (catalog.Catalog.Blocks indices) that
	// some node of the trial covered, ascending: the union over its
	// processes, restarts included.
	Blocks []uint32
	// Members are the in-process cluster members the requests named
	// (TrialSpec.Members), by rank; MemberRequests counts the requests
	// that named one.
	Members        []Member
	MemberRequests int
	// MemberSends counts the requests at peer sites (an in-process
	// transport's sends, catalog.PeerSend) that named both the member
	// sending and the member the send goes to: the sends a cut between
	// two members can strike.
	MemberSends int
}

// Member is one member of an in-process cluster as a trial saw it.
type Member struct {
	// Node is the member's node name (MemberNode), Value its member
	// value (hashicorp/raft's server ID).
	Node  string `json:"node"`
	Value string `json:"value"`
	// Requests counts the requests that named it.
	Requests int `json:"requests"`
}

// CatalogMismatch returns the catalog hash of the first node that
// connected with another catalog than the controller's (a binary built
// for other sources, config or release: no fault can strike it), if one
// did.
func (c *Controller) CatalogMismatch() (agentHash string, ok bool) {
	if h := c.mismatch.Load(); h != nil {
		return *h, true
	}
	return "", false
}

// AgentVersion is an agent that spoke another protocol version than this
// gofault's (wire.Version): the program it is linked into was built with
// another gofault.
type AgentVersion struct {
	Node    string // its hello's node: a member, or "workload"
	Version uint32 // its protocol version
}

// VersionMismatch returns the first agent that connected speaking another
// protocol version (the controller refused it: a node so built takes no
// fault, a workload so built reports nothing, and the checkers judge
// blind), if one did.
func (c *Controller) VersionMismatch() (AgentVersion, bool) {
	if v := c.otherVersion.Load(); v != nil {
		return *v, true
	}
	return AgentVersion{}, false
}

// CatalogHash is the hash of the controller's catalog.
func (c *Controller) CatalogHash() string { return c.cat.Hash }

// maxEnded bounds Controller.ended: more than the trials that run at once.
const maxEnded = 256

// MemberNode is the node name of the in-process cluster member of rank
// seq (wire.Request.MemberSeq): n1, n2, ...
func MemberNode(seq uint32) string { return "n" + strconv.FormatUint(uint64(seq), 10) }

// End ends the trial: its agents get an empty plan and the trial's record
// is returned. Events that arrive later are not recorded; calling End again
// returns the same record. Tell the policy the outcome with Controller.TellPolicy.
func (t *Trial) End() Result {
	c := t.c
	c.mu.Lock()
	if _, ok := c.trials[t.id]; ok {
		delete(c.trials, t.id)
		if len(c.ended) == maxEnded {
			c.ended = c.ended[1:]
		}
		c.ended = append(c.ended, t.id)
	}
	c.mu.Unlock()
	t.mu.Lock()
	res, effs := t.s.end()
	t.mu.Unlock()
	t.apply(nil, effs)
	return res
}

// apply carries out a session's effects; t.mu must not be held. A plan for
// self, the peer whose request is being answered, is appended to its write
// buffer ahead of the response by the caller instead: apply returns it.
func (t *Trial) apply(self *peer, effs []Effect) (selfPlan *Effect) {
	for i := range effs {
		e := &effs[i]
		switch {
		case e.Peer != 0:
			t.mu.Lock()
			p := t.peers[e.Peer]
			t.mu.Unlock()
			switch {
			case p == nil: // gone meanwhile
			case p == self:
				selfPlan = e
			default:
				p.sendPlan(e.Seq, e.Plan)
			}
		case e.Crash != "" && e.Reboot:
			if rb := t.s.spec.Reboot; rb != nil {
				go rb(e.Crash)
			}
		case e.Crash != "" && e.Down > 0:
			if stop := t.s.spec.Stop; stop != nil {
				go stop(e.Crash, e.Down)
			}
		case e.Pause != "":
			if pause := t.s.spec.Pause; pause != nil {
				go pause(e.Pause, e.For)
			}
		case e.Crash != "" && e.PowerLoss:
			if pl := t.s.spec.PowerLoss; pl != nil {
				go pl(e.Crash)
			}
		case e.Crash != "":
			if crash := t.s.spec.Crash; crash != nil {
				go crash(e.Crash)
			}
		case e.Warn != "":
			t.c.log.Warn(e.Warn, e.Args...)
		}
	}
	return selfPlan
}

// TellPolicy tells the policy the outcome of an ended trial, as the
// campaign judged it (policy.OutcomeOf its record: its verdicts, and the
// coverage blocks it covered that no trial before it had, the campaign
// keeping the union), and returns what the policy chose for the trial and
// why when it explains itself (policy.Explainer; the zero Choice
// otherwise), for the trial's record. Baseline trials
// (TrialSpec.NoFaults) are not the policy's: it is not told of them.
func (c *Controller) TellPolicy(out policy.Outcome) policy.Choice {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	var ch policy.Choice
	if e, ok := c.policy.(policy.Explainer); ok {
		ch = e.Explain(out.Index)
	}
	c.policy.End(out)
	return ch
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
	return maps.Clone(t.s.progress)
}

// Leader returns the node that leads now by the nodes' own role hooks
// (catalog Role: the member whose current role is the leader value; of
// several, the one that became leader last), "" when none does; roles
// says whether the catalog names a leader value at all (else no node will
// ever lead by its role).
func (t *Trial) Leader() (node string, roles bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, roles = t.s.cat.Role.Leader()
	return t.s.leader(), roles
}

// ClientEvents returns the workload's events recorded so far, those it
// sent over the controller connection and those it printed (Printed), in
// time order.
func (t *Trial) ClientEvents() []record.ClientEvent {
	t.mu.Lock()
	out := append(slices.Clone(t.s.client), t.s.printedEvs...)
	t.mu.Unlock()
	slices.SortStableFunc(out, func(a, b record.ClientEvent) int { return a.Time.Compare(b.Time) })
	return out
}

// Printed hands the trial an event the workload printed on its stdout, as
// it is read, so that it counts live as one sent over the connection
// does: the client's progress (LastProgress, calibration), held cuts. The
// trial's Result does not include it (the runner merges what it read).
func (t *Trial) Printed(e record.ClientEvent) {
	t.mu.Lock()
	effs := t.s.printed(e)
	t.mu.Unlock()
	t.apply(nil, effs)
}

// Injections returns the injections so far.
func (t *Trial) Injections() []record.Injection {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.s.inj)
}

// FaultState says where a running trial's faults stand: what a runner
// needs to decide whether the trial's workload may end early.
type FaultState struct {
	// Faultless is set when no fault can strike the trial: a fault-free
	// trial (TrialSpec.NoFaults), or a plan with no live site and no
	// policy observing peer messages to start a partition.
	Faultless bool
	// Last is set once the policy has granted the last fault it grants in
	// the trial (policy.Decision.Last).
	Last bool
	// Injections are the injections so far.
	Injections []record.Injection
}

// Faults returns where the trial's faults stand now.
func (t *Trial) Faults() FaultState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.s.faults()
}

// Arm starts the injection phase: until it is called, agents get plans
// without live sites (states and events are still recorded), so faults
// strike the running cluster under the workload, not its start-up. Nodes
// that start later — a node restarted after a crash fault — get the live
// plan at once, so recovery paths are injected too.
func (t *Trial) Arm() {
	t.mu.Lock()
	effs := t.s.arm()
	t.mu.Unlock()
	t.apply(nil, effs)
}

// Disarm ends the injection phase for good: every agent gets a plan
// with no live site and the policy is asked nothing more, as when it said
// it grants no more (Decision.Done). A fault already struck runs its
// course (a delay sleeps on). gofault test calls it when a test process
// that runs its test twice ends the first run, so that the second runs
// with no fault of its own.
func (t *Trial) Disarm() {
	t.mu.Lock()
	effs := t.s.disarm()
	t.mu.Unlock()
	t.apply(nil, effs)
}

// attach adds p to the trial and returns its welcome plan (and that plan's
// sequence number).
func (t *Trial) attach(p *peer, catalogOK bool) (wire.Plan, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.peers[p.id] = p
	e := t.s.attach(p.id, p.hello.Node, p.hello.Role, catalogOK)
	return e.Plan, e.Seq
}

func (t *Trial) detach(p *peer) {
	t.mu.Lock()
	delete(t.peers, p.id)
	t.s.detach(p.id)
	t.mu.Unlock()
}

// decide answers one request of p; a new plan for p itself, if the answer
// changed it, is returned to go out before the response.
func (t *Trial) decide(p *peer, r *wire.Request) (wire.Response, *Effect) {
	t.mu.Lock()
	resp, effs := t.s.request(p.id, r, time.Now())
	t.mu.Unlock()
	return resp, t.apply(p, effs)
}

// events records a batch of p's events. An event may change p's own plan
// (an observation that cuts p's node off its peers): it is sent at once,
// since no response carries it.
func (t *Trial) events(p *peer, evs []wire.Event) {
	t.mu.Lock()
	effs := t.s.events(p.id, evs)
	t.mu.Unlock()
	if self := t.apply(p, effs); self != nil {
		p.sendPlan(self.Seq, self.Plan)
	}
}

// Serve blocks until ctx is done, then closes the controller.
func (c *Controller) Serve(ctx context.Context) error {
	<-ctx.Done()
	return c.Close()
}

// SetAddresses tells the trial which member listens at which address
// ("host:port" → node name; every port of a member), so that a request at
// a peer-network call names the member it talks to: a disconnect cuts
// calls between two members only. Call it once the cluster's ports are
// allocated, before Arm.
func (t *Trial) SetAddresses(addrs map[string]string) {
	t.mu.Lock()
	t.s.setAddresses(addrs)
	t.mu.Unlock()
}

// PlanTrial asks the policy for the plan of trial info.Index without
// registering a trial here: a trial run by another process (a worker of
// package fleet) whose controller asks this one. Calls are serialised with
// the policy calls of this controller's own trials.
func (c *Controller) PlanTrial(info policy.TrialInfo) policy.Plan {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.policy.Begin(info)
}

// Decide answers one request of a trial planned with PlanTrial, serialised
// with this controller's own trials.
func (c *Controller) Decide(req *policy.Request) policy.Decision {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.policy.Decide(req)
}

// Observe hands an observation of a trial planned with PlanTrial to the
// policy when it is an Observer (cofi); the zero Partition otherwise.
func (c *Controller) Observe(ob *policy.Observation) policy.Partition {
	o, ok := c.policy.(policy.Observer)
	if !ok {
		return policy.Partition{}
	}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return o.Observe(ob)
}
