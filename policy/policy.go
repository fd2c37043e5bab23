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
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
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
	// Delay is the length of a Delay fault, or how long a cut lasts
	// before it heals (catalog.Kind.Cuts: a Partition or LeaderCut fault
	// cuts the node off, a Disconnect fault the pair apart, a OneWay
	// fault the node from the call's peer, a Split fault the node's side
	// from the other).
	Delay time.Duration
	// Side is, for a Split fault, the other members on the node's side
	// (the minority); nil: the node alone.
	Side []string
	// Until is, for a cut held until a condition (a Partition,
	// LeaderCut, Disconnect, OneWay or Split fault; config
	// faults.partition.hold) or a delay held until one (a Delay fault:
	// the call sleeps until it; config faults.delay_hold), the condition
	// ("leader", "requests=K", "site=S" or "behind=N"); Delay is then
	// its cap. "" for a cut or delay of fixed length.
	Until string
	// Timer says, for a Pause or Stop fault, how its length (Delay) was
	// chosen from the target's timers, e.g. "2 × election"; "" when no
	// timer was given (faults.delay). Not part of Key.
	Timer string
	// Pick chooses, for a Corrupt fault, the bit or sector changed and,
	// for a Torn fault, where the write is cut (agent.CorruptBytes,
	// agent.TornLength). Drawn from the policy's seed; not part of Key.
	Pick uint64
}

// PickText is how an injection record's Error holds a disk fault's pick.
func PickText(pick uint64) string { return fmt.Sprintf("pick %#x", pick) }

// ParsePick reads the pick back from an injection record's Error.
func ParsePick(s string) (uint64, bool) {
	var p uint64
	if _, err := fmt.Sscanf(s, "pick %v", &p); err != nil {
		return 0, false
	}
	return p, true
}

