// Package policy holds gofault's injection policies: small deterministic
// decision makers that, given a catalog of fault sites, say before each trial
// which sites are live and, for every request from a live site, whether to
// inject a fault and which.
//
// A Policy sees only plain data (Request, TrialInfo, Outcome), so a policy is
// tested by replaying synthetic request streams, with no cluster. Given the
// same seed and the same sequence of calls, a policy makes the same
// decisions.
//
// Every trial should inject: a trial without a fault is wasted. Policies
// size their probabilities from the request counts almost every trial
// reaches, bsrr re-focuses a trial whose focused state is late, and the
// policies that grant each fault identity once widen the identity (node,
// abstract state, delay round) when the trials reach nothing untried, and
// report exhaustion (Finite) rather than run fault-free trials. Each
// deviation from a published algorithm is documented on the policy and in
// docs/policies.md. Per-trial state is kept per trial index, so parallel
// trials do not share a quota.
package policy

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// Fault is one fault to inject.
type Fault struct {
	Kind catalog.Kind // one kind, or KindNone
	// Error is the 1-based index into the site's catalog.Site.Errors.
	Error int
	// Delay is the length of a Delay fault, or how long a Partition
	// fault cuts the node off (a Disconnect fault the pair apart) before
	// it heals.
	Delay time.Duration
}

// Key is a short stable text form of the fault, e.g. "error:2", "delay:1.5s".
func (f Fault) Key() string {
	switch f.Kind {
	case catalog.KindError:
		return fmt.Sprintf("error:%d", f.Error)
	case catalog.KindDelay:
		return "delay:" + f.Delay.String()
	case catalog.KindPartition:
		return "partition:" + f.Delay.String()
	case catalog.KindDisconnect:
		return "disconnect:" + f.Delay.String()
	}
	return f.Kind.String()
}

// Request is one injection request from a live site.
type Request struct {
	Trial int    // trial index within the campaign
	Seq   int    // request number within the trial, from 0
	Node  string // node that asks
	Site  *catalog.Site
	// Stack is the caller's stack when the plan asked for stacks.
	Stack []record.Frame
	// Occurrence counts the requests at Site from Node in this trial, this
	// one included.
	Occurrence int
	// Task, Inst and State are the goroutine's abstract state (0 if none).
	Task  uint32
	Inst  uint64
	State uint32
	// Role is the node's role, the name of the catalog's role constant
	// (e.g. "StateLeader"); "" when unknown (no role in the catalog, or
	// none written yet).
	Role string
	// Peer is, at a peer-network site, the member the call talks to: the
	// one a dial goes to, or the one the calling goroutine last dialled;
	// "" when unknown. A disconnect fault cuts Node and Peer apart.
	Peer string
}

// Decision answers a Request.
type Decision struct {
	Fault Fault
	// Done tells the controller that the policy will grant nothing more in
	// this trial, so it can make every site non-live and spare the agents
	// their round trips.
	Done bool
	// Last, with a fault, says that it is the last fault the policy grants
	// in this trial although it keeps counting requests (Done implies it):
	// the runner may end the trial's workload once the cluster has served
	// again after it (workload.adaptive_end).
	Last bool
}

// Plan says which sites are live in a trial.
type Plan struct {
	// Sites are the live site indices, ascending.
	Sites []uint32
	// Nodes restricts the plan to these nodes; empty means every node.
	Nodes []string
	// States asks the agents to track abstract states; Stacks to send the
	// call stack with every request; Timeouts to report timeout values.
	States, Stacks, Timeouts bool
	// Observe asks the agents to report peer messages at the observation
	// points (see Observer).
	Observe bool
}

// LiveOn reports whether the plan's sites are live on node.
func (p *Plan) LiveOn(node string) bool {
	if len(p.Nodes) == 0 {
		return true
	}
	for _, n := range p.Nodes {
		if n == node {
			return true
		}
	}
	return false
}

// TrialInfo describes a trial about to start.
type TrialInfo struct {
	Index int
	Nodes []string
}

// Outcome summarises a finished trial for the policy.
type Outcome struct {
	Index      int
	Requests   int
	Injections []record.Injection
	// Timeouts are the timeout values the trial's nodes reported.
	Timeouts []record.Timeout
	// Failed is set when a checker failed the trial.
	Failed bool
	// NewBlocks counts the coverage blocks the trial covered that no
	// earlier trial of the campaign had (0 without coverage counters).
	NewBlocks int
}

// Policy decides injections. The controller serialises all calls.
type Policy interface {
	// Name is the policy's registered name.
	Name() string
	// Begin is called before trial info.Index starts and returns its plan.
	Begin(info TrialInfo) Plan
	// Decide answers one request of the current trial.
	Decide(req *Request) Decision
	// End is called when the trial ends.
	End(out Outcome)
}

// Stateful is implemented by policies whose memory across trials must
// survive a campaign's stop and resume.
type Stateful interface {
	Snapshot() ([]byte, error)
	Restore(data []byte) error
}

// Finite is implemented by policies that can run out of things to try.
type Finite interface {
	// Exhausted reports that no trial would inject anything new.
	Exhausted() bool
}

