package controller

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// PeerID names a connection within a trial: the shell's handle for "the
// process on the other end", which the session never touches.
type PeerID uint64

// Effect is something the session asks its shell to carry out: push a plan
// to a connected process, kill a node, or log a warning. Plain data. A
// partition is plans too: the cut node's peer sites become live and the
// session answers them (partition.go).
type Effect struct {
	// Plan, when Peer is set, is the plan to push to Peer. Seq orders the
	// plans the session computes for one peer: the shell never sends an
	// older one after a newer one, whatever the goroutines race.
	Peer PeerID
	Plan wire.Plan
	Seq  uint64
	// Crash names a node to kill (TrialSpec.Crash, or TrialSpec.PowerLoss
	// when PowerLoss is set, TrialSpec.Reboot when Reboot is).
	Crash     string
	PowerLoss bool
	Reboot    bool
	// Down, with Crash, is how long the node stays down before it is
	// started again (a stop, TrialSpec.Stop); 0: a crash's restart.
	Down time.Duration
	// Pause names a node to pause for For (TrialSpec.Pause).
	Pause string
	For   time.Duration
	// Warn is a message for the log, with slog-style Args.
	Warn string
	Args []any
}

// member is a connected process as the session sees it.
type member struct {
	node string
	role wire.Role
	// live: the process may get live sites (an agent built from the
	// campaign's catalog, speaking this protocol version).
	live bool
	// process is the node's process number in the trial: 1 for its first
	// agent connection, 2 after a restart, … (policy.Request.Process).
	process int
}

// session is one trial's logic as a single-threaded state machine, in the
// manner of etcd-io/raft's RawNode: connections, requests and events go in,
// a response and Effects come out. It does no I/O, takes no locks, starts no
// goroutine and reads no clock (times come in with the calls). Trial is the
// shell around it: it serialises the calls with a mutex and carries out the
// effects after releasing it.
//
// The policy is plain data in, plain data out, so the session asks it
// directly (decide), through a function the shell gives it: the
// controller serialises policy calls across the trials running at once.
type session struct {
	cat    *catalog.Catalog
	spec   TrialSpec
	plan   policy.Plan
	decide func(*policy.Request) policy.Decision

	armed bool // faults may be injected (see Arm)
	done  bool // the policy said it grants nothing more
	last  bool // the policy granted its last fault (Decision.Last or Done)
	ended bool
	seq   uint64 // last plan sequence number handed out

	members  map[PeerID]member
	requests int
	hits     map[hitKey]int // requests per node and site
	starts   map[string]int // per node: agent connections so far (member.process)
	reached  map[reachKey]int
	roles    []record.RoleChange
	role     map[string]string // per node: its current role
	inj      []record.Injection
	visits   map[visitKey]*record.StateVisit
	current  map[instKey]uint32 // per node and task instance: current state
	timeouts []record.Timeout
	client   []record.ClientEvent
	// printedEvs are the workload's events printed on its stdout, live
	// (printed); not part of the Result, which the runner merges them into.
	printedEvs []record.ClientEvent
	dropped    int
	progress   map[string]time.Time // client → last progress
	result     *Result              // set by the first end
	cuts       map[string]cut       // per node: its partition in progress (partition.go)
	observer   func(*policy.Observation) policy.Partition
	obs        []record.Observation
	cutInj     map[string]int     // per node: the injection of its partition in progress
	holds      map[holdKey]*hold  // per struck node and shape: its cut in progress held until a condition (held.go)
	obsCount   map[obsKey]int     // observations per node and point, for replays
	commits    map[string]int64   // per node: the highest commit index observed (behind.go)
	peers      []uint32           // the catalog's peer-network sites, once computed
	arcs       map[arc]cut        // directions between members cut (disconnect.go, shapes.go)
	ports      map[string]string  // port → member listening there (disconnect.go)
	tagPeers   bool               // agents tag goroutines with their dials' peers (wire.FlagPeers)
	covered    blockSet           // the blocks any node covered (EvCover)
	tearing    map[string]bool    // nodes told to tear a write, not yet killed (disk.go)
	after      map[string]after   // per node: its crash after a call, armed, not yet struck
	inproc     map[uint32]*Member // in-process cluster members seen, by rank (TrialSpec.Members)
	inprocN    int                // requests that named one
	sends      int                // requests at peer sites that named a member and the member they go to
	ranked     uint32             // the members the agents said they ranked (wire.Request.Ranked), all seen
}

