package policy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

func init() {
	Register("none", func(Env) (Policy, error) { return nonePolicy{}, nil })
	Register("random", newRandom)
	Register("exhaustive", newExhaustive)
	Register("fate", newFATE)
}

// nonePolicy never injects: the campaign runs fault-free trials.
type nonePolicy struct{}

func (nonePolicy) Name() string             { return "none" }
func (nonePolicy) Begin(TrialInfo) Plan     { return Plan{} }
func (nonePolicy) Decide(*Request) Decision { return Decision{Done: true} }
func (nonePolicy) End(Outcome)              {}

// quota counts the injections granted in the current trial.
type quota struct {
	limit, granted int
	// counting keeps the agents asking after the quota is used, because
	// the policy learns from how many requests a whole trial makes.
	counting bool
}

func (q *quota) reset(limit int) { q.limit, q.granted = limit, 0 }

// grant records one injection and returns the decision to send.
func (q *quota) grant(f Fault) Decision {
	q.granted++
	return Decision{Fault: f, Done: q.full() && !q.counting}
}

func (q *quota) full() bool { return q.granted >= q.limit }

// trialRand returns the random source of trial index under seed, so each
// trial's decisions depend only on the seed, the trial and its requests.
func trialRand(seed int64, index int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(index)))
}

// random grants each request with a probability sized so that about one
// request per trial is granted, wherever it falls, and picks the fault
// uniformly among those the site allows.
type random struct {
	env   Env
	sites []uint32
	rng   *rand.Rand
	q     quota
	// Requests seen in earlier trials, to size the probability.
	mem struct {
		Trials   int `json:"trials"`
		Requests int `json:"requests"`
	}
	p float64
}

func newRandom(env Env) (Policy, error) {
	r := &random{env: env, sites: env.candidateSites()}
	r.q.counting = true
	return r, nil
}

func (r *random) Name() string { return "random" }

func (r *random) Begin(info TrialInfo) Plan {
	r.rng = trialRand(r.env.Seed, info.Index)
	r.q.reset(r.env.perTrial())
	c := 20 // requests expected in a trial before any was seen
	if r.mem.Trials > 0 {
		c = r.mem.Requests / r.mem.Trials
	}
	r.p = injectProbability(c) * float64(r.env.perTrial())
	return Plan{Sites: r.sites, Stacks: true, States: true}
}

func (r *random) Decide(req *Request) Decision {
	if r.q.full() || req.Site == nil {
		return Decision{}
	}
	fs := r.env.faults(req.Site)
	if len(fs) == 0 || r.rng.Float64() >= r.p {
		return Decision{}
	}
	return r.q.grant(fs[r.rng.IntN(len(fs))])
}

func (r *random) End(out Outcome) {
	r.mem.Trials++
	r.mem.Requests += out.Requests
}

func (r *random) Snapshot() ([]byte, error) { return json.Marshal(&r.mem) }

func (r *random) Restore(data []byte) error {
	if err := json.Unmarshal(data, &r.mem); err != nil {
		return fmt.Errorf("restore random policy: %w", err)
	}
	return nil
}

// tried is a set of fault identities already injected, kept across trials.
type tried map[string]bool

// exhaustive injects every allowed fault at every reachable site exactly
// once, in catalog order of the sites as they are reached: the first request
// at a site with an untried fault gets that site's next untried fault.
type exhaustive struct {
	env   Env
	q     quota
	tried tried // site ID + fault key
}

func newExhaustive(env Env) (Policy, error) {
	if env.Catalog == nil {
		return nil, fmt.Errorf("exhaustive policy needs a catalog")
	}
	return &exhaustive{env: env, tried: tried{}}, nil
}

func (e *exhaustive) Name() string { return "exhaustive" }

func (e *exhaustive) untried(i uint32) (Fault, bool) {
	s := &e.env.Catalog.Sites[i]
	for _, f := range e.env.faults(s) {
		if !e.tried[s.ID+"|"+f.Key()] {
			return f, true
		}
	}
	return Fault{}, false
}

func (e *exhaustive) Begin(info TrialInfo) Plan {
	e.q.reset(e.env.perTrial())
	var sites []uint32
	for i := range e.env.Catalog.Sites {
		if _, ok := e.untried(uint32(i)); ok {
			sites = append(sites, uint32(i))
		}
	}
	return Plan{Sites: sites, Stacks: true, States: true}
}

func (e *exhaustive) Decide(req *Request) Decision {
	if e.q.full() || req.Site == nil {
		return Decision{Done: e.q.full()}
	}
	f, ok := e.untried(req.Site.Index)
	if !ok {
		return Decision{}
	}
	e.tried[req.Site.ID+"|"+f.Key()] = true
	return e.q.grant(f)
}

func (e *exhaustive) End(Outcome) {}

func (e *exhaustive) Exhausted() bool {
	for i := range e.env.Catalog.Sites {
		if _, ok := e.untried(uint32(i)); ok {
			return false
		}
	}
	return true
}

func (e *exhaustive) Snapshot() ([]byte, error) { return json.Marshal(e.tried) }

func (e *exhaustive) Restore(data []byte) error {
	if err := json.Unmarshal(data, &e.tried); err != nil {
		return fmt.Errorf("restore exhaustive policy: %w", err)
	}
	return nil
}

// fate is FATE's policy: a request is granted only when its failure ID —
// the site, the call stack that reached it and the fault — was never
// injected before in the campaign. One new failure per trial by default.
type fate struct {
	env   Env
	sites []uint32
	q     quota
	tried tried
}

func newFATE(env Env) (Policy, error) {
	return &fate{env: env, sites: env.candidateSites(), tried: tried{}}, nil
}

func (f *fate) Name() string { return "fate" }

func (f *fate) Begin(TrialInfo) Plan {
	f.q.reset(f.env.perTrial())
	return Plan{Sites: f.sites, Stacks: true, States: true}
}

// FailureID is FATE's identity of a fault: site, stack and fault.
func FailureID(site string, stackKey string, fault Fault) string {
	return site + "|" + stackKey + "|" + fault.Key()
}

func (f *fate) Decide(req *Request) Decision {
	if f.q.full() || req.Site == nil {
		return Decision{Done: f.q.full()}
	}
	sk := StackKey(req.Stack)
	for _, ft := range f.env.faults(req.Site) {
		id := FailureID(req.Site.ID, sk, ft)
		if !f.tried[id] {
			f.tried[id] = true
			return f.q.grant(ft)
		}
	}
	return Decision{}
}

func (f *fate) End(Outcome) {}

func (f *fate) Snapshot() ([]byte, error) { return json.Marshal(f.tried) }

func (f *fate) Restore(data []byte) error {
	if err := json.Unmarshal(data, &f.tried); err != nil {
		return fmt.Errorf("restore fate policy: %w", err)
	}
	return nil
}
