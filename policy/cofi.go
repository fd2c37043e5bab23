package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/invariant"
	"github.com/gofault/gofault/record"
)

func init() {
	Register("cofi", func(env Env) (Policy, error) {
		if err := cofiCanRun(env.Catalog); err != nil {
			return nil, err
		}
		return newCofi(env), nil
	})
}

// cofiCanRun says why cofi could not inject anything in the target of
// cat: without observation points it sees no message to judge, without
// peer-network sites it can cut no member off. Every trial would run
// without a fault; better to say so before the first one.
func cofiCanRun(cat *catalog.Catalog) error {
	if cat == nil {
		return nil
	}
	if len(cat.ObservePoints) == 0 {
		return errors.New("policy cofi: the analysis found no observation points, so cofi would see no peer message and start no partition; " +
			"it looks for messages shaped like etcd's raftpb.Message (integer Type, From and To) in Send, Step and Process methods, " +
			"and for structs with integer fields and a sender field (ID, From, Leader, Candidate, Peer...) that a method of their own encodes (nats-server) " +
			"or that are passed to a method of an interface of the target (hashicorp/raft's Transport) and taken by a handler of a node (process..., handle..., appendEntries): " +
			"check that faults.partition.packages or target.packages include the package that declares them, or name your send and handle functions with faults.partition.observe.send and .handled (docs/analysis.md)")
	}
	if !slices.ContainsFunc(cat.ObservePoints, func(p catalog.ObservePoint) bool { return p.When == catalog.ObserveHandled }) {
		return errors.New("policy cofi: the analysis found observation points where messages are sent but none where one is handled, so cofi could mine no invariant and would start no partition; " +
			"name the node's handlers with faults.partition.observe.handled (docs/analysis.md)")
	}
	for i := range cat.Sites {
		if cat.Sites[i].Peer != "" {
			return nil
		}
	}
	return errors.New("policy cofi: the analysis found no peer-network calls to cut; set faults.partition.packages to the packages of your peer transport (docs/analysis.md)")
}

// cofiNone is the pseudo-invariant of the partitions cofi starts without
// a violation.
const cofiNone = "none"

// cofiFallback is how many handled messages a trial observes without an
// invariant violation before cofi starts a partition anyway.
const cofiFallback = 2000

// cofi is CoFI's Algorithm 1 (ASE'20 §3.5) over gofault's observation
// points and mined invariants (package invariant):
//
//   - Learn mines the invariants from the campaign's fault-free trials.
//   - In a trial, when a member handles a message that violates an
//     invariant I (it disagrees with the sender: an inconsistent state),
//     cofi cuts that member off from its peers (Partition.Start); so it
//     does when the member's value of a variable that is equal on all
//     members (record.AllMembers) differs from another's latest. So it
//     does when a message is sent whose value the receiver does not have
//     yet (I is pending, invariant.Set.Pending: the transient
//     inconsistent states of partition-free runs, where the paper starts
//     its partitions): the receiver is cut off before it gets it; and when
//     a member handles a message that brought it such a value
//     (invariant.Set.Brought: the same state, seen at the receiver, which
//     needs no order between the members' observations): it is cut off
//     before the next one.
//   - While it is cut off, every message sent from or to it (observed at a
//     send point) has a message type: the message's type and its
//     direction (from or to the cut member; the sender's and receiver's
//     IDs change from trial to trial, so the pair is relative). The first
//     type not yet tried with I heals the partition just then: it is
//     recorded, and the next trial that cuts at I heals at the next new
//     type (Lines 14–16). Types the fault-free trials never sent (a
//     recovery protocol's) heal first; once a partition of I met none of
//     them, the normal traffic heals too (§3.5.2). A partition that meets
//     no new type lasts the configured length; the second such one
//     finishes I (Line 5).
//   - One partition per trial; what was explored is kept (Snapshot) for
//     --resume. cofi only partitions, whatever faults.kinds says.
//
// Deviations: the message type is (point, type, direction), not (stack,
// sender, receiver, state) — the observation hooks send no stacks; the
// heal follows the observation, so the message that triggers it may be
// dropped rather than delivered; a partition heals no sooner than a sixth
// of its configured length (observation times), since a cut of
// microseconds cuts nothing; and, so that every trial injects, a trial
// that has observed cofiFallback handled messages without a violation
// cuts off the member that handled the last one, at the pseudo-invariant
// "none".
type cofi struct {
	env    Env
	set    *invariant.Set
	trials running[cofiTrial]
	mem    cofiMemory
}