// Key is a short stable text form of the fault, e.g. "error:2", "delay:1.5s".
func (f Fault) Key() string {
	switch f.Kind {
	case catalog.KindError:
		return fmt.Sprintf("error:%d", f.Error)
	case catalog.KindDelay, catalog.KindPartition, catalog.KindLeaderCut, catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit:
		if f.Until != "" {
			return f.Kind.String() + ":until=" + f.Until + ":" + f.Delay.String()
		}
		return f.Kind.String() + ":" + f.Delay.String()
	case catalog.KindPause, catalog.KindStop:
		return f.Kind.String() + ":" + f.Delay.String()
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
	// Process is the node's process number in the trial: 1 for the
	// process it started with, 2 after its first restart (a crash, power
	// loss or reboot), …; 0 when unknown.
	Process int
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
	// "" when unknown. A disconnect fault cuts Node and Peer apart, a
	// one-way cut Node from Peer, a split Node's side from Peer's.
	Peer string
	// Members are the trial's members (controller.TrialSpec.Nodes), from
	// which a split's side is chosen; nil when unknown.
	Members []string
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

// Within returns the plan with only the live sites that reach also
// holds (ascending, as Sites): a trial whose workload is known to reach
// only some sites (a gofault test trial runs one test, whose sites the
// fault-free pass measured) spends no decision on the others.
func (p Plan) Within(reach []uint32) Plan {
	in := make(map[uint32]bool, len(reach))
	for _, s := range reach {
		in[s] = true
	}
	p.Sites = slices.DeleteFunc(slices.Clone(p.Sites), func(s uint32) bool { return !in[s] })
	return p
}

// TrialInfo describes a trial about to start.
type TrialInfo struct {
	Index int
	Nodes []string
	// Reach, when not nil, are the sites the trial's workload reached
	// fault-free (a gofault test trial's test): the controller makes
	// only those of the plan live (Plan.Within). Nil: not known, the
	// plan stands.
	Reach []uint32
	// Expected, when above 0, is how many requests the trial's workload
	// made fault-free at its live sites (a gofault test trial's test, in
	// its leanest measured run): a policy that sizes its odds on a
	// trial's requests takes it over what earlier trials (other tests,
	// of other sizes) made.
	Expected int
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
	// Checkers are the checkers whose verdicts failed the trial, in
	// verdict order; Notes those that passed it with an informational
	// verdict (record.Verdict.Informational: a corruption the node
	// detected, a symptom the profile excuses).
	Checkers, Notes []string
	// Reached counts the trial's requests by site, role and state
	// (record.Trial.Reached).
	Reached []record.Reach
}

// OutcomeOf is the outcome of judged trial tr as a policy learns it.
func OutcomeOf(tr *record.Trial) Outcome {
	out := Outcome{Index: tr.Index, Requests: tr.Requests, Injections: tr.Injections, Timeouts: tr.Timeouts,
		Failed: tr.Status == record.StatusFailed, NewBlocks: tr.NewBlocks, Reached: tr.Reached}
	for i := range tr.Verdicts {
		switch v := &tr.Verdicts[i]; {
		case v.Failed:
			out.Checkers = append(out.Checkers, v.Checker)
		case v.Informational():
			out.Notes = append(out.Notes, v.Checker)
		}
	}
	return out
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

// Explainer is implemented by policies that can say, for a trial they
// began, what they chose for it and why (portfolio: the technique it
// handed the trial to; fuzz: the sequence it mutated), so that the trial's
// record (record.Trial.Choice, Why) and the report tell the user.
type Explainer interface {
	// Explain returns the choice for trial index, begun and not yet
	// ended (the zero Choice for another trial). It is called just
	// before End, serialised with the other calls.
	Explain(index int) Choice
}

// Choice is what a policy chose for one trial and why.
type Choice struct {
	// Technique names the technique the trial went to, e.g. "fuzz".
	Technique string
	// Why says why, in words for the user: the evidence that chose the
	// technique and what the technique did.
	Why string
}

// Env is what a policy is built from.
type Env struct {
	Catalog *catalog.Catalog
	Seed    int64
	// Kinds are the fault kinds the campaign allows; empty means all but
	// KindPowerLoss, KindPowerLossAfter, KindReboot, KindDisconnect, KindOneWay, KindSplit,
	// KindLeaderCut, KindCorrupt, KindTorn, KindPause, KindStop and KindRot, which
	// are only injected where listed.
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
	// Holds are the conditions a cut (a partition, leader cut,
	// disconnect, one-way cut or split) may be held until (config
	// faults.partition.hold: "leader", "requests=K", "site=S",
	// "behind=N"), each a variant beside the cut of fixed length, lasting
	// HoldCap at most (default 15s). A "leader" hold needs the catalog's
	// leader role, a "behind=N" hold an observation point that observes
	// a commit index (catalog.Catalog.ObservesCommit).
	Holds   []string
	HoldCap time.Duration
	// DelayHolds are the conditions a delay may be held until (config
	// faults.delay_hold, the same conditions as Holds: the delayed member
	// is the cut one), each a variant beside the delay of fixed length,
	// lasting DelayHoldCap at most (default 15s).
	DelayHolds   []string
	DelayHoldCap time.Duration
	// Timers are the target's own timers by name (config faults.timers,
	// e.g. election: 1s): a pause or a stop lasts half of, as long as, or
	// twice one of them (holds). Empty: Delay.
	Timers map[string]time.Duration
	// LeaderAt limits where a leader cut starts to the sites whose ID
	// contains one of these strings (config faults.partition.leader_at);
	// empty: any site.
	LeaderAt []string
	// TargetErrors allows error faults at sites whose errors the target
	// creates itself (catalog.Site.IO == ""); by default only errors of
	// I/O are injected.
	TargetErrors bool
	// Files limits the disk faults (KindCorrupt, KindTorn, KindRot) to the sites
	// of files of these roles (catalog.Site.FileRole); empty: every role.
	Files []string
	// Roles limits every fault to the requests of members in these roles
	// (Request.Role, names of the catalog's role values); empty: any.
	Roles []string
	// Nodes limits every fault to the requests of these members
	// (Request.Node); empty: any.
	Nodes []string
	// Memory is what earlier campaigns of the same target and release
	// line learned per fault (config policy.memory); nil or empty: none.
	// random (alone and as the portfolio's arm) and spread prefer the
	// faults they tried least without a symptom.
	Memory *Memory
}

// optIn are the kinds a campaign gets only where it lists them.
const optIn = catalog.KindPowerLoss | catalog.KindReboot | catalog.KindDisconnect | catalog.KindOneWay | catalog.KindSplit | catalog.KindLeaderCut | catalog.KindCorrupt | catalog.KindTorn | catalog.KindPowerLossAfter | catalog.KindPause | catalog.KindStop | catalog.KindRot

func (e *Env) allows(k catalog.Kind) bool {
	if len(e.Kinds) == 0 {
		return k&optIn == 0
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

// held are the held variants of a cut or delay of kind k: one per
// condition of Holds (a cut) or DelayHolds (a delay), capped at HoldCap
// or DelayHoldCap; none for "leader" without the catalog's leader role,
// nor for "behind=N" where no observation point observes a commit index.
func (e *Env) held(k catalog.Kind) []Fault {
	holds, capped := e.Holds, e.HoldCap
	if k == catalog.KindDelay {
		holds, capped = e.DelayHolds, e.DelayHoldCap
	}
	var fs []Fault
	for _, u := range holds {
		if u == "leader" && !e.hasLeader() || strings.HasPrefix(u, "behind=") && !e.observesCommit() {
			continue
		}
		fs = append(fs, Fault{Kind: k, Delay: cmp.Or(capped, 15*time.Second), Until: u})
	}
	return fs
}

// observesCommit reports whether the catalog observes a commit index,
// which a "behind=N" hold is measured by.
func (e *Env) observesCommit() bool {
	return e.Catalog != nil && e.Catalog.ObservesCommit()
}

// hasLeader reports whether the catalog names a leader role.
func (e *Env) hasLeader() bool {
	if e.Catalog == nil {
		return false
	}
	_, ok := e.Catalog.Role.Leader()
	return ok
}

// hold is one length a pause or stop lasts, and how it was chosen.
type hold struct {
	d     time.Duration
	timer string // "2 × election"; "" for the default delay
}

// holdFactors are the multiples of a timer a pause or stop lasts: shorter
// than it, around it, longer than it.
var holdFactors = []struct {
	num, den int
	name     string
}{{1, 2, "½"}, {1, 1, "1"}, {2, 1, "2"}}

// holds are the lengths of a pause or stop: each timer of Timers (by
// name) times each of holdFactors, or the delay when there is no timer.
func (e *Env) holds() []hold {
	if len(e.Timers) == 0 {
		return []hold{{d: e.delay()}}
	}
	var hs []hold
	for _, name := range slices.Sorted(maps.Keys(e.Timers)) {
		for _, f := range holdFactors {
			hs = append(hs, hold{d: e.Timers[name] * time.Duration(f.num) / time.Duration(f.den), timer: f.name + " × " + name})
		}
	}
	return hs
}

// faults returns every fault the environment allows at site s, in a fixed
// order: each error variant, then a delay and its held variants
// (DelayHolds), then a crash, then a crash right after the call returned
// (at a disk call whose return is hooked, catalog.KindCrashAfter), then a
// power loss (at a disk call that can crash: where the node's unsynced
// writes are in flight; at a network call it would be a crash that costs a
// rollback) and one after the call, then a reboot, then a pause and a stop
// of the node for each of its lengths (holds), at a site that can crash,
// then a partition of the node, a disconnect of the node from the call's
// peer, a one-way cut of the node from it and a split between their sides
// (at the peer-network calls, catalog.Site.Peer, the moments a partition
// can start; an accepted call's peer is unknown), then a leader cut (at
// any site: faultsAt keeps it where the node leads), then a corruption of
// a read's bytes or a torn write, at the file reads and writes whose bytes
// the hook reaches (the site's kinds say so).
func (e *Env) faults(s *catalog.Site) []Fault {
	var fs []Fault
	if s.Kind.Has(catalog.KindError) && e.allows(catalog.KindError) && (s.IO != "" || e.TargetErrors) {
		for i := range s.Errors {
			fs = append(fs, Fault{Kind: catalog.KindError, Error: i + 1})
		}
	}
	if s.Kind.Has(catalog.KindDelay) && e.allows(catalog.KindDelay) {
		fs = append(fs, Fault{Kind: catalog.KindDelay, Delay: e.delay()})
		fs = append(fs, e.held(catalog.KindDelay)...)
	}
	if s.Kind.Has(catalog.KindCrash) && e.allows(catalog.KindCrash) {
		fs = append(fs, Fault{Kind: catalog.KindCrash})
	}
	if s.Kind.Has(catalog.KindCrashAfter) && e.allows(catalog.KindCrashAfter) {
		fs = append(fs, Fault{Kind: catalog.KindCrashAfter})
	}
	if s.Kind.Has(catalog.KindCrash) && s.IO == "disk" && e.allows(catalog.KindPowerLoss) {
		fs = append(fs, Fault{Kind: catalog.KindPowerLoss})
	}
	if s.Kind.Has(catalog.KindCrashAfter) && e.allows(catalog.KindPowerLossAfter) {
		fs = append(fs, Fault{Kind: catalog.KindPowerLossAfter})
	}
	if s.Kind.Has(catalog.KindCrash) && e.allows(catalog.KindReboot) {
		fs = append(fs, Fault{Kind: catalog.KindReboot})
	}
	for _, k := range []catalog.Kind{catalog.KindPause, catalog.KindStop} {
		if s.Kind.Has(catalog.KindCrash) && e.allows(k) {
			for _, h := range e.holds() {
				fs = append(fs, Fault{Kind: k, Delay: h.d, Timer: h.timer})
			}
		}
	}
	if s.Kind.Has(catalog.KindPartition) && e.allows(catalog.KindPartition) {
		fs = append(fs, Fault{Kind: catalog.KindPartition, Delay: e.partition()})
		fs = append(fs, e.held(catalog.KindPartition)...)
	}
	for _, k := range []catalog.Kind{catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit} {
		if s.Kind.Has(catalog.KindPartition) && s.Peer != catalog.PeerAccept && e.allows(k) {
			fs = append(fs, Fault{Kind: k, Delay: e.partition()})
			fs = append(fs, e.held(k)...)
		}
	}
	if s.Kind != catalog.KindNone && e.allows(catalog.KindLeaderCut) && e.leaderAt(s) {
		fs = append(fs, Fault{Kind: catalog.KindLeaderCut, Delay: e.partition()})
		fs = append(fs, e.held(catalog.KindLeaderCut)...)
	}
	for _, k := range []catalog.Kind{catalog.KindCorrupt, catalog.KindTorn, catalog.KindRot} {
		if s.Kind.Has(k.SiteKind()) && e.allows(k) && (len(e.Files) == 0 || slices.Contains(e.Files, s.FileRole)) {
			fs = append(fs, Fault{Kind: k})
		}
	}
	return fs
}

// faultsAt returns the faults the environment allows at req's site for
// this request: faults(req.Site) without a disconnect, one-way cut or
// split when the call's peer is unknown (an accepted connection, a
// goroutine that dialled no member), without a split when the trial's
// members are unknown, and without a leader cut unless the node leads
// (req.Role is the catalog's leader, catalog.Role.Leader). A split's side
// is chosen here (splitSide), and a disk fault's pick, drawn from the
// seed, the trial and the request (pickFor).
func (e *Env) faultsAt(req *Request) []Fault {
	if len(e.Roles) > 0 && !slices.Contains(e.Roles, req.Role) {
		return nil // a member of another role (Roles)
	}
	if len(e.Nodes) > 0 && !slices.Contains(e.Nodes, req.Node) {
		return nil // another member (Nodes)
	}
	fs := e.faults(req.Site)
	for i := range fs {
		if fs[i].Kind == catalog.KindCorrupt || fs[i].Kind == catalog.KindTorn || fs[i].Kind == catalog.KindRot {
			fs[i].Pick = pickFor(e.Seed, req)
		}
	}
	peer := req.Peer != "" && req.Peer != req.Node
	split := peer && slices.Contains(req.Members, req.Peer) && slices.Contains(req.Members, req.Node)
	var leads bool
	if e.Catalog != nil {
		leader, ok := e.Catalog.Role.Leader()
		leads = ok && req.Role == leader
	}
	for i := range fs {
		if fs[i].Kind == catalog.KindSplit && split {
			fs[i].Side = e.splitSide(req)
		}
	}
	return slices.DeleteFunc(fs, func(f Fault) bool {
		switch f.Kind {
		case catalog.KindDisconnect, catalog.KindOneWay:
			return !peer
		case catalog.KindSplit:
			return !split
		case catalog.KindLeaderCut:
			return !leads
		}
		return false
	})
}

// fitted returns f made to fit req — a split without a side gets the side
// faultsAt would choose — and whether f can start at req at all: a cut
// that needs the call's peer, the trial's members or the node to lead
// (faultsAt) waits for a request that has them. A policy that placed f
// before it saw req (fuzz's mutations) asks this before granting it.
func (e *Env) fitted(req *Request, f Fault) (Fault, bool) {
	switch f.Kind {
	case catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit, catalog.KindLeaderCut:
	default:
		return f, true
	}
	for _, g := range e.faultsAt(req) {
		if g.Kind == f.Kind {
			if f.Kind == catalog.KindSplit && f.Side == nil {
				f.Side = g.Side
			}
			return f, true
		}
	}
	return f, false
}

// splitSide chooses the other members on req.Node's side of a split at
// req: ⌊(n−1)/2⌋−1 of the n members (at least none), never the call's
// peer, so that the node's side is a minority (the node alone of three,
// with one other of five) and the call is the first one cut. The choice
// is pseudo-random but fixed by the campaign's seed, the trial, the node,
// the site and the occurrence, so that a policy that asks again at the
// same request gets the same side.
func (e *Env) splitSide(req *Request) []string {
	k := (len(req.Members)-1)/2 - 1
	var pool []string
	for _, m := range req.Members {
		if m != req.Node && m != req.Peer {
			pool = append(pool, m)
		}
	}
	if k <= 0 || len(pool) == 0 {
		return nil
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d\x00%d", req.Trial, req.Node, req.Site.Index, req.Occurrence)
	rng := rand.New(rand.NewPCG(uint64(e.Seed), h.Sum64()))
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	side := pool[:min(k, len(pool))]
	slices.Sort(side)
	return side
}

// leaderAt reports whether a leader cut may start at site s (LeaderAt).
func (e *Env) leaderAt(s *catalog.Site) bool {
	return len(e.LeaderAt) == 0 || slices.ContainsFunc(e.LeaderAt, func(p string) bool { return strings.Contains(s.ID, p) })
}

// check refuses an environment a policy cannot carry out: a leader cut
// where the catalog names no leader, or at chosen moments no site of the
// catalog matches.
func (e *Env) check() error {
	if !slices.Contains(e.Kinds, catalog.KindLeaderCut) {
		return nil
	}
	if e.Catalog != nil {
		for _, p := range e.LeaderAt {
			if !slices.ContainsFunc(e.Catalog.Sites, func(s catalog.Site) bool { return strings.Contains(s.ID, p) }) {
				return fmt.Errorf("faults.partition.leader_at: no fault site's ID contains %q (gofault analyze --sites lists them)", p)
			}
		}
	}
	var role *catalog.Role
	if e.Catalog != nil {
		role = e.Catalog.Role
	}
	if _, ok := role.Leader(); ok {
		return nil
	}
	if role == nil {
		return errors.New("faults.kinds lists leadercut, but the analysis found no role field in the target (catalog.Role: a struct field of a named integer type with leader and follower constants, written after construction; a role set once at start is not tracked), so gofault cannot tell which member leads; drop leadercut, or use partition")
	}
	var names []string
	for _, v := range role.Values {
		names = append(names, v.Name)
	}
	return fmt.Errorf("faults.kinds lists leadercut, but the role field %s has no single leader value (its constants: %s; one name must end in \"leader\"), so gofault cannot tell which member leads; drop leadercut, or use partition", role, strings.Join(names, ", "))
}

// pickFor is the pick of a disk fault at req: a hash of the campaign's
// seed, the trial, the node, the site and the occurrence, so that every
// policy draws it from its seed alone and a trial run again with the same
// seed changes the same bits.
func pickFor(seed int64, req *Request) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%d|%s|%d|%d", seed, req.Trial, req.Node, req.Site.Index, req.Occurrence)
	return h.Sum64()
}

// candidateSites returns the sites that can take at least one allowed fault.
// CandidateSites returns the indices of the catalog's sites at which the
// environment allows some fault (the sites random, exhaustive and fate
// make live): gofault test measures which of them each test reaches.
func (e *Env) CandidateSites() []uint32 { return e.candidateSites() }

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
	if err := env.check(); err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	return c(env)
}

// injectProbability is Legolas's p = 1 − e^(ln 0.01/(c+1)) for a state or
// site seen c times: the chance that none of c requests is granted is about
// 1%, and the grant falls neither too early nor too late.
func injectProbability(c int) float64 {
	return injectProbabilityMissing(c, 0.01)
}

// injectProbabilityMissing is the grant probability at which none of c+1
// requests is granted with probability miss.
func injectProbabilityMissing(c int, miss float64) float64 {
	return 1 - math.Exp(math.Log(miss)/float64(c+1))
}

// measuredMiss is the miss chance random aims at where the trial's own
// request count was measured (TrialInfo.Expected): the count is the
// trial's, not a guess from other trials, so a trial is let go without a
// fault once in a thousand, not once in a hundred, at the price of
// grants a little earlier in the trial (p ≈ 6.9/c instead of 4.6/c).
const measuredMiss = 0.001

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
