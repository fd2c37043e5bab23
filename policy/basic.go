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

// newQuota is the quota of a trial; counting as in quota.counting.
func newQuota(limit int, counting bool) quota { return quota{limit: limit, counting: counting} }

// grant records one injection and returns the decision to send.
func (q *quota) grant(f Fault) Decision {
	q.granted++
	return Decision{Fault: f, Done: q.full() && !q.counting, Last: q.full()}
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
//
// The probability is Legolas's p = 1 − e^(ln 0.01/(c+1)) with c a low
// quantile of the request counts of recent trials (lowCount), not their
// mean: a few long trials (a delay or a crash multiplies a trial's
// requests) would otherwise size p too low for the others, which then end
// without a grant.
//
// With a Memory of earlier campaigns (Env.Memory), the grants and the
// fault drawn are weighted by what those campaigns saw of each fault
// (decideWithMemory); without one it draws exactly as above.
type random struct {
	env    Env
	sites  []uint32
	trials running[randomTrial]
	// Requests seen in earlier trials, to size the probability.
	mem struct {
		Trials   int `json:"trials"`
		Requests int `json:"requests"`
		// Counts are the request counts of the last trials.
		Counts []int `json:"counts,omitempty"`
	}
}

// randomTrial is random's state of one running trial.
type randomTrial struct {
	rng *rand.Rand
	q   quota
	p   float64
	// eligible counts the requests where a fault could be granted, of
	// the seen ones: the probability is sized on them (a disconnect
	// needs a known peer, so fewer requests than the trial's can take
	// one).
	eligible, seen int
	// With a Memory: weighted sums the eligible requests' largest fault
	// weight (Tally.Weight), which sizes the probability instead, and
	// granted is what the grant's fault had earned (for Explain).
	weighted float64
	granted  *memoryGrant
}

// memoryGrant is a grant of random with a Memory: the fault, where, and
// what the earlier campaigns saw of it and of the others offered there.
type memoryGrant struct {
	fault, site string
	tally       Tally
	offered     int // faults offered at the request
	known       int // of them, tried before without a symptom
}

func newRandom(env Env) (Policy, error) {
	return &random{env: env, sites: env.candidateSites()}, nil
}

func (r *random) Name() string { return "random" }

func (r *random) Begin(info TrialInfo) Plan {
	c := 20 // requests expected in a trial before any was seen
	miss := 0.01
	switch {
	case info.Expected > 0: // this trial's own workload, measured
		c, miss = info.Expected, measuredMiss
	case len(r.mem.Counts) > 0:
		c = lowCount(r.mem.Counts)
	case r.mem.Trials > 0: // a snapshot from before Counts
		c = r.mem.Requests / r.mem.Trials
	}
	r.trials.begin(info.Index, &randomTrial{
		rng: trialRand(r.env.Seed, info.Index),
		q:   newQuota(r.env.perTrial(), true), // the request count needs every request
		p:   min(1, injectProbabilityMissing(c, miss)*float64(r.env.perTrial())),
	})
	return Plan{Sites: r.sites, Stacks: true, States: true}
}

func (r *random) Decide(req *Request) Decision {
	t := r.trials.of(req.Trial)
	if t == nil || req.Site == nil {
		return Decision{}
	}
	fs := r.env.faultsAt(req)
	t.seen++
	if len(fs) > 0 {
		t.eligible++
	}
	if r.env.Memory.Len() > 0 {
		return r.decideWithMemory(t, req, fs)
	}
	if t.q.full() || len(fs) == 0 || t.rng.Float64() >= t.p {
		return Decision{}
	}
	return t.q.grant(fs[t.rng.IntN(len(fs))])
}

// decideWithMemory is Decide with a Memory: a request is granted with the
// trial's probability times the largest weight of the faults offered
// there, and the fault drawn in proportion to the weights, so a request
// whose faults were all tried quietly before is rarely granted and a
// never-tried fault is preferred to its tried neighbours. The
// probability is sized on the weighted requests (End), so a trial still
// gets about one grant.
func (r *random) decideWithMemory(t *randomTrial, req *Request, fs []Fault) Decision {
	if len(fs) == 0 {
		return Decision{}
	}
	ws, top := r.env.Memory.weigh(req, fs)
	t.weighted += top
	if t.q.full() || t.rng.Float64() >= t.p*top {
		return Decision{}
	}
	i := pickWeighted(t.rng, ws)
	g := &memoryGrant{fault: faultName(req.Site, fs[i]), site: req.Site.ID, tally: r.env.Memory.Of(req.Site, fs[i], req.Role), offered: len(fs)}
	for _, w := range ws {
		if w < 1 {
			g.known++
		}
	}
	t.granted = g
	return t.q.grant(fs[i])
}

// Explain says, for a trial of random with a Memory, what the earlier
// campaigns had seen of the fault it granted; the zero Choice without a
// Memory or a grant.
func (r *random) Explain(index int) Choice {
	t := r.trials.of(index)
	if t == nil || t.granted == nil {
		return Choice{}
	}
	g := t.granted
	seen := "never tried before"
	if g.tally.Tried > 0 {
		seen = fmt.Sprintf("tried %d times before (%d quiet, %d with a symptom)", g.tally.Tried, g.tally.Quiet, g.tally.Symptom)
	}
	return Choice{Technique: "random", Why: fmt.Sprintf("with the memory of %s: %s at %s, %s; %d of the %d faults offered there had been tried quietly",
		r.env.Memory, g.fault, g.site, seen, g.known, g.offered)}
}

func (r *random) End(out Outcome) {
	n := out.Requests
	if t := r.trials.of(out.Index); t != nil && t.seen > 0 && r.env.Memory.Len() > 0 {
		// The weighted eligible requests, estimated likewise.
		n = int(t.weighted*float64(out.Requests)/float64(t.seen) + 0.5)
	} else if t != nil && t.seen > 0 {
		// The trial's eligible requests, estimated from the share of
		// those seen when the policy did not see them all.
		n = t.eligible
		if t.seen < out.Requests {
			n = int(int64(out.Requests) * int64(t.eligible) / int64(t.seen))
		}
	}
	r.trials.end(out.Index)
	r.mem.Trials++
	r.mem.Requests += n
	if n > 0 {
		r.mem.Counts = pushCount(r.mem.Counts, n)
	}
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
// once in each role of the node (once where no role is known), in catalog
// order of the sites as they are reached: the first request at a site with
// an untried fault gets that site's next untried fault. When no site the
// trials reach has an untried fault, it widens (once): the same faults
// again on each node (where no role is known), then in each abstract state
// of the asking task; it is exhausted when a trial under the last identity
// injected nothing.
type exhaustive struct {
	env    Env
	sites  []uint32
	ids    once // site ID + fault key + role, then + role or node, then + state
	trials running[onceRun]
}

func newExhaustive(env Env) (Policy, error) {
	if env.Catalog == nil {
		return nil, fmt.Errorf("exhaustive policy needs a catalog")
	}
	e := &exhaustive{env: env, sites: env.candidateSites(), ids: newOnce(
		func(req *Request, f Fault) string { return req.Site.ID + "|" + f.Key() + roleOf(req) },
		func(req *Request, f Fault) string { return req.Site.ID + "|" + f.Key() + "|" + where(req) },
		func(req *Request, f Fault) string {
			return req.Site.ID + "|" + f.Key() + "|" + where(req) + "|" + stateOf(req)
		},
	)}
	return e, nil
}

func (e *exhaustive) Name() string { return "exhaustive" }

func (e *exhaustive) Begin(info TrialInfo) Plan {
	beginOnce(&e.trials, &e.ids, &e.env, info.Index)
	if e.ids.mem.Exhausted {
		return Plan{}
	}
	return Plan{Sites: e.sites, Stacks: true, States: true}
}

func (e *exhaustive) Decide(req *Request) Decision {
	if req.Site == nil {
		return Decision{}
	}
	return decideOnce(&e.ids, e.trials.of(req.Trial), req, e.env.faultsAt(req))
}

func (e *exhaustive) End(out Outcome) { endOnce(&e.ids, &e.trials, out.Index) }

func (e *exhaustive) Exhausted() bool { return e.ids.mem.Exhausted }

func (e *exhaustive) Snapshot() ([]byte, error) { return json.Marshal(&e.ids.mem) }

func (e *exhaustive) Restore(data []byte) error {
	if err := e.ids.restore(data); err != nil {
		return fmt.Errorf("restore exhaustive policy: %w", err)
	}
	return nil
}

// fate is FATE's policy: a request is granted only when its failure ID —
// the site, the call stack that reached it and the fault, with the node's
// role where it is known (the leader's write and a follower's are
// different failures) — was never injected before in the campaign. One new
// failure per trial by default. When the trials reach no new failure ID,
// it widens the ID (once): with the abstract state of the asking task, then
// with the node where no role is known; it is exhausted when a trial under
// the last ID injected nothing.
type fate struct {
	env    Env
	sites  []uint32
	ids    once
	trials running[onceRun]
}

func newFATE(env Env) (Policy, error) {
	f := &fate{env: env, sites: env.candidateSites(), ids: newOnce(
		func(req *Request, f Fault) string {
			return FailureID(req.Site.ID, StackKey(req.Stack), f) + roleOf(req)
		},
		func(req *Request, f Fault) string {
			return FailureID(req.Site.ID, StackKey(req.Stack), f) + roleOf(req) + "|" + stateOf(req)
		},
		func(req *Request, f Fault) string {
			return FailureID(req.Site.ID, StackKey(req.Stack), f) + "|" + stateOf(req) + "|" + where(req)
		},
	)}
	return f, nil
}

func (f *fate) Name() string { return "fate" }

func (f *fate) Begin(info TrialInfo) Plan {
	beginOnce(&f.trials, &f.ids, &f.env, info.Index)
	if f.ids.mem.Exhausted {
		return Plan{}
	}
	return Plan{Sites: f.sites, Stacks: true, States: true}
}

// FailureID is FATE's identity of a fault: site, stack and fault.
func FailureID(site string, stackKey string, fault Fault) string {
	return site + "|" + stackKey + "|" + fault.Key()
}

func (f *fate) Decide(req *Request) Decision {
	if req.Site == nil {
		return Decision{}
	}
	return decideOnce(&f.ids, f.trials.of(req.Trial), req, f.env.faultsAt(req))
}

func (f *fate) End(out Outcome) { endOnce(&f.ids, &f.trials, out.Index) }

// Exhausted reports that no failure ID, however widened, is left to try.
func (f *fate) Exhausted() bool { return f.ids.mem.Exhausted }

func (f *fate) Snapshot() ([]byte, error) { return json.Marshal(&f.ids.mem) }

func (f *fate) Restore(data []byte) error {
	if err := f.ids.restore(data); err != nil {
		return fmt.Errorf("restore fate policy: %w", err)
	}
	return nil
}
