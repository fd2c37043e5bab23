package policy

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func init() { Register("spread", newSpread) }

// spread is random search spread over the sites rather than over the
// requests (issue 46, item 2). random grants each request with one
// probability, so its faults follow the request stream: a site asked a
// million times a campaign (a codec, the WAL's writes) takes almost every
// grant and a site asked a few hundred times (a defragmentation's rename)
// none. spread gives every site the campaign's trials reach about the
// same chance to be struck, whatever its request rate, and within a site
// spreads the strike over its requests.
//
// Each trial, at Begin, it takes a target site among the sites the
// earlier trials reached before their fault, or most of them reached
// (pool; within TrialInfo.Reach where the trial's reach is known), the
// sites taking turns in rounds of a random order (nextTarget), draws an
// occurrence k uniformly in 1..E, E the site's expected requests a trial
// (the lower quartile of its counts in its last spreadWindow trials that
// reached it), and grants the trial's k-th request at the site that can
// take a fault. The fault there is drawn kind first, then variant
// (drawFault), so that a pause and a stop of three lengths each do not
// make them six times as likely as an error.
//
// A site's turn is split over its call paths, where the requests come
// with stacks (Plan.Stacks): a site asked thousands of times a trial by a
// periodic commit and twice by a compaction is struck in the compaction
// in half its turns, not in one of a thousand. A request's path is its
// spreadDepth nearest callers below the site's own frame, function and
// line (callPath). The target site's paths that can be targets (as sites
// can: reached before a trial's fault, or by most trials) take turns as
// the sites do, and k is drawn over the chosen path's expected requests;
// the trial grants the k-th request at the site with that path, and the
// fallbacks below watch the path's requests. A site whose requests came
// without stacks (or none of whose paths can be a target) is aimed at as
// a whole.
//
// A trial whose target does not come (its timing differed, the site is
// reached one trial in five) must not go to waste. Three fallbacks:
//   - the target was reached fewer than k times when the trial passes the
//     point where its last request came in its recent trials, or 90 % of
//     the count almost every trial reaches (lowCount; 80 % where a recent
//     trial made fewer than k): its next request is granted;
//   - past the point where the target's first request came in its recent
//     trials without it (or 80 % of that count, for a site some trials do
//     not reach), or past the point above with fewer than k of its
//     requests, any request may be granted, with a Legolas probability
//     sized so that a trial goes without a fault about once in a hundred,
//     weighted by 1/E of its site so that the fallback too is spread over
//     sites;
//   - a site no earlier trial reached is struck at its first request with
//     the chance a target has, 1/(N+1) of N sites to aim at.
//
// The first trial, or one whose reach holds no site to aim at, has nothing
// to spread over: it grants as random does (one probability on every
// request, sized for one grant).
//
// With a Memory (Env.Memory), a site takes its turn as a target the less
// often the smaller the largest weight (Tally.Weight) of the faults it
// offers in the roles it was reached in, the fallback weighs each request
// by that of its faults, and the fault is drawn by the faults' weights, as
// random's draws are; a site's paths share its weight.
type spread struct {
	env    Env
	sites  []uint32
	trials running[spreadTrial]
	mem    spreadMemory
}

// spreadMemory is what spread learned of the earlier trials; it survives
// a stop (Snapshot). It is bounded by the catalog's sites times
// spreadPaths + 1 times spreadWindow. A memory without paths (spread's
// before they came) loads, and its sites are aimed at as wholes until a
// trial reaches their paths.
type spreadMemory struct {
	Trials int `json:"trials"`
	// Counts are the eligible request counts of the last trials.
	Counts []int `json:"counts,omitempty"`
	// Weights are, for the last trials, the mean fallback weight
	// (spread.weight) of their eligible requests, which sizes the
	// fallback's probability.
	Weights []float64 `json:"weights,omitempty"`
	// Sites are the sites the trials reached, by catalog index.
	Sites map[uint32]*siteHistory `json:"sites,omitempty"`
}

