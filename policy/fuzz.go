package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/gofault/gofault/catalog"
)

func init() { Register("fuzz", newFuzz) }

// Point is one fault of a sequence: Fault at the Occurrence-th request
// (or the first one after it) at site Site (stable ID) on node Node. A
// point observed but not chosen has no Fault.
type Point struct {
	Node       string `json:"node"`
	Site       string `json:"site"`
	Occurrence int    `json:"occ"`
	Fault      Fault  `json:"fault"`
	// At is how many requests the trial had made when the fault was
	// granted (0: not known, as in a queue saved before it was kept):
	// how far into a trial a mutant's first point is expected.
	At int `json:"at,omitempty"`
	// Down marks a point of After reached on another node while the node
	// the last fault killed was down: before its next process made its
	// first request. A fault there strikes during the first one's
	// recovery, which FaultFuzz tests first.
	Down bool `json:"down,omitempty"`
}

// fuzzEntry is one sequence of the fuzz queue.
type fuzzEntry struct {
	Seq []Point `json:"seq"`
	// Trial is the trial that ran it, for the reasons (Explain); -1
	// when not known (a queue saved before it was kept).
	Trial int `json:"trial"`
	// Score is what the sequence's run found: new coverage, new recovery
	// points, a failed trial, few faults.
	Score float64 `json:"score"`
	// NewBlocks are the coverage blocks its run covered first.
	NewBlocks int `json:"new_blocks,omitempty"`
	Picked    int `json:"picked"` // times chosen as a parent
	// After are the I/O points the run reached after the sequence's last
	// fault, the first afterPerSite requests at each node and site and
	// then the 4th, 8th, 16th, ... (spreadAt): where a mutation may append
	// a fault.
	After []Point `json:"after,omitempty"`
	// Recovery are the first points of After (afterPerSite a site) on the
	// node that the last fault killed (a crash or a power loss): its
	// restart and recovery, which mutation prefers.
	Recovery []Point `json:"recovery,omitempty"`
	// Moves are, per fault of Seq, the points at the fault's site on the
	// other nodes that the run reached after the fault before it (and
	// before the fault after it): where the move mutation may take it.
	Moves [][]Point `json:"moves,omitempty"`
}

// priority is the entry's selection priority: its score, worn down by
// every time it was chosen, so that the queue is explored in turn.
func (e *fuzzEntry) priority() float64 { return e.Score / float64((1+e.Picked)*(1+e.Picked)) }

// fuzz is FaultFuzz's loop (ICSE'24, §3): a queue of fault sequences,
// seeded with single faults, each mutated by appending one fault at an I/O
// point that its run reached after its last fault, on any node — so
// recovery code gets faults of its own, and a second member can fail
// while the first recovers — or by moving one fault of a sequence to
// another node, at the same site where that node reached it; each is
// scored by what its run found. A trial runs one sequence in order, each
// fault at the recorded occurrence of its point on its node (as Replay
// does, so `gofault replay` repeats it exactly).
//
// A sequence over several nodes can stop a majority (two members killed
// in turn, one slowed while another restarts); the checkers judge that
// as quorum loss, not as a hang (check's quorumInDoubt and
// killsAllowance).
//
// The score is what the paper prioritises by: the coverage blocks the run
// covered that no earlier trial had (gofault's own block counters;
// coverScore), the recovery points (site, depth in the sequence) never
// reached after a fault before (one each), a large bonus for a failed
// trial and a small one for a short sequence. Where it deviates from the
// paper: FaultFuzz only queues a sequence whose run increased coverage
// (or ended in a crash or disconnection); here every sequence run to its
// end is queued, and one without new coverage only ranks lower. Seed trials inject one fault as random does (one
// grant per trial with probability sized from recent trials' requests):
// the first seedTrials trials, whenever the queue is empty, and one trial
// in five after that, so new single faults keep entering the queue.
type fuzz struct {
	env    Env
	sites  []uint32
	byID   map[string]bool // sites that can take an allowed fault, by ID
	trials running[fuzzTrial]
	mem    struct {
		Trials int         `json:"trials"`
		Counts []int       `json:"counts,omitempty"`
		Queue  []fuzzEntry `json:"queue,omitempty"`
		// Seen are the recovery points reached so far, "depth|site".
		Seen map[string]bool `json:"seen,omitempty"`
		// Tried counts the faults mutation appended, by similarity
		// (triedKey): a fault like one tried before is tried later.
		Tried map[string]int `json:"tried,omitempty"`
	}
}

