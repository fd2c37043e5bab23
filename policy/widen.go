package policy

import (
	"encoding/json"
	"math/rand/v2"
	"sort"
	"strconv"
)

// A level is one identity of faults, from the published one (level 0) to
// ever finer ones: the function returns the identity of fault f at the
// request.
type level func(req *Request, f Fault) string

// once is the memory of the policies that grant each fault identity once
// (exhaustive, fate, new-state-only, the Sieve policies). When the space
// of an identity is explored, they do not run fault-free trials: they
// widen to the next, finer identity (the same site on another node — in
// another role where the node's role is known —, in another abstract
// state, with another delay), and report exhaustion only
// when a trial at the finest identity injected nothing and requested
// nothing untried.
//
// The rule works from what the policy saw: the policies keep the agents
// asking for the whole trial (quota.counting), so at End the policy knows
// every identity the trial requested. If none of them is still untried at
// the current level, the next trial would most likely inject nothing, so
// the policy moves to the narrowest level under which the trial left an
// identity untried. Finer identities include the coarser ones (a fault new
// under the published identity is new under every finer one), so widening
// loses nothing but the order.
type once struct {
	levels []level
	// implied is the number of levels that a grant marks as tried
	// whatever the current level: a fault tried under one identity is
	// tried under every finer one. Levels after them are rounds of
	// repetition (Sieve's delay factors), which a grant marks only up to
	// the current level.
	implied int

	mem struct {
		// Tried holds "level:identity" of every fault granted.
		Tried     tried `json:"tried"`
		Level     int   `json:"level"`
		Exhausted bool  `json:"exhausted,omitempty"`
	}
}

// onceTrial is what once records of one running trial.
type onceTrial struct {
	// requested holds, per level from once.mem.Level on, the identities
	// the trial requested.
	requested []map[string]bool
	asked     bool
	injected  bool
}

func newOnce(levels ...level) once {
	o := once{levels: levels, implied: len(levels)}
	o.mem.Tried = tried{}
	return o
}

// begin starts a trial.
func (o *once) begin() *onceTrial {
	return &onceTrial{requested: make([]map[string]bool, len(o.levels))}
}

func (o *once) key(l int, req *Request, f Fault) string {
	return strconv.Itoa(l) + ":" + o.levels[l](req, f)
}

// see records that trial t requested fault f at req.
func (o *once) see(t *onceTrial, req *Request, f Fault) {
	t.asked = true
	for l := o.mem.Level; l < len(o.levels); l++ {
		if t.requested[l] == nil {
			t.requested[l] = map[string]bool{}
		}
		t.requested[l][o.key(l, req, f)] = true
	}
}

// untried reports whether fault f at req is untried at the current level.
func (o *once) untried(req *Request, f Fault) bool {
	return !o.mem.Tried[o.key(o.mem.Level, req, f)]
}

// grant records fault f at req as tried at every implied level and up to
// the current one.
func (o *once) grant(t *onceTrial, req *Request, f Fault) {
	for l := range max(o.implied, o.mem.Level+1) {
		o.mem.Tried[o.key(l, req, f)] = true
	}
	t.injected = true
}

// end widens after trial t: to the narrowest level, from the current one
// on, under which the trial requested a fault still untried; to exhaustion
// when there is none and the trial injected nothing. A trial that
// requested nothing at all (its cluster never got going) tells nothing.
func (o *once) end(t *onceTrial) {
	if t == nil || !t.asked {
		return
	}
	for l := o.mem.Level; l < len(o.levels) && l < len(t.requested); l++ {
		for k := range t.requested[l] {
			if !o.mem.Tried[k] {
				o.mem.Level = l
				return
			}
		}
	}
	if !t.injected {
		o.mem.Exhausted = true
		return
	}
	o.mem.Level = len(o.levels) - 1
}