// siteHistory is what spread knows of one site from its last trials.
type siteHistory struct {
	reachHistory
	// Roles are the roles of the members it was reached in ("" when
	// none), spreadRoles at most: a Memory weighs its faults per role.
	Roles []string `json:"roles,omitempty"`
	// Targeted counts the trials that aimed at it, from the fewest of
	// the other sites' when it was first reached (nextTarget).
	Targeted int `json:"targeted,omitempty"`
	// Paths are its call paths (callPath), spreadPaths at most
	// (trimPaths).
	Paths map[uint64]*pathHistory `json:"paths,omitempty"`
}

// reachHistory is what spread knows of how the last trials reached a site
// or one of its call paths.
type reachHistory struct {
	// Trials counts the trials that reached it; Free those that reached
	// it before their first grant (or granted nothing). A site or path
	// that only the fault of a trial leads to (a node's recovery after a
	// crash) is no target, the trial's one fault being spent before it
	// comes: it is one when Free or reached by most trials (target).
	Trials int `json:"trials"`
	Free   int `json:"free,omitempty"`
	// Counts are its eligible requests in each of the last spreadWindow
	// trials that reached it; First and Last where its first and last
	// requests came in each (the trial's eligible request number, from
	// 1).
	Counts []int `json:"counts"`
	First  []int `json:"first"`
	Last   []int `json:"last"`
}

const (
	// spreadWindow is how many of a site's trials spread remembers.
	spreadWindow = 8
	// spreadRoles is how many roles of a site spread remembers.
	spreadRoles = 4
	// spreadMiss is the chance of a trial without a grant the fallback
	// is sized for.
	spreadMiss = 0.01
)

// expected is the expected requests a trial: the lower quartile of the
// recent counts, at least 1.
func (h *reachHistory) expected() int {
	s := slices.Clone(h.Counts)
	slices.Sort(s)
	if len(s) == 0 {
		return 1
	}
	return max(1, s[len(s)/4])
}

// firstAt and lastAt are the latest points (eligible request numbers) at
// which its first and its last request came in its recent trials: a
// trial past firstAt without it will most likely not reach it, one past
// lastAt will most likely ask it no more.
func (h *reachHistory) firstAt() int { return latest(h.First) }
func (h *reachHistory) lastAt() int  { return latest(h.Last) }

// target reports whether a trial may aim at it, of trials trials: one
// reached it before its fault, or most of them (4 at least) reached it (a
// site whose requests come late, after most grants).
func (h *reachHistory) target(trials int) bool {
	return h.Free > 0 || trials >= 4 && 2*h.Trials > trials
}

// push adds a trial's requests r, free when they began before the trial's
// first grant.
func (h *reachHistory) push(r *trialReach, free bool) {
	h.Trials++
	if free {
		h.Free++
	}
	h.Counts = pushWindow(h.Counts, r.count)
	h.First = pushWindow(h.First, r.first)
	h.Last = pushWindow(h.Last, r.last)
}

func latest(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}

// spreadTrial is spread's state of one running trial.
type spreadTrial struct {
	rng *rand.Rand
	q   quota
	// targets are the trial's targets, one per fault of the quota; none
	// when the trial grants as random does.
	targets []spreadTarget
	// pool is how many sites the targets were drawn among.
	pool int
	// p is the grant probability: random's without targets, else the
	// fallback's per unit of weight, sized when it arms (0 before).
	p float64
	// late is the eligible request count almost every trial reaches.
	late int
	// reach is, per site (path 0) and per call path of a site, the
	// trial's eligible requests; roles the roles each site was reached
	// in.
	reach map[sitePath]*trialReach
	roles map[uint32][]string
	// grantAt is the number of the eligible request that took the
	// trial's first grant; 0 before one.
	grantAt int
	// eligible counts the requests that could take a fault, of the seen
	// ones; top sums their Memory weights (Memory.weigh; 1 each without
	// one).
	eligible, seen int
	top            float64
	// why says what the trial chose and, after a grant, why it struck
	// where it did (Explain).
	why string
}