// Bounds of the fuzz loop.
const (
	seedTrials    = 4    // trials that seed the queue before any mutation
	maxQueue      = 256  // sequences kept; the lowest scores go
	maxAfter      = 512  // first points after the last fault kept per run
	maxSpread     = 256  // later points after the last fault kept per run (spreadAt)
	maxReached    = 4096 // first points per node, site and place in the sequence kept per run, for moves
	moveOdds      = 3    // one mutant in moveOdds moves a fault rather than appending one
	triesPerGrow  = 3    // candidates drawn per appended fault, the least tried taken
	afterPerSite  = 3    // points kept per node and site after the last fault (a killed process may make one or two before it dies)
	failedBonus   = 10   // score of a failed trial, beside its new points
	coverWeight   = 2    // score per doubling of the new blocks (coverScore)
	defaultMaxSeq = 3    // faults per trial when Env.MaxPerTrial is unset
)

// reachKey is a node and site after Granted faults of a trial.
type reachKey struct {
	Node, Site string
	Granted    int
}

// fuzzTrial is fuzz's state of one running trial.
type fuzzTrial struct {
	rng      *rand.Rand
	seq      []Point // the sequence to run (a seed's is filled as granted)
	next     int     // index of the next point to grant
	seed     bool
	p        float64 // a seed's grant probability
	after    []Point
	afterAt  map[[2]string]int // requests per node and site since the last grant
	early    int               // points of after among the first afterPerSite of their site
	spread   int               // points of after kept by spreadAt
	killed   string            // the node the last fault killed, "" if it killed none
	killedAt int               // the killed node's process number when the fault struck (Request.Process)
	back     bool              // the killed node's next process has made a request
	recovery []Point
	// reached is the first point of each node and site after each
	// number of granted faults: where a fault may move (fuzzEntry.Moves).
	reached map[reachKey]Point
	seen    int // requests decided so far
	// giveUp is the request by which a mutant's first point must be
	// reached: after it the trial runs as a seed (see fallBack); 0: never.
	giveUp int
	// window is the number of requests a fallen-back trial expects to
	// have left, which sizes its grant probability.
	window int
	// why says what the trial runs and why, for the user (Explain).
	why string
}

func newFuzz(env Env) (Policy, error) {
	f := &fuzz{env: env, sites: env.candidateSites(), byID: map[string]bool{}}
	for _, s := range f.sites {
		f.byID[env.Catalog.Sites[s].ID] = true
	}
	f.mem.Seen = map[string]bool{}
	return f, nil
}

func (f *fuzz) Name() string { return "fuzz" }

func (f *fuzz) maxSeq() int {
	if f.env.MaxPerTrial > 0 {
		return f.env.MaxPerTrial
	}
	return defaultMaxSeq
}

func (f *fuzz) Begin(info TrialInfo) Plan {
	rng := trialRand(f.env.Seed, info.Index)
	t := &fuzzTrial{rng: rng, afterAt: map[[2]string]int{}, reached: map[reachKey]Point{}}
	early := f.mem.Trials < seedTrials
	seed := early || rng.IntN(5) == 0
	switch {
	case early:
		t.why = fmt.Sprintf("a seed: one fault where random would put it (the first %d trials seed the queue)", seedTrials)
	case seed:
		t.why = "a seed: one fault where random would put it (one trial in five, so new single faults keep entering the queue)"
	default:
		t.seq, seed = nil, true
		t.why = "a seed: one fault where random would put it (no queued sequence to mutate)"
		if seq, why, ok := f.mutant(rng); ok {
			t.seq, seed, t.why = seq, false, why
			t.giveUp, t.window = giveUpAt(seq[0].At, lowCount(f.mem.Counts))
		}
	}
	if seed {
		c := 20
		if len(f.mem.Counts) > 0 {
			c = lowCount(f.mem.Counts)
		}
		t.seed, t.p = true, injectProbability(c)
	}
	f.trials.begin(info.Index, t)
	return Plan{Sites: f.sites, Stacks: true, States: true}
}

// mutant makes the next mutant and says how (for Explain): one in
// moveOdds moves a fault of a sequence to another node (move), the others
// append one (grow); when the one chosen finds no entry to work on, the
// other is tried.
func (f *fuzz) mutant(rng *rand.Rand) ([]Point, string, bool) {
	if rng.IntN(moveOdds) == 0 {
		if seq, why, ok := f.move(rng); ok {
			return seq, why, true
		}
		return f.grow(rng)
	}
	if seq, why, ok := f.grow(rng); ok {
		return seq, why, true
	}
	return f.move(rng)
}