// maxRanked bounds the members a session records from wire.Request.Ranked
// (the agent ranks at most 1,024).
const maxRanked = 1 << 10

type instKey struct {
	node string
	task uint32
	inst uint64
}

type hitKey struct {
	node string
	site uint32
}

type reachKey struct {
	site  uint32
	role  string
	state uint32
}

type visitKey struct {
	node        string
	task, state uint32
}

func newSession(cat *catalog.Catalog, spec TrialSpec, plan policy.Plan, decide func(*policy.Request) policy.Decision) *session {
	return &session{
		cat: cat, spec: spec, plan: plan, decide: decide,
		members:  map[PeerID]member{},
		current:  map[instKey]uint32{},
		visits:   map[visitKey]*record.StateVisit{},
		hits:     map[hitKey]int{},
		starts:   map[string]int{},
		reached:  map[reachKey]int{},
		role:     map[string]string{},
		progress: map[string]time.Time{},
	}
}

// wirePlan is the plan member m gets now.
func (s *session) wirePlan(m member) wire.Plan {
	var wp wire.Plan
	if !m.live {
		return wp
	}
	if s.plan.States {
		wp.Flags |= wire.FlagStates
	}
	if s.plan.Stacks {
		wp.Flags |= wire.FlagStacks
	}
	if s.plan.Timeouts {
		wp.Flags |= wire.FlagTimeouts
	}
	if s.plan.Observe || (s.observing(m.node) && !s.ended) {
		wp.Flags |= wire.FlagObserve
	}
	if s.tagPeers {
		wp.Flags |= wire.FlagPeers
	}
	if s.spec.Members {
		wp.Flags |= wire.FlagMembers
	}
	// A process of members holds the nodes a plan may name: its sites
	// are live for them all, and request answers the others "no fault".
	if s.armed && !s.done && !s.ended && (s.plan.LiveOn(m.node) || s.spec.Members) {
		wp.Sites = s.plan.Sites
	}
	if s.peersLive(m.node) && !s.ended {
		wp.Sites = s.withPeers(wp.Sites)
	}
	if w := s.watchedSites(m.node); len(w) > 0 && !s.ended {
		sites := append(slices.Clone(wp.Sites), w...)
		slices.Sort(sites)
		wp.Sites = slices.Compact(sites)
	}
	return wp
}

// planFor is the effect that gives peer id its current plan, with the
// calls of id whose held delay goes on (held.go).
func (s *session) planFor(id PeerID) Effect {
	s.seq++
	wp := s.wirePlan(s.members[id])
	wp.Holding = s.holding(id)
	return Effect{Peer: id, Plan: wp, Seq: s.seq}
}

// replan gives every agent but skip its current plan.
func (s *session) replan(skip PeerID) []Effect {
	var effs []Effect
	for _, id := range s.sortedMembers() {
		if id != skip && s.members[id].role == wire.RoleAgent {
			effs = append(effs, s.planFor(id))
		}
	}
	return effs
}