// sitePath is a site, and one of its call paths or 0 for the whole site.
type sitePath struct {
	site uint32
	path uint64
}

// trialReach is a trial's eligible requests at a site or path: how many,
// and the numbers of the first and the last (from 1).
type trialReach struct {
	count, first, last int
	// callers are a path's frames (pathHistory.Callers), taken at its
	// first request; nil for a site.
	callers []string
}

// spreadTarget is one site (or one of its paths) and occurrence a trial
// aims at.
type spreadTarget struct {
	site     uint32
	rank     int // 1-based among the pool, for Explain
	k        int // the occurrence to strike
	expected int // the site's (or path's) expected requests a trial
	// path is the call path aimed at, 0 for the whole site; pathRank is
	// its 1-based rank among the site's paths that can be targets, paths
	// their number, for Explain.
	path            uint64
	pathRank, paths int
	// missAt is where the fallback arms while the target was not
	// reached: past the site's (path's) firstAt (reachHistory), or, for
	// one that some trials did not reach, at 80 % of the usual count if
	// sooner (so the fallback has room). shortAt is where, with fewer
	// than k of its requests, the target's next request is struck and
	// the fallback arms: past its lastAt or 90 % of the usual count, or
	// 80 % where some recent trial made fewer than k.
	missAt, shortAt int
	granted         bool
}

func newSpread(env Env) (Policy, error) {
	return &spread{env: env, sites: env.candidateSites()}, nil
}

func (s *spread) Name() string { return "spread" }

func (s *spread) Begin(info TrialInfo) Plan {
	per := s.env.perTrial()
	t := &spreadTrial{
		rng:   trialRand(s.env.Seed, info.Index),
		q:     newQuota(per, true), // the counts need every request
		reach: map[sitePath]*trialReach{},
		roles: map[uint32][]string{},
	}
	s.trials.begin(info.Index, t)
	plan := Plan{Sites: s.sites, Stacks: true, States: true}
	pool := s.pool(info.Reach)
	if len(pool) == 0 {
		// Nothing to spread over: random's probability.
		c, miss := 20, spreadMiss
		switch {
		case info.Expected > 0:
			c, miss = info.Expected, measuredMiss
		case len(s.mem.Counts) > 0:
			c = lowCount(s.mem.Counts)
		}
		t.p = min(1, injectProbabilityMissing(c, miss)*float64(per))
		t.why = fmt.Sprintf("spread: no site reached by an earlier trial to aim at; grants as random does (p %.3g a request)", t.p)
		return plan
	}
	t.pool = len(pool)
	t.late = max(1, lowCount(s.mem.Counts))
	if info.Expected > 0 {
		t.late = info.Expected
	}
	ws := make([]float64, len(pool))
	for i, site := range pool {
		ws[i] = s.siteWeight(site)
	}
	for range per {
		i := s.nextTarget(t.rng, pool, ws)
		h := s.mem.Sites[pool[i]]
		h.Targeted++
		tg := spreadTarget{site: pool[i], rank: i + 1}
		r := &h.reachHistory
		if paths := s.paths(h); len(paths) > 0 {
			j := nextTurn(t.rng, len(paths), func(j int) float64 { return float64(h.Paths[paths[j]].Targeted + 1) })
			p := h.Paths[paths[j]]
			p.Targeted++
			tg.path, tg.pathRank, tg.paths = paths[j], j+1, len(paths)
			r = &p.reachHistory
		}
		e := r.expected()
		tg.k, tg.expected = 1+t.rng.IntN(e), e
		tg.missAt, tg.shortAt = r.firstAt(), min(r.lastAt(), t.late*9/10)
		if r.Trials*10 < s.mem.Trials*9 {
			tg.missAt = min(tg.missAt, t.late*4/5)
		}
		if len(r.Counts) == 0 || tg.k > slices.Min(r.Counts) {
			tg.shortAt = min(tg.shortAt, t.late*4/5)
		}
		t.targets = append(t.targets, tg)
	}
	tg := t.targets[0]
	if tg.path == 0 {
		t.why = fmt.Sprintf("spread: site %d of %d reached (%s, ~%d requests a trial), occurrence %d", tg.rank, t.pool, s.siteID(tg.site), tg.expected, tg.k)
	} else {
		paths := s.mem.Sites[tg.site].Paths
		t.why = fmt.Sprintf("spread: site %d of %d reached (%s), path %d of %d (%s, ~%d requests a trial), occurrence %d",
			tg.rank, t.pool, s.siteID(tg.site), tg.pathRank, tg.paths, pathName(paths[tg.path], paths), tg.expected, tg.k)
	}
	return plan
}