// best is the index of the queue's entry of highest priority that ok
// accepts, -1 if none.
func (f *fuzz) best(ok func(*fuzzEntry) bool) int {
	best := -1
	for i := range f.mem.Queue {
		e := &f.mem.Queue[i]
		if !ok(e) {
			continue
		}
		if best < 0 || e.priority() > f.mem.Queue[best].priority() {
			best = i
		}
	}
	return best
}

// grow picks the queue's entry of highest priority that can grow and
// appends one fault at one of the points its run reached after its last
// fault (candidate). Of triesPerGrow candidates, it takes the one least
// like the faults appended before (Tried): FaultFuzz tests a sequence
// whose last fault is like a tested one as late as possible. It says
// what it appended to which, for Explain.
func (f *fuzz) grow(rng *rand.Rand) ([]Point, string, bool) {
	best := f.best(func(e *fuzzEntry) bool { return len(e.Seq) < f.maxSeq() && len(e.After) > 0 })
	if best < 0 {
		return nil, "", false
	}
	e := &f.mem.Queue[best]
	e.Picked++
	var down []Point
	for _, p := range e.After {
		if p.Down {
			down = append(down, p)
		}
	}
	depth := len(e.Seq) + 1
	var pick Point
	least := -1
	for range triesPerGrow {
		pt, ok := f.candidate(rng, e, down)
		if !ok {
			continue
		}
		if n := f.mem.Tried[triedKey(depth, pt)]; least < 0 || n < least {
			pick, least = pt, n
		}
	}
	if least < 0 {
		return nil, "", false
	}
	if f.mem.Tried == nil {
		f.mem.Tried = map[string]int{}
	}
	f.mem.Tried[triedKey(depth, pick)]++
	return append(append([]Point(nil), e.Seq...), pick), grewText(e, pick), true
}

// candidate draws a point of e.After and a fault the site can take. When
// e's last fault killed a node, a third of the draws take a recovery point
// of that node and a third a point that another node reached while it was
// down (down: a fault during its recovery, which FaultFuzz tests first);
// the others, or when e has none of those, a point of a node drawn first
// (each node as likely, however many sites it reached), so a second
// member's faults are as likely as the first's.
func (f *fuzz) candidate(rng *rand.Rand, e *fuzzEntry, down []Point) (Point, bool) {
	pt := pickByNode(rng, e.After)
	switch rng.IntN(3) {
	case 0:
		if len(e.Recovery) > 0 {
			pt = e.Recovery[rng.IntN(len(e.Recovery))]
		}
	case 1:
		if len(down) > 0 {
			pt = pickByNode(rng, down)
		}
	}
	site := f.site(pt.Site)
	if site < 0 {
		return Point{}, false
	}
	fs := f.env.faults(&f.env.Catalog.Sites[site])
	if len(fs) == 0 {
		return Point{}, false
	}
	pt.Fault = fs[rng.IntN(len(fs))]
	if pt.Fault.Kind == catalog.KindCorrupt || pt.Fault.Kind == catalog.KindTorn || pt.Fault.Kind == catalog.KindRot {
		pt.Fault.Pick = rng.Uint64()
	}
	return pt, true
}

// triedKey is what makes two appended faults alike: their place in the
// sequence, node, site and kind, and whether the fault came while an
// earlier-killed node was down.
func triedKey(depth int, p Point) string {
	return fmt.Sprintf("%d|%s|%s|%s|%t", depth, p.Node, p.Site, p.Fault.Kind, p.Down)
}

// move picks the queue's entry of highest priority with two faults or
// more and a fault that another node's run could take, and moves one such
// fault to one of those points: the same site and fault on another node,
// at the occurrence that node reached after the fault before it. It says
// what it moved, for Explain.
func (f *fuzz) move(rng *rand.Rand) ([]Point, string, bool) {
	movable := func(e *fuzzEntry) []int {
		var ks []int
		for k, ms := range e.Moves {
			if k < len(e.Seq) && len(ms) > 0 {
				ks = append(ks, k)
			}
		}
		return ks
	}
	best := f.best(func(e *fuzzEntry) bool { return len(e.Seq) >= 2 && len(movable(e)) > 0 })
	if best < 0 {
		return nil, "", false
	}
	e := &f.mem.Queue[best]
	e.Picked++
	seq, ok := moved(rng, e.Seq, e.Moves, movable(e))
	if !ok {
		return nil, "", false
	}
	return seq, movedText(e, seq), true
}