// restore restores o's memory from a snapshot: the current form (an object
// with "tried" and "level"), or a set of identities written before the
// policy widened (kept as level 0).
func (o *once) restore(data []byte) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	if _, ok := probe["level"]; ok {
		err := json.Unmarshal(data, &o.mem)
		if o.mem.Tried == nil {
			o.mem.Tried = tried{}
		}
		return err
	}
	var old tried
	if raw, ok := probe["tried"]; ok { // a Sieve policy's
		data = raw
	}
	if err := json.Unmarshal(data, &old); err != nil {
		return err
	}
	for k := range old {
		o.mem.Tried["0:"+k] = true
	}
	return nil
}

// onceRun is the state of one running trial of a policy built on once.
type onceRun struct {
	q   quota
	ids *onceTrial
	rng *rand.Rand
}

// beginOnce registers trial index of a policy built on ids.
func beginOnce(trials *running[onceRun], ids *once, env *Env, index int) {
	trials.begin(index, &onceRun{
		q:   newQuota(env.perTrial(), true), // widening needs every request
		ids: ids.begin(),
		rng: trialRand(env.Seed, index),
	})
}

// decideOnce grants the first untried fault of fs at req, for the
// policies that grant each identity once and take the first untried one.
func decideOnce(ids *once, t *onceRun, req *Request, fs []Fault) Decision {
	if t == nil {
		return Decision{}
	}
	for _, f := range fs {
		ids.see(t.ids, req, f)
	}
	if t.q.full() {
		return Decision{}
	}
	for _, f := range fs {
		if ids.untried(req, f) {
			ids.grant(t.ids, req, f)
			return t.q.grant(f)
		}
	}
	return Decision{}
}

// endOnce ends trial index of a policy built on ids.
func endOnce(ids *once, trials *running[onceRun], index int) {
	if t := trials.end(index); t != nil {
		ids.end(t.ids)
	}
}

// roleOf is the node's role as part of an identity, "|r:StateLeader", or
// "" when it is unknown: an identity with an unknown role is the one the
// policy had before roles.
func roleOf(req *Request) string {
	if req.Role == "" {
		return ""
	}
	return "|r:" + req.Role
}

// where is where on the cluster a request is for the identities that
// widen to "another node": its node's role when known ("r:StateLeader"),
// else the node. With a role, a fault tried on the leader is tried on
// whichever node leads, and another follower is no new place.
func where(req *Request) string {
	if req.Role != "" {
		return "r:" + req.Role
	}
	return req.Node
}

// stateOf is the abstract state of a request, as text.
func stateOf(req *Request) string {
	return "t" + strconv.FormatUint(uint64(req.Task), 10) + "/s" + strconv.FormatUint(uint64(req.State), 10)
}

// lowCount is the low quantile (about the 12th percentile) of per-trial
// request counts: the count that almost every trial reaches. Sizing a
// probability from the mean leaves the trials shorter than the mean
// without a grant when a few trials are long (a delay or a crash can
// multiply a trial's requests).
func lowCount(counts []int) int {
	if len(counts) == 0 {
		return 0
	}
	s := append([]int(nil), counts...)
	sort.Ints(s)
	return s[len(s)/8]
}

// countWindow is how many recent trials' counts lowCount looks at.
const countWindow = 16

// pushCount appends n to counts, keeping the last countWindow.
func pushCount(counts []int, n int) []int {
	counts = append(counts, n)
	if len(counts) > countWindow {
		counts = counts[len(counts)-countWindow:]
	}
	return counts
}

// running holds a policy's state of each trial begun and not yet ended:
// with trials.parallel > 1 several trials run at once, and each keeps its
// own quota, random source and records.
type running[T any] struct {
	m map[int]*T
}

// begin registers the state of trial index.
func (r *running[T]) begin(index int, t *T) {
	if r.m == nil {
		r.m = map[int]*T{}
	}
	r.m[index] = t
}

// of returns the state of trial index, nil if it is not running: a
// request of a trial that ended is not granted.
func (r *running[T]) of(index int) *T { return r.m[index] }

// end forgets trial index and returns its state (nil if not running).
func (r *running[T]) end(index int) *T {
	t := r.m[index]
	delete(r.m, index)
	return t
}