// nextTarget returns the index in pool of the next target: among the
// sites whose next turn, (Targeted+1)/weight, comes first, one drawn
// uniformly. Without a Memory every weight is 1, so the sites take turns
// in rounds, each round in a random order: the shares are uniform, as
// with a uniform draw, and a campaign of n trials aims at n distinct
// sites where the pool has as many (a uniform draw, with replacement,
// aims at 8 of 16 sites in 12 trials). With a Memory a site of weight w
// takes a turn 1/w times less often.
func (s *spread) nextTarget(rng *rand.Rand, pool []uint32, ws []float64) int {
	return nextTurn(rng, len(pool), func(i int) float64 { return float64(s.mem.Sites[pool[i]].Targeted+1) / ws[i] })
}

// nextTurn returns which of n candidates takes the next turn: among those
// whose turn comes first, one drawn uniformly.
func nextTurn(rng *rand.Rand, n int, turn func(int) float64) int {
	var first []int
	var best float64
	for i := range n {
		turn := turn(i)
		switch {
		case len(first) == 0 || turn < best*(1-1e-9):
			first, best = []int{i}, turn
		case turn <= best*(1+1e-9):
			first = append(first, i)
		}
	}
	return first[rng.IntN(len(first))]
}

// pool returns the sites the earlier trials reached before their fault
// or that most of them reached (reachHistory.target), ascending, within
// reach where it is known (TrialInfo.Reach).
func (s *spread) pool(reach []uint32) []uint32 {
	var in map[uint32]bool
	if reach != nil {
		in = make(map[uint32]bool, len(reach))
		for _, r := range reach {
			in[r] = true
		}
	}
	var out []uint32
	for site, h := range s.mem.Sites {
		if h.target(s.mem.Trials) && (in == nil || in[site]) {
			out = append(out, site)
		}
	}
	slices.Sort(out)
	return out
}