// cofiMemory is what cofi keeps across trials and resumes.
type cofiMemory struct {
	Invariants []record.Invariant `json:"invariants"`
	Learned    bool               `json:"learned"`
	// Types are, by invariant ID, the message types already tried as
	// the partition's end.
	Types map[string][]string `json:"types,omitempty"`
	// Done are the invariants whose last partition met no new type.
	Done map[string]bool `json:"done,omitempty"`
	// Seen are the message types (point|type) sent in the fault-free
	// trials: the protocol's normal traffic.
	Seen map[string]bool `json:"seen,omitempty"`
	// Common are the invariants whose partitions heal at types of the
	// normal traffic too: a partition that met no type outside it came
	// first.
	Common map[string]bool `json:"common,omitempty"`
}

// cofiTrial is one trial's partition.
type cofiTrial struct {
	handled int
	ids     map[string]uint64           // node → its ID in messages (From at its sends, To where it handles)
	state   map[string]map[string]int64 // node → its state variables as last observed
	cut     string                      // the cut-off member, "" when none
	inv     string                      // the invariant that started it
	started bool                        // the trial had its partition
	from    time.Time                   // when the partition started
	newType bool                        // the partition ended at a new message type
}

func newCofi(env Env) *cofi {
	c := &cofi{env: env}
	c.index()
	return c
}

func (c *cofi) index() {
	if c.env.Catalog != nil {
		c.set = invariant.NewSet(c.env.Catalog, c.mem.Invariants)
	} else {
		c.set = invariant.NewSet(&catalog.Catalog{}, nil)
	}
}

// Name implements Policy.
func (c *cofi) Name() string { return "cofi" }

// Learn mines the invariants from the observations of the campaign's
// fault-free trials, unless a restored snapshot holds them already.
func (c *cofi) Learn(trials [][]record.Observation) {
	if c.mem.Learned || c.env.Catalog == nil {
		return
	}
	c.mem.Invariants = invariant.Mine(c.env.Catalog, trials, 0)
	c.mem.Learned = true
	for _, obs := range trials {
		for i := range obs {
			if pt := c.env.Catalog.Observe(obs[i].Point); pt != nil && pt.When == catalog.ObserveSend {
				if c.mem.Seen == nil {
					c.mem.Seen = map[string]bool{}
				}
				c.mem.Seen[fmt.Sprintf("%s|%d", pt.ID, obs[i].Type)] = true
			}
		}
	}
	c.index()
}

// Invariants returns the invariants cofi works with.
func (c *cofi) Invariants() []record.Invariant { return c.mem.Invariants }

// Begin implements Policy: no live site, observations on.
func (c *cofi) Begin(info TrialInfo) Plan {
	c.trials.begin(info.Index, &cofiTrial{ids: map[string]uint64{}, state: map[string]map[string]int64{}})
	return Plan{States: true, Observe: true}
}

// Decide implements Policy: cofi grants nothing at sites.
func (c *cofi) Decide(*Request) Decision { return Decision{} }

// Observe implements Observer.
func (c *cofi) Observe(o *Observation) Partition {
	t := c.trials.of(o.Trial)
	if t == nil || o.Point == nil {
		return Partition{}
	}
	if o.Point.When == catalog.ObserveSend {
		if _, ok := t.ids[o.Node]; !ok {
			t.ids[o.Node] = o.From
		}
		if t.cut != "" {
			return c.intercepted(t, o)
		}
		if t.started {
			return Partition{}
		}
		return c.pending(t, o)
	}
	t.handled++
	if _, ok := t.ids[o.Node]; !ok {
		t.ids[o.Node] = o.To
	}
	var brought []*record.Invariant
	if !t.started {
		brought = c.set.Brought(&o.Observation, o.Point, t.state[o.Node])
	}
	t.remember(o)
	if t.started {
		return Partition{}
	}
	for _, v := range brought {
		if !c.mem.Done[v.ID] {
			// The member just caught up with the sender: cut it off
			// before the next such message.
			t.inv = v.ID
			t.cut, t.started, t.from = o.Node, true, o.Time
			why := fmt.Sprintf("pending: %s (message type %d handled by %s)", v, o.Type, o.Node)
			return Partition{Start: o.Node, For: c.env.partition(), Why: why}
		}
	}
	why := ""
	violated := append(c.set.Violated(&o.Observation), c.set.Diverged(&o.Observation, o.Point, t.state)...)
	for _, v := range violated {
		if !c.mem.Done[v.ID] {
			why, t.inv = v.String(), v.ID
			break
		}
	}
	if why == "" && t.handled >= cofiFallback {
		t.inv = cofiNone
		why = fmt.Sprintf("no invariant violated in %d handled messages (message type %d at %s)", t.handled, o.Type, o.Point.ID)
	}
	if why == "" {
		return Partition{}
	}
	t.cut, t.started, t.from = o.Node, true, o.Time
	return Partition{Start: o.Node, For: c.env.partition(), Why: why}
}