// moved is seq with the fault of one of positions ks moved to one of its
// points in moves, chosen with rng.
func moved(rng *rand.Rand, seq []Point, moves [][]Point, ks []int) ([]Point, bool) {
	if len(ks) == 0 {
		return nil, false
	}
	k := ks[rng.IntN(len(ks))]
	to := moves[k][rng.IntN(len(moves[k]))]
	to.Fault = seq[k].Fault
	out := append([]Point(nil), seq...)
	out[k] = to
	return out, true
}

// pickByNode draws a node of pts, each as likely, then one of its points.
func pickByNode(rng *rand.Rand, pts []Point) Point {
	var nodes []string
	for _, p := range pts {
		if !slices.Contains(nodes, p.Node) {
			nodes = append(nodes, p.Node)
		}
	}
	slices.Sort(nodes)
	node := nodes[rng.IntN(len(nodes))]
	var on []Point
	for _, p := range pts {
		if p.Node == node {
			on = append(on, p)
		}
	}
	return on[rng.IntN(len(on))]
}

func (f *fuzz) site(id string) int {
	for _, s := range f.sites {
		if f.env.Catalog.Sites[s].ID == id {
			return int(s)
		}
	}
	return -1
}

func (f *fuzz) Decide(req *Request) Decision {
	t := f.trials.of(req.Trial)
	if t == nil || req.Site == nil || !f.byID[req.Site.ID] {
		return Decision{}
	}
	k := [2]string{req.Node, req.Site.ID}
	t.seen++
	if !t.seed && t.next == 0 && t.giveUp > 0 && t.seen >= t.giveUp {
		// The mutant's first point was not reached in time (its node
		// has another role this run, or the run is shorter): rather than
		// a trial with no fault, run the rest of it as a seed.
		t.seq, t.seed, t.p = nil, true, injectProbability(t.window)
		t.why += fmt.Sprintf("; its first fault's point was not reached by request %d, so it ran on as a seed", t.giveUp)
	}
	if rk := (reachKey{req.Node, req.Site.ID, t.next}); len(t.reached) < maxReached {
		if _, ok := t.reached[rk]; !ok {
			t.reached[rk] = Point{Node: req.Node, Site: req.Site.ID, Occurrence: req.Occurrence, At: t.seen}
		}
	}
	if t.next < len(t.seq) {
		w := t.seq[t.next]
		if req.Node != w.Node || req.Site.ID != w.Site || req.Occurrence < w.Occurrence {
			return Decision{}
		}
		ft, ok := f.env.fitted(req, w.Fault)
		if !ok {
			return Decision{} // a cut that cannot start at this call: a later one
		}
		t.next++
		t.granted(w, req.Process)
		return Decision{Fault: ft, Last: t.next == len(t.seq)}
	}
	if t.seed && len(t.seq) == 0 {
		fs := f.env.faultsAt(req)
		if len(fs) == 0 || t.rng.Float64() >= t.p {
			return Decision{}
		}
		ft := fs[t.rng.IntN(len(fs))]
		t.seq = append(t.seq, Point{Node: req.Node, Site: req.Site.ID, Occurrence: req.Occurrence, Fault: ft, At: t.seen})
		t.next = 1
		t.granted(t.seq[0], req.Process)
		return Decision{Fault: ft, Last: true} // a seed's sequence is its one fault
	}
	// After the sequence's last fault: a point a mutation may use, on any
	// node.
	if len(t.seq) > 0 {
		if req.Node == t.killed && req.Process > t.killedAt && t.killedAt > 0 {
			t.back = true
		}
		t.afterAt[k]++
		n := t.afterAt[k]
		pt := Point{Node: req.Node, Site: req.Site.ID, Occurrence: req.Occurrence, At: t.seen,
			Down: t.killed != "" && t.killedAt > 0 && !t.back && req.Node != t.killed}
		switch {
		case n <= afterPerSite && t.early < maxAfter:
			t.early++
			t.after = append(t.after, pt)
			if req.Node == t.killed {
				t.recovery = append(t.recovery, pt)
			}
		case spreadAt(n) && t.spread < maxSpread:
			t.spread++
			t.after = append(t.after, pt)
		}
	}
	return Decision{}
}

// spreadAt reports whether the n-th request at a node and site after the
// last fault is kept as a later point (fuzzEntry.After): past the first
// afterPerSite, the 4th, 8th, 16th, ... — points spread over the rest of
// the run, so a second member's fault may come while the first is down
// or restarting, not only right after the first fault.
func spreadAt(n int) bool { return n > afterPerSite && n&(n-1) == 0 }

