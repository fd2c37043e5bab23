package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
)

func init() {
	Register("bsrr", newBSRR)
	Register("new-state-only", newNewStateOnly)
}

// Injection keys: what makes two requests "the same state" for the Legolas
// policies (Env.Key).
const (
	// KeyState groups requests by the abstract state of the asking
	// goroutine's task and the node's role: (task unit, state, role).
	// Legolas's default, with the role gofault adds.
	KeyState = "state"
	// KeyStateSite also separates the fault sites within a state.
	KeyStateSite = "state+site"
	// KeyStateSiteStack also separates the call stacks reaching a site,
	// but not the node's role.
	KeyStateSiteStack = "state+site+stack"
)

// KeyNames are the valid Env.Key values.
var KeyNames = []string{KeyState, KeyStateSite, KeyStateSiteStack}

// stateKey returns the injection key of a request. KeyState and
// KeyStateSite include the node's role where it is known: the abstract
// state of a goroutine says what it does, the role in which node it does
// it (the raft loop's WAL write is another state on the leader).
// KeyStateSiteStack does not: its keys are already sparse, and splitting
// them by role costs injections (docs/policies.md, "Node roles").
func stateKey(key string, req *Request) string {
	k := "t" + strconv.FormatUint(uint64(req.Task), 10) + "/s" + strconv.FormatUint(uint64(req.State), 10)
	switch key {
	case KeyState:
		k += roleOf(req)
	case KeyStateSite:
		k += roleOf(req) + "@" + req.Site.ID
	case KeyStateSiteStack:
		k += "@" + req.Site.ID + "@" + StackKey(req.Stack)
	}
	return k
}

func checkKey(key string) (string, error) {
	switch key {
	case "":
		return KeyState, nil
	case KeyState, KeyStateSite, KeyStateSiteStack:
		return key, nil
	}
	return "", fmt.Errorf("unknown injection key %q (want %s, %s or %s)", key, KeyState, KeyStateSite, KeyStateSiteStack)
}

// stateInfo is bsrr's memory of one state.
type stateInfo struct {
	Budget int `json:"budget"`
	// Occur counts requests seen in the state over all trials, Trials the
	// trials in which it appeared.
	Occur  int     `json:"occur"`
	Trials int     `json:"trials"`
	Prob   float64 `json:"prob"`
	// Counts are the state's requests in each of the last trials in which
	// it appeared; lowCount(Counts) is c in p = 1 − e^(ln 0.01/(c+1)).
	Counts []int `json:"counts,omitempty"`
	// First are the request numbers (Request.Seq) of the state's first
	// request in those trials.
	First []int `json:"first,omitempty"`
}

// c is the state's request count that sizes its probability: a low
// quantile of its per-trial counts (Algorithm 2 uses the mean, Occur/Trials;
// a state requested thousands of times in a few trials then gets a p too
// low for the trials in which it is requested a few times).
func (in *stateInfo) c() int {
	if len(in.Counts) > 0 {
		return lowCount(in.Counts)
	}
	if in.Trials > 0 {
		return in.Occur / in.Trials
	}
	return 0
}

// late is the request number after which a trial that has not requested
// the state yet most likely never will: twice the latest first request of
// the state in recent trials plus some slack, but no later than 80% of the
// request count that almost every trial reaches (typical), so the trial
// still has requests left to grant when it gives up on the state.
func (in *stateInfo) late(typical int) int {
	l := math.MaxInt
	if len(in.First) > 0 {
		l = 2*slices.Max(in.First) + lateSlack
	}
	if typical > 0 {
		l = min(l, typical*4/5)
	}
	return l
}

// lateSlack is the number of requests added to a state's late point.
const lateSlack = 20

// Legolas's reset rule (its implementation, not Algorithm 2): when at
// least resetAfter trials ran since the last reset and fewer than half of
// them injected anything, every budget is reset.
const resetAfter = 30

// thisTrial is what bsrr counts of a state in the current trial.
type thisTrial struct{ n, first int }

// bsrr is Legolas's budgeted state round robin (Algorithm 2): it focuses
// each trial on one abstract state, taking states in round-robin order, and
// grants a request in the focused state with a probability sized from how
// often the state was requested in earlier trials, so the injection lands
// neither too early nor too late. Each state has a budget of injections;
// when every budget is spent, all budgets are reset.
//
// So that every trial counts, gofault's bsrr deviates in three ways
// (docs/policies.md):
//   - c in the probability is a low quantile of the state's per-trial
//     request counts, not their mean (stateInfo.c);
//   - re-focus: when the trial is past the point by which the focused state
//     was always first requested (stateInfo.late) and has not requested
//     it, the trial focuses on the next requested state that has budget,
//     with a probability sized from the requests the state has left;
//   - Legolas's implementation's reset rule: at least 30 trials since the
//     last reset, fewer than half of them injected: all budgets reset.
type bsrr struct {
	env    Env
	key    string
	sites  []uint32
	trials running[bsrrTrial]

	// mem is persisted across trials (and a campaign's stop and resume).
	mem struct {
		RRL   []string              `json:"rrl"`
		Visit map[string]*stateInfo `json:"visit"`
		// Since counts the trials since the last reset of the budgets,
		// Injected those of them that injected.
		Since    int `json:"since,omitempty"`
		Injected int `json:"injected,omitempty"`
		// Lengths are the request counts of the last trials.
		Lengths []int `json:"lengths,omitempty"`
	}
}