// remember keeps the state variables of a handled observation as its
// node's latest.
func (t *cofiTrial) remember(o *Observation) {
	m := t.state[o.Node]
	if m == nil {
		m = map[string]int64{}
		t.state[o.Node] = m
	}
	for i, v := range o.Point.Vars {
		if i < len(o.Values) && strings.HasPrefix(v.Name, "node.") {
			m[v.Name] = o.Values[i]
		}
	}
}

// pending cuts off the receiver of a message about to be sent when the
// message carries a value of an invariant not yet finished that the
// receiver does not have yet.
func (c *cofi) pending(t *cofiTrial, o *Observation) Partition {
	recv := ""
	for node, id := range t.ids {
		if id == o.To {
			recv = node
			break
		}
	}
	if recv == "" {
		return Partition{}
	}
	for _, v := range c.set.Pending(&o.Observation, o.Point, t.state[recv]) {
		if c.mem.Done[v.ID] {
			continue
		}
		t.inv = v.ID
		t.cut, t.started, t.from = recv, true, o.Time
		why := fmt.Sprintf("pending: %s (message type %d to %s at %s)", v, o.Type, recv, o.Point.ID)
		return Partition{Start: recv, For: c.env.partition(), Why: why}
	}
	return Partition{}
}

// intercepted handles a message sent while t's member is cut off: one
// from or to it whose type is new for the invariant ends the partition.
func (c *cofi) intercepted(t *cofiTrial, o *Observation) Partition {
	id, ok := t.ids[t.cut]
	if !ok || o.Time.Sub(t.from) < c.env.partition()/6 {
		return Partition{}
	}
	dir := ""
	switch {
	case o.From == id:
		dir = "from"
	case o.To == id:
		dir = "to"
	default:
		return Partition{}
	}
	if !c.mem.Common[t.inv] && c.mem.Seen[fmt.Sprintf("%s|%d", o.Point.ID, o.Type)] {
		return Partition{} // normal traffic: tried once the rarer types are
	}
	typ := fmt.Sprintf("%s|%d|%s", o.Point.ID, o.Type, dir)
	for _, seen := range c.mem.Types[t.inv] {
		if seen == typ {
			return Partition{}
		}
	}
	if c.mem.Types == nil {
		c.mem.Types = map[string][]string{}
	}
	c.mem.Types[t.inv] = append(c.mem.Types[t.inv], typ)
	node := t.cut
	t.cut, t.newType = "", true
	return Partition{Heal: node}
}

// End implements Policy: a partition that met no new message type
// finishes its invariant, or, when it healed only at types outside the
// normal traffic, lets the next partitions heal at those too.
func (c *cofi) End(out Outcome) {
	t := c.trials.end(out.Index)
	if t == nil || !t.started || t.newType {
		return
	}
	if len(c.mem.Seen) > 0 && !c.mem.Common[t.inv] {
		if c.mem.Common == nil {
			c.mem.Common = map[string]bool{}
		}
		c.mem.Common[t.inv] = true
		return
	}
	if c.mem.Done == nil {
		c.mem.Done = map[string]bool{}
	}
	c.mem.Done[t.inv] = true
}

// Snapshot implements Stateful.
func (c *cofi) Snapshot() ([]byte, error) {
	for k := range c.mem.Types {
		sort.Strings(c.mem.Types[k])
	}
	return json.Marshal(&c.mem)
}

// Restore implements Stateful.
func (c *cofi) Restore(data []byte) error {
	var m cofiMemory
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	c.mem = m
	c.index()
	return nil
}

// Learner is implemented by policies that learn from the campaign's
// fault-free trials before its fault trials (cofi mines its invariants
// from their observations).
type Learner interface {
	Learn(trials [][]record.Observation)
}