// paths returns the keys of a site's call paths a trial may aim at
// (reachHistory.target), ascending.
func (s *spread) paths(h *siteHistory) []uint64 {
	var out []uint64
	for k, p := range h.Paths {
		if p.target(s.mem.Trials) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// siteWeight is how likely a site is drawn as a target: 1, or with a
// Memory the largest weight of the faults it offers in the roles the
// trials reached it in.
func (s *spread) siteWeight(site uint32) float64 {
	if s.env.Memory.Len() == 0 || s.env.Catalog == nil || int(site) >= len(s.env.Catalog.Sites) {
		return 1
	}
	cs := &s.env.Catalog.Sites[site]
	roles := s.mem.Sites[site].Roles
	if len(roles) == 0 {
		roles = []string{""}
	}
	var top float64
	for _, role := range roles {
		_, w := s.env.Memory.weigh(&Request{Site: cs, Role: role}, s.env.faults(cs))
		top = max(top, w)
	}
	return top
}

// weight is a request's weight in the fallback: 1/E of its site (1 for a
// site no trial reached), so that every site's requests of a trial weigh
// about 1 together.
func (s *spread) weight(site uint32) float64 {
	if h := s.mem.Sites[site]; h != nil {
		return 1 / float64(h.expected())
	}
	return 1
}

// siteID is the stable ID of the catalog's site, or its index.
func (s *spread) siteID(site uint32) string {
	if s.env.Catalog == nil || int(site) >= len(s.env.Catalog.Sites) {
		return fmt.Sprintf("site %d", site)
	}
	return s.env.Catalog.Sites[site].ID
}

func (s *spread) Decide(req *Request) Decision {
	t := s.trials.of(req.Trial)
	if t == nil || req.Site == nil {
		return Decision{}
	}
	t.seen++
	fs := s.env.faultsAt(req)
	if len(fs) == 0 {
		return Decision{}
	}
	site := req.Site.Index
	t.eligible++
	n := t.reached(sitePath{site: site}, nil)
	path := callPath(req.Stack)
	np := 0 // the requests of the site with this path
	if path != 0 {
		np = t.reached(sitePath{site, path}, req.Stack)
	}
	if rs := t.roles[site]; len(rs) < spreadRoles && !slices.Contains(rs, req.Role) {
		t.roles[site] = append(rs, req.Role)
	}
	var ws []float64
	top := 1.0
	if s.env.Memory.Len() > 0 {
		ws, top = s.env.Memory.weigh(req, fs)
	}
	w := s.weight(site) * top
	t.top += top
	if t.q.full() {
		return Decision{}
	}
	if len(t.targets) == 0 {
		if t.rng.Float64() >= t.p*top {
			return Decision{}
		}
		return s.grant(t, req, fs, ws, -1, fmt.Sprintf("granted at %s (occurrence %d)", req.Site.ID, n))
	}
	for i := range t.targets {
		tg := &t.targets[i]
		if tg.granted || tg.site != site || tg.path != 0 && tg.path != path {
			continue
		}
		m := n
		if tg.path != 0 {
			m = np
		}
		switch {
		case m == tg.k:
			return s.grant(t, req, fs, ws, i, "struck")
		case m < tg.k && t.eligible > tg.shortAt:
			return s.grant(t, req, fs, ws, i, fmt.Sprintf("fewer than %d of its requests by request %d: struck at occurrence %d", tg.k, t.eligible, m))
		}
	}
	if _, seen := s.mem.Sites[site]; !seen && n == 1 && t.rng.Float64() < top/float64(t.pool+1) {
		return s.grant(t, req, fs, ws, -1, fmt.Sprintf("a site no earlier trial reached, %s, struck at its first request with a target's chance (1 in %d)", req.Site.ID, t.pool+1))
	}
	if i := t.armed(); i >= 0 && t.rng.Float64() < s.fallbackP(t)*w {
		got := t.count(t.targets[i])
		state := "not reached"
		if got > 0 {
			state = "short of it"
		}
		return s.grant(t, req, fs, ws, i, fmt.Sprintf("%s (%d of its requests by request %d): fallback at %s (occurrence %d)", state, got, t.eligible, req.Site.ID, n))
	}
	return Decision{}
}

// reached counts the trial's request at a site or path (the current
// eligible one) and returns how many it had; stack is a path's request's.
func (t *spreadTrial) reached(at sitePath, stack []record.Frame) int {
	r := t.reach[at]
	if r == nil {
		r = &trialReach{first: t.eligible}
		if at.path != 0 {
			r.callers = pathCallers(stack)
		}
		t.reach[at] = r
	}
	r.count++
	r.last = t.eligible
	return r.count
}

// count returns the requests the trial had at a target's site or path.
func (t *spreadTrial) count(tg spreadTarget) int {
	if r := t.reach[sitePath{tg.site, tg.path}]; r != nil {
		return r.count
	}
	return 0
}

// armed returns the first target not granted whose fallback is armed:
// not reached past its missAt, or reached fewer than k times past its
// shortAt; -1 if none.
func (t *spreadTrial) armed() int {
	for i, tg := range t.targets {
		if tg.granted {
			continue
		}
		switch n := t.count(tg); {
		case n == 0 && t.eligible > tg.missAt, n > 0 && n < tg.k && t.eligible > tg.shortAt:
			return i
		}
	}
	return -1
}

// fallbackP is the fallback's grant probability per unit of weight,
// sized when it arms on the weighted requests a typical trial has left
// (at least a twentieth of them), so that about one trial in a hundred
// ends without a grant.
func (s *spread) fallbackP(t *spreadTrial) float64 {
	if t.p > 0 {
		return t.p
	}
	left := max(t.late-t.eligible, t.late/20, 1)
	ratio := 1.0
	if ws := s.mem.Weights; len(ws) > 0 {
		// A low one of the recent trials' mean weights: too low a
		// guess grants a little early, too high one misses.
		ws = slices.Clone(ws)
		slices.Sort(ws)
		ratio = ws[len(ws)/8]
	}
	t.p = min(1, injectProbabilityMissing(int(float64(left)*ratio+0.5), spreadMiss)*float64(s.env.perTrial()))
	return t.p
}

// grant grants a fault drawn among fs at req for target i (-1: none, or
// the first not granted), and records why.
func (s *spread) grant(t *spreadTrial, req *Request, fs []Fault, ws []float64, i int, how string) Decision {
	if i < 0 {
		i = slices.IndexFunc(t.targets, func(tg spreadTarget) bool { return !tg.granted })
	}
	if i >= 0 {
		t.targets[i].granted = true
	}
	f, kinds := drawFault(t.rng, fs, ws)
	why := fmt.Sprintf("%s; kind %s of %d offered", how, fs[f].Kind, kinds)
	if s.env.Memory.Len() > 0 {
		tally := s.env.Memory.Of(req.Site, fs[f], req.Role)
		seen := "never tried before"
		if tally.Tried > 0 {
			seen = fmt.Sprintf("tried %d times before (%d quiet, %d with a symptom)", tally.Tried, tally.Quiet, tally.Symptom)
		}
		why += fmt.Sprintf("; with the memory of %s: %s %s", s.env.Memory, faultName(req.Site, fs[f]), seen)
	}
	if t.q.granted == 0 {
		t.grantAt = t.eligible
		t.why += "; " + why
	} else {
		t.why += "; then " + why
	}
	return t.q.grant(fs[f])
}

// drawFault draws one of the faults fs offered at a request: a kind
// uniformly among the kinds offered (weighted by the largest weight of its
// variants where ws, a Memory's weights, is given), then a variant of it
// (by its weight). It returns the fault's index and how many kinds were
// offered.
func drawFault(rng *rand.Rand, fs []Fault, ws []float64) (int, int) {
	var kinds []catalog.Kind
	var kw []float64
	for i, f := range fs {
		w := 1.0
		if ws != nil {
			w = ws[i]
		}
		if j := slices.Index(kinds, f.Kind); j >= 0 {
			kw[j] = max(kw[j], w)
			continue
		}
		kinds = append(kinds, f.Kind)
		kw = append(kw, w)
	}
	kind := kinds[pickWeighted(rng, kw)]
	var idx []int
	var vw []float64
	for i, f := range fs {
		if f.Kind != kind {
			continue
		}
		idx = append(idx, i)
		if ws != nil {
			vw = append(vw, ws[i])
		} else {
			vw = append(vw, 1)
		}
	}
	return idx[pickWeighted(rng, vw)], len(kinds)
}

// Explain implements Explainer: the trial's target (site, its rank among
// the sites reached, occurrence) and where and why it struck, or that it
// struck nowhere.
func (s *spread) Explain(index int) Choice {
	t := s.trials.of(index)
	if t == nil {
		return Choice{}
	}
	why := t.why
	if t.q.granted == 0 {
		why += "; nothing struck (the target did not come and the fallback granted nothing)"
	}
	return Choice{Technique: s.Name(), Why: why}
}

func (s *spread) End(out Outcome) {
	t := s.trials.of(out.Index)
	s.trials.end(out.Index)
	if t == nil || t.eligible == 0 {
		return // a trial that reached nothing tells nothing
	}
	n := t.eligible
	if t.seen < out.Requests {
		// Estimated from the share of those seen, as random does.
		n = int(int64(out.Requests) * int64(t.eligible) / int64(t.seen))
	}
	m := &s.mem
	m.Trials++
	m.Counts = pushCount(m.Counts, n)
	if m.Sites == nil {
		m.Sites = map[uint32]*siteHistory{}
	}
	fewest := -1
	for _, h := range m.Sites {
		if fewest < 0 || h.Targeted < fewest {
			fewest = h.Targeted
		}
	}
	// The sites first (path 0), then their paths, in one order.
	reached := slices.SortedFunc(maps.Keys(t.reach), func(a, b sitePath) int {
		return cmp.Or(cmp.Compare(a.site, b.site), cmp.Compare(a.path, b.path))
	})
	for _, at := range reached {
		r := t.reach[at]
		free := t.grantAt == 0 || r.first <= t.grantAt
		h := m.Sites[at.site]
		if at.path != 0 {
			p := h.Paths[at.path]
			if p == nil {
				// As a new site, a new path waits for its turn with the
				// site's other paths.
				p = &pathHistory{Callers: r.callers, Targeted: fewestTargeted(h.Paths)}
				if h.Paths == nil {
					h.Paths = map[uint64]*pathHistory{}
				}
				h.Paths[at.path] = p
			}
			p.push(r, free)
			p.Seen = m.Trials
			continue
		}
		if h == nil {
			// A site reached for the first time waits for its turn
			// with the others, not for as many turns as they had.
			h = &siteHistory{Targeted: max(0, fewest)}
			m.Sites[at.site] = h
		}
		h.push(r, free)
		for _, role := range t.roles[at.site] {
			if len(h.Roles) < spreadRoles && !slices.Contains(h.Roles, role) {
				h.Roles = append(h.Roles, role)
			}
		}
	}
	for _, at := range reached {
		if at.path == 0 {
			trimPaths(m.Sites[at.site].Paths)
		}
	}
	// The trial's mean weight, by what the sites are now known to ask
	// (summed in the sites' order, so that a snapshot is the same to the
	// last bit).
	var w float64
	for _, at := range reached {
		if at.path == 0 {
			w += float64(t.reach[at].count) * s.weight(at.site)
		}
	}
	w *= t.top / float64(t.eligible) / float64(t.eligible)
	m.Weights = append(m.Weights, w)
	if len(m.Weights) > countWindow {
		m.Weights = slices.Clone(m.Weights[len(m.Weights)-countWindow:])
	}
}

// pushWindow appends n to xs, keeping the last spreadWindow.
func pushWindow(xs []int, n int) []int {
	xs = append(xs, n)
	if len(xs) > spreadWindow {
		xs = slices.Clone(xs[len(xs)-spreadWindow:])
	}
	return xs
}

func (s *spread) Snapshot() ([]byte, error) { return json.Marshal(&s.mem) }

func (s *spread) Restore(data []byte) error {
	if err := json.Unmarshal(data, &s.mem); err != nil {
		return fmt.Errorf("restore spread policy: %w", err)
	}
	maps.DeleteFunc(s.mem.Sites, func(_ uint32, h *siteHistory) bool { return h == nil })
	for _, h := range s.mem.Sites {
		maps.DeleteFunc(h.Paths, func(_ uint64, p *pathHistory) bool { return p == nil })
	}
	return nil
}
