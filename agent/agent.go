// Package agent is the runtime that gofault compiles into an instrumented
// program. Generated code calls its hooks; the agent asks the campaign
// controller for decisions over one persistent connection.
//
// The controller pushes each trial's plan — the set of live sites — to the
// agent, so a hook at a site that is not live costs an atomic load and a bit
// test: no lock, no system call, no allocation.
//
// The agent is fail-open. Without GOFAULT_CONTROLLER every hook returns at
// once. Connecting (dial, hello, first plan) is bounded by ConnectTimeout
// (200 ms) at start-up; a decision the controller does not answer within
// DecisionTimeout (500 ms) closes the connection. Once the connection is
// closed, for whatever reason, no hook injects or waits again and the program
// runs as if it were not instrumented.
//
// Environment:
//
//	GOFAULT_CONTROLLER  controller address: "unix:/path", "tcp:host:port" or "host:port"
//	GOFAULT_NODE        this process's node name
//	GOFAULT_TRIAL       the trial this process belongs to
package agent

import (
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// Bounds of the fail-open contract.
const (
	// ConnectTimeout bounds connecting to the controller at start-up.
	ConnectTimeout = 200 * time.Millisecond
	// DecisionTimeout bounds the wait for one decision; past it the agent
	// closes the connection and stops asking.
	DecisionTimeout = 500 * time.Millisecond
	// CrashWait is how long a hook told to crash waits for the controller
	// to kill the process before it kills the process itself.
	CrashWait = 5 * time.Second
)

// catalogHash identifies the catalog the program was instrumented with. The
// build sets it with -ldflags=-X=github.com/gofault/gofault/agent.catalogHash=HASH.
var catalogHash string

// plan is the decoded form of a wire.Plan: a bitmap of live sites.
type plan struct {
	epoch uint32
	flags uint32
	bits  []uint64
	// sync is the bitmap of sync sites when a durable image is kept
	// (powerloss.go), nil otherwise.
	sync []uint64
	// holding are the requests whose held delay goes on (wire.Plan.Holding).
	holding []uint64
}

func newPlan(p *wire.Plan) *plan {
	np := &plan{epoch: p.Epoch, flags: p.Flags, sync: syncSites, holding: slices.Clone(p.Holding)}
	if n := len(p.Sites); n > 0 {
		np.bits = make([]uint64, p.Sites[n-1]/64+1)
		for _, s := range p.Sites {
			np.bits[s/64] |= 1 << (s % 64)
		}
	}
	return np
}

var (
	emptyPlan = &plan{}
	current   atomic.Pointer[plan] // never nil
	client    atomic.Pointer[conn] // nil when not connected
)

func init() {
	current.Store(emptyPlan)
	markStrikes = os.Getenv(wire.EnvStrikes) == "1"
	if addr := os.Getenv(wire.EnvController); addr != "" {
		initPowerLoss()
		if err := Connect(addr, os.Getenv(wire.EnvNode), os.Getenv(wire.EnvTrial)); err != nil {
			os.Stderr.WriteString("gofault-agent: no controller, running without faults: " + err.Error() + "\n")
		}
	}
}

// Connect connects the agent to the controller at addr as node of trial,
// replacing any connection. The agent does this by itself at start-up from
// the environment; Connect is for tests and benchmarks that start a
// controller in the same process. It fails after ConnectTimeout.
func Connect(addr, node, trial string) error {
	Disconnect()
	c, err := connect(addr, wire.Hello{
		Version:     wire.Version,
		Role:        wire.RoleAgent,
		Node:        node,
		Trial:       trial,
		PID:         uint64(os.Getpid()),
		CatalogHash: catalogHash,
	}, ConnectTimeout)
	if err != nil {
		return err
	}
	// The controller of this connection has seen no state yet: forget
	// what earlier connections were told, or a goroutine that reuses a
	// dead one's g (its identity here) would not report the state the
	// dead one last entered.
	resetStates()
	resetCovered()
	resetArmed()
	resetAfter()
	resetMembers()
	c.start()
	if role.known.Load() {
		c.event(wire.Event{Kind: wire.EvRole, Time: time.Now().UnixNano(), A: uint64(role.value.Load())})
	}
	return nil
}

// Disconnect closes the connection, if any: every hook becomes a no-op.
func Disconnect() {
	if c := client.Load(); c != nil {
		c.close()
	}
	setPlan(emptyPlan)
}

// CatalogHash returns the catalog hash linked into the program.
func CatalogHash() string { return catalogHash }

// SetCatalogHash sets the catalog hash announced by later connections. Only
// tests need it: builds link the hash with -ldflags.
func SetCatalogHash(h string) { catalogHash = h }

// Fault is the hook at fault site site (the catalog index). It returns 0 when
// the real call must run — possibly after an injected delay, which Fault
// sleeps itself — or k ≥ 1 when the generated code must skip the call and
// return the site's k-th realistic error value instead.
func Fault(site uint32) int {
	p := current.Load()
	if w := site / 64; w >= uint32(len(p.bits)) || p.bits[w]&(1<<(site%64)) == 0 {
		if p.sync != nil {
			synced(site, p.sync)
		}
		return 0
	}
	k := decide(site, p, "", false, nil)
	if k == 0 && p.sync != nil {
		synced(site, p.sync) // the real sync runs: not at a crash, not instead of an error
	}
	return k
}

// Done is what an injected delay watches to end early: a context.Context,
// or anything else with its Done method. A nil Done never ends a delay.
type Done = interface{ Done() <-chan struct{} }

// FaultCtx is Fault at a call that takes a context (the call's ctx, or its
// *http.Request's Context()): an injected delay ends early when ctx is
// done, as the slow call itself would return then, and the real call runs
// after it and fails on the done context by itself. Without it a delay at
// an HTTP round trip outlived the request's cancellation (etcd's rafthttp
// pipeline, stopped while a post was slow, waited the whole delay).
func FaultCtx(site uint32, ctx Done) int {
	p := current.Load()
	if w := site / 64; w >= uint32(len(p.bits)) || p.bits[w]&(1<<(site%64)) == 0 {
		if p.sync != nil {
			synced(site, p.sync)
		}
		return 0
	}
	k := decide(site, p, "", false, ctx)
	if k == 0 && p.sync != nil {
		synced(site, p.sync)
	}
	return k
}

// Dial is Fault at a peer-network dial (catalog.PeerDial) to addr, the
// address the call connects or sends to ("" when the instrumenter could
// not tell it). When the plan asks (wire.FlagPeers) it also tags the
// calling goroutine with addr, so that the reads and writes this goroutine does
// next (on the connection it just made) name their peer too: a
// disconnect of two members cuts the calls between them and no others.
func Dial(site uint32, addr string) int {
	p := current.Load()
	if addr != "" && p.flags&wire.FlagPeers != 0 {
		tagPeer(goroutine(), addr)
	}
	if w := site / 64; w >= uint32(len(p.bits)) || p.bits[w]&(1<<(site%64)) == 0 {
		return 0
	}
	return decide(site, p, addr, true, nil)
}

// DialCtx is Dial at a call that takes a context: an injected delay ends
// early when ctx is done (see FaultCtx).
func DialCtx(site uint32, addr string, ctx Done) int {
	p := current.Load()
	if addr != "" && p.flags&wire.FlagPeers != 0 {
		tagPeer(goroutine(), addr)
	}
	if w := site / 64; w >= uint32(len(p.bits)) || p.bits[w]&(1<<(site%64)) == 0 {
		return 0
	}
	return decide(site, p, addr, true, ctx)
}

// Send is Fault at the entry of an in-process transport's send from the
// member whose address is from to the member whose address is to
// (catalog.PeerSend; gofault test's test.transport.send): when the plan
// tags members, the request names both (the members that announced those
// addresses, MemberEnterAt; the sender is the goroutine's member when
// from is "" or no member announced it), so that a cut between two
// members of one process fails their sends to each other and no others.
// A result k ≥ 1 makes the send return the transport's error for an
// unreachable peer.
func Send(site uint32, from, to string) int {
	p := current.Load()
	if w := site / 64; w >= uint32(len(p.bits)) || p.bits[w]&(1<<(site%64)) == 0 {
		return 0
	}
	return sendSlow(site, p, from, to)
}

// sendSlow is Send's slow path, for a live site.
//
//go:noinline
func sendSlow(site uint32, p *plan, from, to string) int {
	resp, c := askFrom(site, p, to, true, from)
	return act(c, resp, nil)
}

// Accept is Fault at the first peer-network call of a handler of peers'
// requests (catalog.PeerAccept): when the plan asks (wire.FlagPeers) it
// also forgets what the calling goroutine dialled before, since the request it
// serves comes from a peer that no dial of its own names.
func Accept(site uint32) int {
	if current.Load().flags&wire.FlagPeers != 0 {
		untagPeer(goroutine())
	}
	return Fault(site)
}

// decide is Fault's slow path, for a live site: one round trip. At a
// dial, peer is the address dialled; elsewhere the request names the
// peer the goroutine last dialled, if any. A delay ends early when ctx
// (nil: none) is done.
//
//go:noinline
func decide(site uint32, p *plan, peer string, dial bool, ctx Done) int {
	resp, c := ask(site, p, peer, dial)
	return act(c, resp, ctx)
}

// act carries out the actions every hook shares and returns the hook's
// result: the error variant, or 0. A delay ends early when ctx (nil:
// none) is done.
func act(c *conn, resp wire.Response, ctx Done) int {
	if markStrikes && resp.Action != wire.ActNone {
		markStrike()
	}
	switch resp.Action {
	case wire.ActError:
		return int(resp.Arg)
	case wire.ActDelay:
		sleep(time.Duration(resp.Arg), ctx)
	case wire.ActHold:
		hold(resp.ID, time.Duration(resp.Arg), ctx)
	case wire.ActCrash:
		c.awaitKill()
	case wire.ActCrashAfter:
		armAfter(goroutine())
	}
	return 0
}

// afterArmed holds the goroutines whose current call got ActCrashAfter:
// the call runs, and its deferred After asks for the crash. armedAfter
// counts them, so that After returns at once on the hot path when none is.
var (
	afterArmed = newGTable[struct{}](1)
	armedAfter atomic.Int32
)

func armAfter(g uint64) {
	if afterArmed.set(g, struct{}{}) {
		armedAfter.Add(1)
	}
}

// resetAfter disarms every goroutine (a new connection: a new trial).
func resetAfter() {
	afterArmed.reset()
	armedAfter.Store(0)
}

// disarmAfter reports whether goroutine g was armed, and disarms it. Only
// g itself disarms g, so the look-up and the removal do not race.
func disarmAfter(g uint64) bool {
	if _, ok := afterArmed.get(g); !ok {
		return false
	}
	afterArmed.del(g)
	armedAfter.Add(-1)
	return true
}

// After is deferred in the generated code of a disk site that can crash
// after its call (catalog.KindCrashAfter): when the hook before the call
// got ActCrashAfter on this goroutine, the call has now returned, and
// After asks the controller for the crash (Request.After) and waits to be
// killed before the caller's next instruction. Otherwise it returns at
// once (one atomic load).
func After(site uint32) {
	if armedAfter.Load() == 0 {
		return
	}
	afterSlow(site)
}

//go:noinline
func afterSlow(site uint32) {
	if !disarmAfter(goroutine()) {
		return
	}
	c := client.Load()
	if c == nil {
		return
	}
	req := wire.Request{Site: site, Goroutine: goroutine(), After: true}
	if resp, ok := c.roundTrip(&req); ok && resp.Action == wire.ActCrash {
		c.awaitKill()
	}
}

// sleep waits d, or until ctx is done when there is one.
func sleep(d time.Duration, ctx Done) {
	if ctx == nil {
		time.Sleep(d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// hold is a delay held until a condition (wire.ActHold): it waits while
// the current plan lists request id (wire.Plan.Holding), at most d, or
// until ctx is done when there is one. The controller wakes it with a
// plan that no longer lists id. No wake is missed: the plan that listed id
// came before the response (the controller queues a plan ahead of its
// response), and the loop takes the channel of the next plan before it
// looks at the current one, which setPlan stores before closing that
// channel. A plan that still lists id (one pushed for another reason)
// wakes the loop only to sleep again. A lost connection installs the
// empty plan, which ends the hold.
func hold(id uint64, d time.Duration, ctx Done) {
	t := time.NewTimer(d)
	defer t.Stop()
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	for {
		changed := planChanged()
		if !slices.Contains(current.Load().holding, id) {
			return
		}
		select {
		case <-t.C:
			return
		case <-done:
			return
		case <-changed:
		}
	}
}

// ask sends the request of a live site and returns the controller's
// answer (ActNone when there is none) and the connection that gave it.
// A stall is waited out here.
func ask(site uint32, p *plan, peer string, dial bool) (wire.Response, *conn) {
	return askFrom(site, p, peer, dial, "")
}

// askFrom is ask for a call made by the member whose address is from
// (Send), when that member announced it; "" or an unknown address: the
// goroutine's member.
func askFrom(site uint32, p *plan, peer string, dial bool, from string) (wire.Response, *conn) {
	c := client.Load()
	if c == nil || inSetup() {
		return wire.Response{}, nil
	}
	req := wire.Request{Site: site, Goroutine: goroutine(), Peer: peer}
	if !dial && p.flags&wire.FlagPeers != 0 {
		req.Peer = peerOf(req.Goroutine)
	}
	if p.flags&wire.FlagStates != 0 {
		if s, ok := lookupState(req.Goroutine); ok {
			req.Task, req.Inst, req.State = s.task, uint64(s.inst), s.state
		}
	}
	if role.known.Load() {
		req.HasRole, req.Role = true, role.value.Load()
	}
	if p.flags&wire.FlagMembers != 0 {
		v, seq := memberOf(req.Goroutine)
		if from != "" {
			if fs := memberAt(from); fs != 0 {
				v, seq = valueOf(fs), fs
			}
		}
		if seq != 0 {
			// The member's own role, not the last one any member wrote.
			req.Member, req.MemberSeq = v, seq
			req.Role, req.HasRole = roleOfMember(seq)
		}
		if req.Peer != "" {
			req.PeerSeq = memberAt(req.Peer)
		}
		req.Ranked = ranked.Load()
	}
	if p.flags&wire.FlagStacks != 0 {
		req.Stack = callers()
	}
	resp, ok := c.roundTrip(&req)
	for n := 0; ok && resp.Action == wire.ActStall && n < maxStalls; n++ {
		// Cut off from the peers: wait for the heal (a new plan) or Arg.
		// The plan that started the cut came before the answer, so the
		// next plan is a later one; one that slips in between the answer
		// and planChanged costs at most Arg.
		stall(time.Duration(resp.Arg), planChanged())
		p = current.Load()
		if w := site / 64; w >= uint32(len(p.bits)) || p.bits[w]&(1<<(site%64)) == 0 {
			return wire.Response{}, c // healed: the site is no longer live
		}
		resp, ok = c.roundTrip(&req)
	}
	if !ok || resp.Action == wire.ActStall {
		return wire.Response{}, c
	}
	return resp, c
}

// State records that the calling goroutine, running instance inst of task
// unit task, entered abstract state state. Changes are reported to the
// controller in batches; a decision carries the goroutine's current state.
func State(task, state uint32, inst uintptr) {
	if current.Load().flags&wire.FlagStates == 0 {
		return
	}
	recordState(task, state, inst)
}

// role is the process's current role: the last value written to the
// catalog's role field (catalog.Role), known once a write was reported.
var role struct {
	value atomic.Int64
	known atomic.Bool
}

// Role records that the process's role field was just set to v (a
// constant of the role type, e.g. etcd raft's StateLeader). Every later
// decision request carries it, and a change is reported to the controller
// as an event. Role writes are rare (elections), so this costs nothing on
// the hot paths. When the plan tags members (wire.FlagMembers) and the
// calling goroutine runs a member's method, the role is that member's:
// its requests carry it, and the event names the member's rank (B).
func Role(v int64) {
	if current.Load().flags&wire.FlagMembers != 0 {
		if _, seq := memberOf(goroutine()); seq != 0 {
			if c := client.Load(); memberRole(seq, v) && c != nil {
				c.event(wire.Event{Kind: wire.EvRole, Time: time.Now().UnixNano(), A: uint64(v), B: uint64(seq)})
			}
			return
		}
	}
	if role.known.Load() && role.value.Load() == v {
		return
	}
	role.value.Store(v)
	role.known.Store(true)
	if c := client.Load(); c != nil {
		c.event(wire.Event{Kind: wire.EvRole, Time: time.Now().UnixNano(), A: uint64(v)})
	}
}

// Timeout reports that site uses timeout d and returns d, so it can wrap the
// expression that computes a timeout. Each distinct value is reported once.
func Timeout(site uint32, d time.Duration) time.Duration {
	if current.Load().flags&wire.FlagTimeouts != 0 {
		recordTimeout(site, d)
	}
	return d
}

// gstate is the abstract state a goroutine last entered.
type gstate struct {
	task, state uint32
	inst        uintptr
}

// states is the state each goroutine last entered.
var states = newGTable[gstate](64)

func recordState(task, state uint32, inst uintptr) {
	g := goroutine()
	if !states.set(g, gstate{task: task, state: state, inst: inst}) {
		return
	}
	if c := client.Load(); c != nil {
		c.event(wire.Event{Kind: wire.EvState, Time: time.Now().UnixNano(),
			A: uint64(task), B: uint64(state), C: uint64(inst), D: g})
	}
}

func resetStates() { states.reset() }

func lookupState(g uint64) (gstate, bool) { return states.get(g) }

var timeouts struct {
	mu   sync.Mutex
	seen map[[2]uint64]struct{}
}

func recordTimeout(site uint32, d time.Duration) {
	k := [2]uint64{uint64(site), uint64(d)}
	timeouts.mu.Lock()
	if _, ok := timeouts.seen[k]; ok || len(timeouts.seen) >= 1<<14 {
		timeouts.mu.Unlock()
		return
	}
	if timeouts.seen == nil {
		timeouts.seen = make(map[[2]uint64]struct{})
	}
	timeouts.seen[k] = struct{}{}
	timeouts.mu.Unlock()
	if c := client.Load(); c != nil {
		c.event(wire.Event{Kind: wire.EvTimeout, Time: time.Now().UnixNano(), A: uint64(site), B: uint64(d)})
	}
}

// hookFuncs are the agent's own frames at the top of a hook's stack.
var hookFuncs = map[string]bool{
	"github.com/gofault/gofault/agent.callers":  true,
	"github.com/gofault/gofault/agent.decide":   true,
	"github.com/gofault/gofault/agent.Fault":    true,
	"github.com/gofault/gofault/agent.Dial":     true,
	"github.com/gofault/gofault/agent.Accept":   true,
	"github.com/gofault/gofault/agent.ask":      true,
	"github.com/gofault/gofault/agent.Disk":     true,
	"github.com/gofault/gofault/agent.FaultCtx": true,
	"github.com/gofault/gofault/agent.DialCtx":  true,
	"github.com/gofault/gofault/agent.Send":     true,
	"github.com/gofault/gofault/agent.sendSlow": true,
	"github.com/gofault/gofault/agent.askFrom":  true,
}

// callers returns the stack of the goroutine in a hook, from the hook's
// caller down.
func callers() []wire.Frame {
	var pcs [64]uintptr
	n := runtime.Callers(1, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	out := make([]wire.Frame, 0, n)
	top := true
	for {
		f, more := frames.Next()
		if top && hookFuncs[f.Function] {
			if !more {
				return out
			}
			continue
		}
		top = false
		if f.Function != "runtime.goexit" {
			out = append(out, wire.Frame{Func: f.Function, File: f.File, Line: uint32(f.Line)})
		}
		if !more {
			return out
		}
	}
}