// Env is what a policy is built from.
type Env struct {
	Catalog *catalog.Catalog
	Seed    int64
	// Kinds are the fault kinds the campaign allows; empty means all but
	// KindPowerLoss, KindReboot and KindDisconnect, which are only
	// injected where listed.
	Kinds []catalog.Kind
	// PerTrial is the number of injections per trial (default 1).
	PerTrial int
	// Budget is bsrr's per-state budget (default 5).
	Budget int
	// MaxPerTrial bounds the faults of one trial's sequence (fuzz; default
	// 3).
	MaxPerTrial int
	// Key is the injection key of the Legolas policies (KeyState by
	// default; see KeyNames).
	Key string
	// Delay is the length of injected delays (default 2s).
	Delay time.Duration
	// Partition is how long a partition lasts (default 3s).
	Partition time.Duration
	// TargetErrors allows error faults at sites whose errors the target
	// creates itself (catalog.Site.IO == ""); by default only errors of
	// I/O are injected.
	TargetErrors bool
}

func (e *Env) allows(k catalog.Kind) bool {
	if len(e.Kinds) == 0 {
		return k != catalog.KindPowerLoss && k != catalog.KindReboot && k != catalog.KindDisconnect
	}
	for _, a := range e.Kinds {
		if a == k {
			return true
		}
	}
	return false
}

func (e *Env) perTrial() int {
	if e.PerTrial <= 0 {
		return 1
	}
	return e.PerTrial
}

func (e *Env) delay() time.Duration {
	if e.Delay <= 0 {
		return 2 * time.Second
	}
	return e.Delay
}

func (e *Env) partition() time.Duration {
	if e.Partition <= 0 {
		return 3 * time.Second
	}
	return e.Partition
}

// faults returns every fault the environment allows at site s, in a fixed
// order: each error variant, then a delay, then a crash, then a power
// loss (at a disk call that can crash: where the node's unsynced writes
// are in flight; at a network call it would be a crash that costs a
// rollback), then a partition of the node and a disconnect of the node
// from the call's peer (at the peer-network calls, catalog.Site.Peer, the
// moments a partition can start; an accepted call's peer is unknown).
func (e *Env) faults(s *catalog.Site) []Fault {
	var fs []Fault
	if s.Kind.Has(catalog.KindError) && e.allows(catalog.KindError) && (s.IO != "" || e.TargetErrors) {
		for i := range s.Errors {
			fs = append(fs, Fault{Kind: catalog.KindError, Error: i + 1})
		}
	}
	if s.Kind.Has(catalog.KindDelay) && e.allows(catalog.KindDelay) {
		fs = append(fs, Fault{Kind: catalog.KindDelay, Delay: e.delay()})
	}
	if s.Kind.Has(catalog.KindCrash) && e.allows(catalog.KindCrash) {
		fs = append(fs, Fault{Kind: catalog.KindCrash})
	}
	if s.Kind.Has(catalog.KindCrash) && s.IO == "disk" && e.allows(catalog.KindPowerLoss) {
		fs = append(fs, Fault{Kind: catalog.KindPowerLoss})
	}
	if s.Kind.Has(catalog.KindCrash) && e.allows(catalog.KindReboot) {
		fs = append(fs, Fault{Kind: catalog.KindReboot})
	}
	if s.Kind.Has(catalog.KindPartition) && e.allows(catalog.KindPartition) {
		fs = append(fs, Fault{Kind: catalog.KindPartition, Delay: e.partition()})
	}
	if s.Kind.Has(catalog.KindPartition) && s.Peer != catalog.PeerAccept && e.allows(catalog.KindDisconnect) {
		fs = append(fs, Fault{Kind: catalog.KindDisconnect, Delay: e.partition()})
	}
	return fs
}

// faultsAt returns the faults the environment allows at req's site for
// this request: faults(req.Site) without a disconnect when the call's
// peer is unknown (an accepted connection, a goroutine that dialled no
// member).
func (e *Env) faultsAt(req *Request) []Fault {
	fs := e.faults(req.Site)
	if req.Peer != "" && req.Peer != req.Node {
		return fs
	}
	return slices.DeleteFunc(fs, func(f Fault) bool { return f.Kind == catalog.KindDisconnect })
}

// candidateSites returns the sites that can take at least one allowed fault.
func (e *Env) candidateSites() []uint32 {
	if e.Catalog == nil {
		return nil
	}
	var out []uint32
	for i := range e.Catalog.Sites {
		if len(e.faults(&e.Catalog.Sites[i])) > 0 {
			out = append(out, uint32(i))
		}
	}
	return out
}

// Constructor builds a policy.
type Constructor func(env Env) (Policy, error)

var registry = map[string]Constructor{}

// Register adds a policy constructor under name.
func Register(name string, c Constructor) { registry[name] = c }

// Names returns the registered policy names, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the policy registered under name.
func New(name string, env Env) (Policy, error) {
	c, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return c(env)
}

// injectProbability is Legolas's p = 1 − e^(ln 0.01/(c+1)) for a state or
// site seen c times: the chance that none of c requests is granted is about
// 1%, and the grant falls neither too early nor too late.
func injectProbability(c int) float64 {
	return 1 - math.Exp(math.Log(0.01)/float64(c+1))
}

// StackKey hashes a stack into a short stable key (functions only, no
// lines, so it survives edits that move code).
func StackKey(stack []record.Frame) string {
	h := fnv.New64a()
	for _, f := range stack {
		h.Write([]byte(f.Func))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}