func (s *session) sortedMembers() []PeerID {
	ids := make([]PeerID, 0, len(s.members))
	for id := range s.members {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// attach adds a connected process and returns the plan for its welcome. A
// workload, or an agent built from another catalog (catalogOK false), is
// recorded but never gets live sites: gofault never injects at a site it
// cannot name.
func (s *session) attach(id PeerID, node string, role wire.Role, catalogOK bool) Effect {
	m := member{node: node, role: role, live: role == wire.RoleAgent && catalogOK}
	if role == wire.RoleAgent {
		// An agent connects once per process: its next connection is
		// the node's next process (a restart).
		s.starts[node]++
		m.process = s.starts[node]
	}
	s.members[id] = m
	return s.planFor(id)
}

// detach forgets a connection.
func (s *session) detach(id PeerID) { delete(s.members, id) }

// faults says where the trial's faults stand (Trial.Faults).
func (s *session) faults() FaultState {
	return FaultState{
		Faultless:  s.spec.NoFaults || (len(s.plan.Sites) == 0 && s.observer == nil),
		Last:       s.last,
		Injections: slices.Clone(s.inj),
	}
}

// arm starts the injection phase: every agent gets its live plan.
func (s *session) arm() []Effect {
	if s.armed || s.ended {
		return nil
	}
	s.armed = true
	return s.replan(0)
}

// disarm ends the injection phase (Trial.Disarm): no site is live for
// any agent from now on, and request asks the policy nothing more.
func (s *session) disarm() []Effect {
	if s.done || s.ended {
		return nil
	}
	s.done = true
	return s.replan(0)
}

// request answers one request of peer id at time now. When the answer ends
// the policy's grants (Decision.Done), every agent gets an emptied plan;
// the asking peer's comes among the effects and must be sent before the
// response, so the agent has installed it before the hook returns.
func (s *session) request(id PeerID, r *wire.Request, now time.Time) (wire.Response, []Effect) {
	resp := wire.Response{ID: r.ID}
	m, ok := s.members[id]
	if !ok || s.ended {
		return resp, nil
	}
	m.node = s.memberOf(m.node, r)
	if r.After {
		return s.afterReturned(m.node, r)
	}
	if s.spec.Members {
		for ; s.ranked < r.Ranked && s.ranked < maxRanked; s.ranked++ {
			s.seeMember(s.ranked + 1) // every member the process ranked, for a split
		}
	}
	site := s.cat.Site(r.Site)
	var peer string
	if site != nil && site.Peer != "" {
		peer = s.peerNode(r.Peer)
		if s.spec.Members && r.PeerSeq != 0 {
			peer = MemberNode(r.PeerSeq) // a send to another member of the process
			s.seeMember(r.PeerSeq)
			if r.MemberSeq != 0 {
				s.sends++
			}
		}
	}
	if act, arg, effs, cut := s.cutRequest(m.node, peer, site, now); cut {
		resp.Action, resp.Arg = act, arg
		return resp, effs
	}
	if act, arg, effs, cut := s.linkRequest(m.node, peer, site, now); cut {
		resp.Action, resp.Arg = act, arg
		return resp, effs
	}
	if watched, heals := s.watchedRequest(m.node, site, now); watched {
		if !s.policyLive(m.node, site.Index) {
			return resp, heals // live only for a held cut's watch
		}
		resp, effs := s.ask(id, m, r, site, peer, now)
		return resp, append(heals, effs...)
	}
	return s.ask(id, m, r, site, peer, now)
}

// ask answers request r of member m (connection id) at site (nil: none
// of the catalog's) by the policy's decision, when the policy's plan has
// the site live on m's node and its grants are not spent; peer is the
// member at the call's other end, for a peer site.
func (s *session) ask(id PeerID, m member, r *wire.Request, site *catalog.Site, peer string, now time.Time) (wire.Response, []Effect) {
	resp := wire.Response{ID: r.ID}
	if s.done || site == nil {
		return resp, nil
	}
	if s.spec.Members && site.Peer == catalog.PeerSend && r.MemberSeq == 0 {
		// A send of no known member: a cut started there would cut the
		// process, every member's unattributed sends at once.
		return resp, nil
	}
	if site.Peer != "" && s.peersLive(m.node) && !s.policyLive(m.node, site.Index) {
		return resp, nil // live for the disconnect only: a call to another member
	}
	if s.spec.Members && !s.plan.LiveOn(m.node) {
		return resp, nil // a member the plan does not name
	}
	hk := hitKey{node: m.node, site: site.Index}
	s.hits[hk]++
	req := policy.Request{
		Trial:      s.spec.Index,
		Seq:        s.requests,
		Node:       m.node,
		Site:       site,
		Stack:      frames(r.Stack),
		Occurrence: s.hits[hk],
		Process:    m.process,
		Task:       r.Task,
		Inst:       r.Inst,
		State:      r.State,
		Peer:       peer,
		Members:    s.nodes(),
	}
	if r.HasRole {
		req.Role = s.roleName(r.Role)
	}
	rk := reachKey{site: site.Index, role: req.Role, state: req.State}
	if _, ok := s.reached[rk]; ok || len(s.reached) < maxReached {
		s.reached[rk]++
	}
	s.requests++
	d := s.decide(&req)

	var effs []Effect
	if f := d.Fault; f.Kind != catalog.KindNone {
		inj, act, arg, eff, ok := s.injection(&req, f, now, id, r.ID)
		if !ok {
			return resp, eff
		}
		resp.Action, resp.Arg = act, arg
		s.inj = append(s.inj, inj)
		effs = eff
		s.last = s.last || d.Last || d.Done
	}
	if d.Done && !s.done {
		s.done = true
		effs = append(effs, s.replan(0)...)
	}
	return resp, effs
}

// memberOf is the node of request r of a process that is node: the
// in-process cluster member r names, when the trial splits processes into
// members (TrialSpec.Members), else node.
func (s *session) memberOf(node string, r *wire.Request) string {
	if !s.spec.Members || r.MemberSeq == 0 {
		return node
	}
	mb := s.inproc[r.MemberSeq]
	if mb == nil {
		if s.inproc == nil {
			s.inproc = map[uint32]*Member{}
		}
		mb = &Member{Node: MemberNode(r.MemberSeq), Value: r.Member}
		s.inproc[r.MemberSeq] = mb
	}
	mb.Value = r.Member // known now if it was only sent to before
	mb.Requests++
	s.inprocN++
	return mb.Node
}

// nodes returns the trial's members, which a split divides:
// TrialSpec.Nodes, or when processes hold members (TrialSpec.Members) the
// members seen so far (those that made a request or were sent to, and
// every rank the agent said it gave, wire.Request.Ranked), by rank; the
// process itself is none of them.
func (s *session) nodes() []string {
	if !s.spec.Members || len(s.inproc) == 0 {
		return s.spec.Nodes
	}
	var out []string
	for _, mb := range s.memberList() {
		out = append(out, mb.Node)
	}
	return out
}

// peersLive reports whether node's peer sites are live whatever the
// policy's plan says: node is cut off (partition.go) or the calling side
// of a cut arc (disconnect.go); when processes hold members
// (TrialSpec.Members), whether any member is, since one process sends
// for them all and a send to a cut member is cut too.
func (s *session) peersLive(node string) bool {
	if s.spec.Members {
		return len(s.cuts) > 0 || len(s.arcs) > 0
	}
	_, cut := s.cuts[node]
	return cut || s.linked(node)
}

// seeMember records member rank seq, the member a send goes to, among
// the members seen (its value is known once it makes a request itself),
// so that a split can put it on a side.
func (s *session) seeMember(seq uint32) {
	if s.inproc == nil {
		s.inproc = map[uint32]*Member{}
	}
	if s.inproc[seq] == nil {
		s.inproc[seq] = &Member{Node: MemberNode(seq)}
	}
}

// memberList returns the in-process cluster members seen, by rank.
func (s *session) memberList() []Member {
	var out []Member
	for _, seq := range slices.Sorted(maps.Keys(s.inproc)) {
		out = append(out, *s.inproc[seq])
	}
	return out
}

// injection turns the policy's fault for req, request call of connection
// id, into the injection record and the agent's action; ok is false when
// the fault cannot be carried out (an error the site does not have, a
// crash without a way to crash).
func (s *session) injection(req *policy.Request, f policy.Fault, now time.Time, id PeerID, call uint64) (record.Injection, wire.Action, int64, []Effect, bool) {
	site := req.Site
	inj := record.Injection{
		Time: now, Node: req.Node, Site: site.Index, SiteID: site.ID, Kind: f.Kind,
		Stack: req.Stack, Occurrence: req.Occurrence, Task: req.Task, Inst: req.Inst, State: req.State,
		Role: req.Role,
	}
	if st := s.cat.State(req.State); st != nil {
		inj.StateID = st.ID
	}
	switch f.Kind {
	case catalog.KindError:
		if f.Error < 1 || f.Error > len(site.Errors) {
			return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose an error the site does not have", Args: []any{"site", site.ID, "error", f.Error}}}, false
		}
		inj.Error = site.Errors[f.Error-1].Name
		return inj, wire.ActError, int64(f.Error), nil, true
	case catalog.KindDelay:
		inj.Delay = f.Delay
		if site.Peer != "" && req.Peer != req.Node {
			// A slowed peer-network call slows the member at its other
			// end too: its messages to or from Node (check.hits).
			inj.Peer = req.Peer
		}
		if effs, held := s.holdDelay(&inj, id, call, f, now); held {
			return inj, wire.ActHold, int64(f.Delay), effs, true
		}
		return inj, wire.ActDelay, int64(f.Delay), nil, true
	case catalog.KindCrash:
		if s.spec.Crash == nil {
			return inj, wire.ActNone, 0, nil, false
		}
		return inj, wire.ActCrash, 0, []Effect{{Crash: req.Node}}, true
	case catalog.KindPartition:
		if f.Delay <= 0 || site.Peer == "" {
			return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose a partition where none can start", Args: []any{"site", site.ID, "length", f.Delay}}}, false
		}
		inj.Delay = f.Delay
		s.hold(&inj, req.Node, f, []string{req.Node}, nil)
		// The asking call is peer I/O too: it is the first one cut.
		act, arg := cutAction(site, f.Delay)
		return inj, act, arg, s.startCut(req.Node, f.Delay, now), true
	case catalog.KindDisconnect:
		if f.Delay <= 0 || site.Peer == "" || req.Peer == "" || req.Peer == req.Node {
			return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose a disconnect where none can start", Args: []any{"site", site.ID, "peer", req.Peer, "length", f.Delay}}}, false
		}
		inj.Delay, inj.Peer = f.Delay, req.Peer
		arcs := disconnectArcs(req.Node, req.Peer)
		s.hold(&inj, req.Node, f, []string{req.Node, req.Peer}, arcs)
		act, arg := cutAction(site, f.Delay)
		return inj, act, arg, s.startArcs(req.Node, arcs, f.Delay, now), true
	case catalog.KindOneWay:
		if f.Delay <= 0 || site.Peer == "" || req.Peer == "" || req.Peer == req.Node {
			return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose a one-way cut where none can start", Args: []any{"site", site.ID, "peer", req.Peer, "length", f.Delay}}}, false
		}
		inj.Delay, inj.Peer = f.Delay, req.Peer
		arcs := []arc{{req.Node, req.Peer}}
		s.hold(&inj, req.Node, f, []string{req.Node}, arcs)
		act, arg := cutAction(site, f.Delay)
		return inj, act, arg, s.startArcs(req.Node, arcs, f.Delay, now), true
	case catalog.KindSplit:
		struck, ok := splitSide(req.Node, req.Peer, f.Side, s.nodes())
		if f.Delay <= 0 || site.Peer == "" || !ok {
			return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose a split where none can start", Args: []any{"site", site.ID, "peer", req.Peer, "side", f.Side, "members", s.nodes(), "length", f.Delay}}}, false
		}
		inj.Delay, inj.Peer = f.Delay, req.Peer
		inj.Side = slices.DeleteFunc(slices.Clone(struck), func(n string) bool { return n == req.Node })
		arcs := splitArcs(struck, s.nodes())
		s.hold(&inj, req.Node, f, struck, arcs)
		act, arg := cutAction(site, f.Delay)
		return inj, act, arg, s.startArcs(req.Node, arcs, f.Delay, now), true
	case catalog.KindLeaderCut:
		if f.Delay <= 0 || !s.leads(req.Role) {
			return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose a leader cut where none can start", Args: []any{"site", site.ID, "role", req.Role, "length", f.Delay}}}, false
		}
		inj.Delay = f.Delay
		s.hold(&inj, req.Node, f, []string{req.Node}, nil)
		act, arg := wire.ActNone, int64(0)
		if site.Peer != "" {
			// The asking call is peer I/O too: it is the first one cut.
			act, arg = cutAction(site, f.Delay)
		}
		return inj, act, arg, s.startCut(req.Node, f.Delay, now), true
	case catalog.KindPowerLoss:
		if s.spec.PowerLoss == nil {
			return inj, wire.ActNone, 0, nil, false
		}
		return inj, wire.ActCrash, 0, []Effect{{Crash: req.Node, PowerLoss: true}}, true
	case catalog.KindCrashAfter, catalog.KindPowerLossAfter:
		pl := f.Kind == catalog.KindPowerLossAfter
		if !site.Kind.Has(catalog.KindCrashAfter) || s.spec.Crash == nil || (pl && s.spec.PowerLoss == nil) {
			return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose a crash after a call where none can strike", Args: []any{"site", site.ID, "kind", f.Kind.String()}}}, false
		}
		// The call runs; its deferred hook asks again once it returned
		// (afterReturned), and the node is killed then.
		if s.after == nil {
			s.after = map[string]after{}
		}
		s.after[req.Node] = after{site: site.Index, powerLoss: pl}
		inj.Error = site.Next // the window it strikes in ends at that call
		return inj, wire.ActCrashAfter, 0, nil, true
	case catalog.KindPause:
		if s.spec.Pause == nil || f.Delay <= 0 {
			return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose a pause that cannot be made", Args: []any{"site", site.ID, "length", f.Delay}}}, false
		}
		inj.Delay, inj.Error = f.Delay, f.Timer
		// The call goes on; the whole process stops meanwhile.
		return inj, wire.ActNone, 0, []Effect{{Pause: req.Node, For: f.Delay}}, true
	case catalog.KindStop:
		if s.spec.Stop == nil || f.Delay <= 0 {
			return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose a stop that cannot be made", Args: []any{"site", site.ID, "length", f.Delay}}}, false
		}
		inj.Delay, inj.Error = f.Delay, f.Timer
		return inj, wire.ActCrash, 0, []Effect{{Crash: req.Node, Down: f.Delay}}, true
	case catalog.KindCorrupt, catalog.KindTorn, catalog.KindRot:
		return s.diskInjection(inj, f)
	case catalog.KindReboot:
		if s.spec.Reboot == nil {
			return inj, wire.ActNone, 0, nil, false
		}
		// The call goes on; the node shuts down on its signal meanwhile.
		return inj, wire.ActNone, 0, []Effect{{Crash: req.Node, Reboot: true}}, true
	}
	return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose an unknown fault kind", Args: []any{"kind", fmt.Sprint(f.Kind)}}}, false
}

// roleName is the name of role value v in the catalog ("StateLeader"),
// or "role=v" for a value that is no constant of the role type.
func (s *session) roleName(v int64) string {
	if n := s.cat.Role.Name(v); n != "" {
		return n
	}
	return "role=" + strconv.FormatInt(v, 10)
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

// events records a batch of peer id's events; it returns warnings for the
// events it could not read.
func (s *session) events(id PeerID, evs []wire.Event) []Effect {
	m, ok := s.members[id]
	if !ok || s.ended {
		return nil
	}
	var effs []Effect
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case wire.EvState:
			k := instKey{node: m.node, task: uint32(e.A), inst: e.C}
			if s.current[k] == uint32(e.B) {
				continue
			}
			s.current[k] = uint32(e.B)
			vk := visitKey{node: m.node, task: uint32(e.A), state: uint32(e.B)}
			v := s.visits[vk]
			if v == nil {
				v = &record.StateVisit{Node: m.node, Task: vk.task, State: vk.state, First: time.Unix(0, e.Time)}
				s.visits[vk] = v
			}
			v.Entries++
		case wire.EvRole:
			name, node := s.roleName(int64(e.A)), m.node
			if s.spec.Members && e.B > 0 {
				node = MemberNode(uint32(e.B)) // one member's role
			}
			if s.role[node] == name {
				continue
			}
			s.role[node] = name
			if s.armed && !s.ended {
				effs = append(effs, s.roleChanged(node, name, time.Unix(0, e.Time))...)
			}
			if len(s.roles) >= maxRoleChanges {
				s.dropped++
				continue
			}
			s.roles = append(s.roles, record.RoleChange{Node: node, Role: name, Time: time.Unix(0, e.Time)})
		case wire.EvObserve:
			effs = append(effs, s.observe(m.node, e)...)
		case wire.EvDisk:
			effs = append(effs, s.diskDone(m.node, e)...)
		case wire.EvCover:
			if err := s.covered.addEncoded(e.Data, s.cat.Blocks); err != nil {
				effs = append(effs, Effect{Warn: "controller: bad coverage event", Args: []any{"node", m.node, "err", err}})
			}
		case wire.EvTimeout:
			s.timeouts = append(s.timeouts, record.Timeout{Node: m.node, Site: uint32(e.A), Duration: time.Duration(e.B)})
		case wire.EvWorkload:
			var ce record.ClientEvent
			if err := json.Unmarshal(e.Data, &ce); err != nil {
				effs = append(effs, Effect{Warn: "controller: bad workload event", Args: []any{"err", err}})
				continue
			}
			if ce.Time.IsZero() {
				ce.Time = time.Unix(0, e.Time)
			}
			effs = append(effs, s.clientEvent(ce)...)
			if len(s.client) >= maxClientEvents {
				s.dropped++
				continue
			}
			s.client = append(s.client, ce)
		}
	}
	return effs
}

// clientEvent takes in what a workload event tells the session live,
// whichever way it came (the controller connection, or the workload's
// stdout, printed): its client's last progress, and the cuts held until
// more requests succeeded.
func (s *session) clientEvent(ce record.ClientEvent) []Effect {
	if ce.Kind == record.EvProgress || ce.Kind == record.EvOp {
		s.progress[ce.Client] = ce.Time
	}
	if s.ended || !(ce.Kind == record.EvProgress || ce.Kind == record.EvOp && ce.Op != nil && !ce.Op.Unknown) {
		return nil
	}
	return s.succeeded(ce.Client, ce.Time)
}

// printed takes a workload event printed on its stdout (the runner hands
// it on as it is read): live, as one of the connection (clientEvent); it
// is kept apart (s.printed, for ClientEvents) since the runner merges the
// printed events into the trial's record itself.
func (s *session) printed(ce record.ClientEvent) []Effect {
	if s.ended {
		return nil
	}
	if len(s.printedEvs) < maxClientEvents {
		s.printedEvs = append(s.printedEvs, ce)
	}
	return s.clientEvent(ce)
}

// end ends the trial: every connected process gets an empty plan, and the
// record is kept; later calls return the same record and no effects.
func (s *session) end() (Result, []Effect) {
	if s.ended {
		return *s.result, nil
	}
	s.ended = true
	var effs []Effect
	for _, id := range s.sortedMembers() {
		s.seq++
		effs = append(effs, Effect{Peer: id, Seq: s.seq})
	}
	sort.SliceStable(s.roles, func(i, j int) bool { return s.roles[i].Time.Before(s.roles[j].Time) })
	s.result = &Result{
		Requests:   s.requests,
		Injections: s.inj,
		States:     s.stateVisits(),
		Timeouts:   s.timeouts,
		Client:     s.client,
		Reached:    s.reachedList(),
		Roles:      s.roles,
		Dropped:    s.dropped,
		Blocks:     s.covered.list(),

		Members:        s.memberList(),
		MemberRequests: s.inprocN,
		MemberSends:    s.sends,

		Observations: s.obs,
	}
	return *s.result, effs
}

// reachedList returns the trial's request counts by site, role and state,
// in that order.
func (s *session) reachedList() []record.Reach {
	out := make([]record.Reach, 0, len(s.reached))
	for k, n := range s.reached {
		r := record.Reach{Site: k.site, Role: k.role, Requests: n}
		if site := s.cat.Site(k.site); site != nil {
			r.SiteID = site.ID
		}
		if st := s.cat.State(k.state); st != nil {
			r.State = st.ID
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Site != b.Site {
			return a.Site < b.Site
		}
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		return a.State < b.State
	})
	return out
}

// stateVisits returns the trial's state visits by node, task and state.
func (s *session) stateVisits() []record.StateVisit {
	out := make([]record.StateVisit, 0, len(s.visits))
	for _, v := range s.visits {
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