// granted notes that point p's fault was granted to the node's process
// number process (Request.Process): the points reached from now on follow
// it.
func (t *fuzzTrial) granted(p Point, process int) {
	t.after, t.recovery, t.early, t.spread = nil, nil, 0, 0
	clear(t.afterAt)
	t.killed, t.killedAt, t.back = "", 0, false
	if p.Fault.Kind.Kills() {
		t.killed, t.killedAt = p.Node, process
	}
}

// giveUpAt is when a mutant whose first point was granted at request at
// of its parent's trial gives up waiting for it, given c, a low count of
// requests per trial (lowCount; 0: none known yet, never give up), and
// the requests then expected to be left. It waits half as long again as
// the parent needed, at least half and at most nine tenths of c, so a
// fallen-back trial has a tenth of a short trial or more to inject in.
func giveUpAt(at, c int) (giveUp, window int) {
	if c <= 0 {
		return 0, 0
	}
	giveUp = c * 2 / 3
	if at > 0 {
		giveUp = min(max(at*3/2, c/2), c*9/10)
	}
	return max(giveUp, 1), max(c-giveUp, 1)
}

func (f *fuzz) End(out Outcome) {
	t := f.trials.end(out.Index)
	f.mem.Trials++
	if out.Requests > 0 {
		f.mem.Counts = pushCount(f.mem.Counts, out.Requests)
	}
	if t == nil || len(t.seq) == 0 || t.next < len(t.seq) {
		return // nothing injected, or the sequence was not reached to its end
	}
	score := 1 / float64(len(t.seq))
	for _, p := range t.after {
		k := fmt.Sprintf("%d|%s", len(t.seq), p.Site)
		if !f.mem.Seen[k] {
			f.mem.Seen[k] = true
			score++
		}
	}
	score += coverScore(out.NewBlocks)
	if out.Failed {
		score += failedBonus
	}
	f.mem.Queue = append(f.mem.Queue, fuzzEntry{Seq: t.seq, Trial: out.Index, Score: score, NewBlocks: out.NewBlocks, After: t.after, Recovery: t.recovery, Moves: moves(t.seq, t.reached)})
	if len(f.mem.Queue) > maxQueue {
		sort.SliceStable(f.mem.Queue, func(i, j int) bool { return f.mem.Queue[i].priority() > f.mem.Queue[j].priority() })
		f.mem.Queue = f.mem.Queue[:maxQueue]
	}
}

// moves are, for each fault k of seq, the first points at its site on
// every other node that reached, after fault k−1 was granted (Granted k,
// before fault k) or else after fault k (Granted k+1): where the fault
// may move with the order of the sequence kept. Nodes in name order.
func moves(seq []Point, reached map[reachKey]Point) [][]Point {
	var nodes []string
	for rk := range reached {
		if !slices.Contains(nodes, rk.Node) {
			nodes = append(nodes, rk.Node)
		}
	}
	slices.Sort(nodes)
	var out [][]Point
	found := false
	for k, p := range seq {
		var ms []Point
		for _, n := range nodes {
			if n == p.Node {
				continue
			}
			pt, ok := reached[reachKey{n, p.Site, k}]
			if !ok {
				pt, ok = reached[reachKey{n, p.Site, k + 1}]
			}
			if ok {
				ms = append(ms, pt)
				found = true
			}
		}
		out = append(out, ms)
	}
	if !found {
		return nil
	}
	return out
}

// coverScore is the score of n new coverage blocks: coverWeight per
// doubling (1 block: 2, 7: 6, 100: 13.3), so that the first trials, which
// cover hundreds of blocks that any run would, do not outweigh everything
// else, while a sequence that reaches new code still ranks above one that
// does not.
func coverScore(n int) float64 {
	if n <= 0 {
		return 0
	}
	return coverWeight * math.Log2(1+float64(n))
}

// Snapshot implements Stateful: the queue and what was reached survive a
// stop and --resume.
func (f *fuzz) Snapshot() ([]byte, error) { return json.Marshal(&f.mem) }

// Restore implements Stateful.
func (f *fuzz) Restore(data []byte) error {
	if err := json.Unmarshal(data, &f.mem); err != nil {
		return fmt.Errorf("restore fuzz policy: %w", err)
	}
	if f.mem.Seen == nil {
		f.mem.Seen = map[string]bool{}
	}
	return nil
}