// bsrrTrial is bsrr's state of one running trial.
type bsrrTrial struct {
	rng  *rand.Rand
	q    quota
	seen map[string]*thisTrial
	// refocus is the state the trial focuses on instead of the front of
	// the round-robin list, once that one is late; "" if none.
	refocus string
}

func newBSRR(env Env) (Policy, error) {
	key, err := checkKey(env.Key)
	if err != nil {
		return nil, err
	}
	b := &bsrr{env: env, key: key, sites: env.candidateSites()}
	b.mem.Visit = map[string]*stateInfo{}
	return b, nil
}

func (b *bsrr) Name() string { return "bsrr" }

func (b *bsrr) budget() int {
	if b.env.Budget <= 0 {
		return 5
	}
	return b.env.Budget
}

// Begin is setupNewTrial.
func (b *bsrr) Begin(info TrialInfo) Plan {
	b.trials.begin(info.Index, &bsrrTrial{
		rng:  trialRand(b.env.Seed, info.Index),
		q:    newQuota(b.env.perTrial(), true), // occurrence counts need every request
		seen: map[string]*thisTrial{},
	})
	m := &b.mem
	b.resetIfAllUsed()
	// Rotate the state focused in the last trial to the back.
	for len(m.RRL) > 0 {
		s := m.RRL[0]
		m.RRL = m.RRL[1:]
		if in := m.Visit[s]; in == nil || in.Budget > 0 {
			m.RRL = append(m.RRL, s)
			break
		}
	}
	for len(m.RRL) > 0 && m.Visit[m.RRL[0]] != nil && m.Visit[m.RRL[0]].Budget == 0 {
		m.RRL = m.RRL[1:]
	}
	for _, in := range m.Visit {
		in.Prob = injectProbability(in.c())
	}
	return Plan{Sites: b.sites, Stacks: true, States: true}
}

// resetIfAllUsed gives every state its budget back once all are spent.
func (b *bsrr) resetIfAllUsed() {
	for _, in := range b.mem.Visit {
		if in.Budget > 0 {
			return
		}
	}
	b.reset()
}

