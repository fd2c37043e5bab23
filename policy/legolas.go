package policy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
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
	// goroutine's task: (task unit, state). Legolas's default.
	KeyState = "state"
	// KeyStateSite also separates the fault sites within a state.
	KeyStateSite = "state+site"
	// KeyStateSiteStack also separates the call stacks reaching a site.
	KeyStateSiteStack = "state+site+stack"
)

// KeyNames are the valid Env.Key values.
var KeyNames = []string{KeyState, KeyStateSite, KeyStateSiteStack}

// stateKey returns the injection key of a request.
func stateKey(key string, req *Request) string {
	k := "t" + strconv.FormatUint(uint64(req.Task), 10) + "/s" + strconv.FormatUint(uint64(req.State), 10)
	switch key {
	case KeyStateSite:
		k += "@" + req.Site.ID
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
	// trials in which it appeared; Occur/Trials is c in p = 1 − e^(ln 0.01/(c+1)).
	Occur  int     `json:"occur"`
	Trials int     `json:"trials"`
	Prob   float64 `json:"prob"`
}

// bsrr is Legolas's budgeted state round robin (Algorithm 2): it focuses
// each trial on one abstract state, taking states in round-robin order, and
// grants a request in the focused state with a probability sized from how
// often the state was requested in earlier trials, so the injection lands
// neither too early nor too late. Each state has a budget of injections;
// when every budget is spent, all budgets are reset.
type bsrr struct {
	env   Env
	key   string
	sites []uint32
	rng   *rand.Rand
	q     quota

	// mem is persisted across trials (and a campaign's stop and resume).
	mem struct {
		RRL   []string              `json:"rrl"`
		Visit map[string]*stateInfo `json:"visit"`
	}
	seenThisTrial map[string]bool
}

func newBSRR(env Env) (Policy, error) {
	key, err := checkKey(env.Key)
	if err != nil {
		return nil, err
	}
	b := &bsrr{env: env, key: key, sites: env.candidateSites()}
	b.mem.Visit = map[string]*stateInfo{}
	b.q.counting = true // occurrence counts need every request
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
	b.rng = trialRand(b.env.Seed, info.Index)
	b.q.reset(b.env.perTrial())
	b.seenThisTrial = map[string]bool{}
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
		c := 0
		if in.Trials > 0 {
			c = in.Occur / in.Trials
		}
		in.Prob = injectProbability(c)
	}
	return Plan{Sites: b.sites, Stacks: true, States: true}
}

// resetIfAllUsed gives every state its budget back once all are spent.
func (b *bsrr) resetIfAllUsed() {
	m := &b.mem
	if len(m.Visit) == 0 {
		return
	}
	for _, in := range m.Visit {
		if in.Budget > 0 {
			return
		}
	}
	keys := make([]string, 0, len(m.Visit))
	for k, in := range m.Visit {
		in.Budget = b.budget()
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m.RRL = keys
}

// Decide is shouldInject.
func (b *bsrr) Decide(req *Request) Decision {
	if req.Site == nil {
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
	if !b.seenThisTrial[cur] {
		b.seenThisTrial[cur] = true
		in.Trials++
	}
	if b.q.full() || len(m.RRL) == 0 || m.RRL[0] != cur {
		return Decision{}
	}
	fs := b.env.faults(req.Site)
	if len(fs) == 0 || in.Budget <= 0 || b.rng.Float64() >= in.Prob {
		return Decision{}
	}
	in.Budget--
	return b.q.grant(fs[b.rng.IntN(len(fs))])
}

func (b *bsrr) End(Outcome) {}

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
// only if no earlier trial injected in its state; the first such request of
// a trial is granted.
type newStateOnly struct {
	env   Env
	key   string
	sites []uint32
	rng   *rand.Rand
	q     quota
	tried tried // state keys injected so far
}

func newNewStateOnly(env Env) (Policy, error) {
	key, err := checkKey(env.Key)
	if err != nil {
		return nil, err
	}
	return &newStateOnly{env: env, key: key, sites: env.candidateSites(), tried: tried{}}, nil
}

func (n *newStateOnly) Name() string { return "new-state-only" }

func (n *newStateOnly) Begin(info TrialInfo) Plan {
	n.rng = trialRand(n.env.Seed, info.Index)
	n.q.reset(n.env.perTrial())
	return Plan{Sites: n.sites, Stacks: true, States: true}
}

func (n *newStateOnly) Decide(req *Request) Decision {
	if n.q.full() || req.Site == nil {
		return Decision{Done: n.q.full()}
	}
	k := stateKey(n.key, req)
	fs := n.env.faults(req.Site)
	if n.tried[k] || len(fs) == 0 {
		return Decision{}
	}
	n.tried[k] = true
	return n.q.grant(fs[n.rng.IntN(len(fs))])
}

func (n *newStateOnly) End(Outcome) {}

func (n *newStateOnly) Snapshot() ([]byte, error) { return json.Marshal(n.tried) }

func (n *newStateOnly) Restore(data []byte) error {
	if err := json.Unmarshal(data, &n.tried); err != nil {
		return fmt.Errorf("restore new-state-only policy: %w", err)
	}
	return nil
}