// reset gives every state its budget back.
func (b *bsrr) reset() {
	m := &b.mem
	if len(m.Visit) == 0 {
		return
	}
	keys := make([]string, 0, len(m.Visit))
	for k, in := range m.Visit {
		in.Budget = b.budget()
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m.RRL = keys
	m.Since, m.Injected = 0, 0
}

// focus is the state trial t grants in.
//
// The focus is the first state of the round-robin list that has budget
// left: trials run in parallel spend a state's budget between two Begins,
// and a trial focused on a spent state would inject nothing.
func (b *bsrr) focus(t *bsrrTrial) string {
	if t.refocus != "" {
		return t.refocus
	}
	for _, s := range b.mem.RRL {
		if in := b.mem.Visit[s]; in == nil || in.Budget > 0 {
			return s
		}
	}
	return ""
}

// Decide is shouldInject.
func (b *bsrr) Decide(req *Request) Decision {
	t := b.trials.of(req.Trial)
	if t == nil || req.Site == nil {
		return Decision{}
	}
	// A request where no allowed fault is offered (a member of another
	// role, a kind this site cannot take) is no state to focus on: its
	// trials would spend their focus there and inject nothing (under
	// faults.kinds=[pause] or [rot], 11 of 15 of bsrr's trials in the
	// portfolio's bench did).
	fs := b.env.faultsAt(req)
	if len(fs) == 0 {
		return Decision{}
	}
	m := &b.mem
	cur := stateKey(b.key, req)
	in := m.Visit[cur]
	if in == nil {
		in = &stateInfo{Budget: b.budget(), Prob: injectProbability(0)}
		m.Visit[cur] = in
		m.RRL = append(m.RRL, cur)
	}
	in.Occur++
	tt := t.seen[cur]
	if tt == nil {
		tt = &thisTrial{first: req.Seq}
		t.seen[cur] = tt
		in.Trials++
	}
	tt.n++
	if t.q.full() || len(m.RRL) == 0 {
		return Decision{}
	}
	prob := in.Prob
	if f := b.focus(t); f != cur {
		if t.refocus != "" || t.seen[f] != nil || !b.late(f, in, req.Seq) {
			return Decision{}
		}
		// The focused state is late: focus on this one, with a
		// probability sized from the requests it has left.
		t.refocus = cur
	}
	if t.refocus == cur {
		prob = injectProbability(max(1, in.c()-tt.n+1))
	} else if in.Budget <= 0 {
		return Decision{}
	}
	if t.rng.Float64() >= prob {
		return Decision{}
	}
	in.Budget = max(0, in.Budget-1)
	return t.q.grant(fs[t.rng.IntN(len(fs))])
}

// late reports whether, at request seq, the trial should give up on the
// focused state f, which it has not requested, for state in: once f is
// late, a state that has budget; once the trial is halfway from there to
// its typical end, any state (a trial that injects nothing is worth less
// than a budget).
func (b *bsrr) late(f string, in *stateInfo, seq int) bool {
	fi := b.mem.Visit[f]
	if fi == nil {
		return false
	}
	typical := lowCount(b.mem.Lengths)
	l := fi.late(typical)
	if len(fi.First) == 0 {
		// No ended trial saw f yet (the first trials of a parallel
		// campaign, all begun before any ended): f is late past twice
		// where the running trials that saw it first saw it.
		first := -1
		for _, o := range b.trials.m {
			if tt := o.seen[f]; tt != nil {
				first = max(first, tt.first)
			}
		}
		if first >= 0 {
			l = min(l, 2*first+lateSlack)
		}
	}
	if seq <= l {
		return false
	}
	if in.Budget > 0 {
		return true
	}
	return typical > 0 && seq > l+(typical-l)/2
}

// End learns the trial's per-state counts and applies the reset rule.
func (b *bsrr) End(out Outcome) {
	m := &b.mem
	if t := b.trials.end(out.Index); t != nil {
		for k, tt := range t.seen {
			in := m.Visit[k]
			in.Counts = pushCount(in.Counts, tt.n)
			in.First = pushCount(in.First, tt.first)
		}
	}
	if out.Requests > 0 {
		m.Lengths = pushCount(m.Lengths, out.Requests)
	}
	m.Since++
	if len(out.Injections) > 0 {
		m.Injected++
	}
	if m.Since >= resetAfter && 2*m.Injected < m.Since {
		b.reset()
	}
}

func (b *bsrr) Snapshot() ([]byte, error) { return json.Marshal(&b.mem) }

func (b *bsrr) Restore(data []byte) error {
	if err := json.Unmarshal(data, &b.mem); err != nil {
		return fmt.Errorf("restore bsrr policy: %w", err)
	}
	if b.mem.Visit == nil {
		b.mem.Visit = map[string]*stateInfo{}
	}
	return nil
}

// newStateOnly is Legolas's new-state-only baseline: a request is granted
// only if no earlier trial injected in its state (with the node's role,
// see stateKey); the first such request of a trial is granted. When the
// trials reach no state left untried, it widens the key (once) to the next
// finer one — state+site, then state+site+stack, then that on each node —
// and is exhausted when a trial under the finest key injected nothing.
type newStateOnly struct {
	env    Env
	sites  []uint32
	ids    once // state keys injected so far, by key level
	trials running[onceRun]
}

func newNewStateOnly(env Env) (Policy, error) {
	key, err := checkKey(env.Key)
	if err != nil {
		return nil, err
	}
	var levels []level
	for _, k := range KeyNames[slices.Index(KeyNames, key):] {
		levels = append(levels, func(req *Request, _ Fault) string { return stateKey(k, req) })
	}
	levels = append(levels, func(req *Request, _ Fault) string { return stateKey(KeyStateSiteStack, req) + "@" + req.Node })
	return &newStateOnly{env: env, sites: env.candidateSites(), ids: newOnce(levels...)}, nil
}

func (n *newStateOnly) Name() string { return "new-state-only" }

func (n *newStateOnly) Begin(info TrialInfo) Plan {
	beginOnce(&n.trials, &n.ids, &n.env, info.Index)
	if n.ids.mem.Exhausted {
		return Plan{}
	}
	return Plan{Sites: n.sites, Stacks: true, States: true}
}

func (n *newStateOnly) Decide(req *Request) Decision {
	t := n.trials.of(req.Trial)
	if t == nil || req.Site == nil {
		return Decision{}
	}
	fs := n.env.faultsAt(req)
	if len(fs) == 0 {
		return Decision{}
	}
	n.ids.see(t.ids, req, Fault{})
	if t.q.full() || !n.ids.untried(req, Fault{}) {
		return Decision{}
	}
	n.ids.grant(t.ids, req, Fault{})
	return t.q.grant(fs[t.rng.IntN(len(fs))])
}

func (n *newStateOnly) End(out Outcome) { endOnce(&n.ids, &n.trials, out.Index) }

// Exhausted reports that no key, however widened, is left to try.
func (n *newStateOnly) Exhausted() bool { return n.ids.mem.Exhausted }

func (n *newStateOnly) Snapshot() ([]byte, error) { return json.Marshal(&n.ids.mem) }

func (n *newStateOnly) Restore(data []byte) error {
	if err := n.ids.restore(data); err != nil {
		return fmt.Errorf("restore new-state-only policy: %w", err)
	}
	return nil
}
