package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func init() { Register("portfolio", newPortfolio) }

// portfolioArms are the techniques the portfolio policy hands trials to,
// in the order it first tries them.
var portfolioArms = []string{"random", "fuzz", "sieve", "bsrr", "cofi"}

// portfolio hands each trial to one of the techniques (its arms: random,
// FaultFuzz's fuzz, Sieve's sieve, Legolas's bsrr, CoFI's cofi where the
// catalog has observation points), chosen by UCB1 over what each arm's
// trials revealed so far (reward): every arm once in order, then the one
// with the best mean reward plus an exploration term that grows for an arm
// left alone, so no technique starves. Each arm keeps its own memory and
// sees only its own trials. An arm that cannot run here (cofi without
// observation points, or where faults.kinds does not list partition:
// cofi only partitions, see armKinds) or has nothing new to try (Finite)
// is skipped.
// Trials run at once each keep their own arm. Explain says, per trial,
// which arm has it and why.
type portfolio struct {
	arms   []*arm
	trials running[portfolioTrial]
	// reached are the (site, role) pairs that the trials told so far
	// reached, as pairKey: a trial that reaches another earns a reward.
	reached map[string]bool
}

// portfolioTrial is the portfolio's state of one running trial: its arm
// and why the arm was chosen.
type portfolioTrial struct {
	arm int
	why string
}

// arm is one technique of the portfolio and what its trials earned.
type arm struct {
	name    string
	p       Policy
	trials  int
	reward  float64 // summed over its trials
	failed  int     // its trials a checker failed
	injects int     // its trials that injected a fault
	running int     // its trials begun and not yet ended
	// last is its last trial that revealed more than its fault; nil
	// before one did.
	last *revealed
}

// revealed is a trial of an arm that revealed something, as the reasons
// cite it.
type revealed struct {
	Trial  int     `json:"trial"`
	Reward float64 `json:"reward"`
	// What is the gain in words (gain.String).
	What string `json:"what"`
}

// armKinds are the arms that inject one kind of fault whatever
// faults.kinds says (cofi: partitions), by the kind: the portfolio hands
// them no trial unless the campaign allows that kind. Standing alone they
// are the user's explicit choice; inside the portfolio a trial of theirs
// would inject a kind the user did not list, or, where the controller
// refuses it, nothing at all (a wasted trial).
var armKinds = map[string]catalog.Kind{"cofi": catalog.KindPartition}

func newPortfolio(env Env) (Policy, error) {
	p := &portfolio{reached: map[string]bool{}}
	for _, name := range portfolioArms {
		c := registry[name]
		if c == nil {
			continue
		}
		if k, ok := armKinds[name]; ok && !env.allows(k) {
			continue
		}
		ap, err := c(env)
		if err != nil {
			continue // e.g. cofi without observation points
		}
		p.arms = append(p.arms, &arm{name: name, p: ap})
	}
	if len(p.arms) == 0 {
		return nil, fmt.Errorf("portfolio: no technique can run on this catalog")
	}
	for _, a := range p.arms {
		if _, ok := a.p.(Learner); ok {
			return learningPortfolio{p}, nil
		}
	}
	return p, nil
}

// learningPortfolio is the portfolio when one of its arms learns from the
// fault-free trials (cofi, where the catalog has observation points): a
// Learner itself, so the campaign runs those trials observing peer
// messages and hands them over. Without such an arm the portfolio is no
// Learner, and a campaign given a shared baseline runs no fault-free
// trials of its own for it.
type learningPortfolio struct{ *portfolio }

// Name implements Policy.
func (p *portfolio) Name() string { return "portfolio" }

// gain is what one trial revealed, as the portfolio rewards it.
type gain struct {
	injected bool
	failed   bool
	checkers []string // the checkers that failed it
	blocks   int      // coverage blocks no earlier trial had covered
	pairs    int      // (site, role) pairs no earlier trial had reached
	notes    []string // the checkers that passed it with an informational verdict
}

// The parts of a reward (gain.reward).
const (
	rewardFault  = 0.1 // a fault injected
	rewardBlocks = 0.4 // new coverage blocks, all of it at fullBlocks
	fullBlocks   = 20
	rewardPairs  = 0.2 // new (site, role) pairs, all of it at fullPairs
	fullPairs    = 5
	rewardNote   = 0.2 // an informational verdict
)

// reward is what a trial tells the portfolio of its arm, in [0, 1]: 0 for
// a trial that injected nothing (wasted), 1 for one a checker failed (a
// symptom), else rewardFault for the fault, plus
//   - up to rewardBlocks for the coverage blocks no earlier trial had
//     (new recovery code reached: fullBlocks or more earn it all),
//   - up to rewardPairs for the (site, role) pairs no earlier trial
//     reached (a site reached in a role it had not been reached in, or not
//     at all: fullPairs or more earn it all), and
//   - rewardNote when a checker passed the trial with an informational
//     verdict (a corruption the node detected and refused, a symptom the
//     profile excuses: the fault came close to something);
//
// at most 0.9, below any failure.
func (g gain) reward() float64 {
	switch {
	case !g.injected:
		return 0
	case g.failed:
		return 1
	}
	r := rewardFault + rewardBlocks*math.Min(1, float64(g.blocks)/fullBlocks) +
		rewardPairs*math.Min(1, float64(g.pairs)/fullPairs)
	if len(g.notes) > 0 {
		r += rewardNote
	}
	return r
}

// String says what the trial revealed, e.g. "a failure by
// linearizability", "12 new blocks, 2 new (site, role) pairs".
func (g gain) String() string {
	switch {
	case !g.injected:
		return "no fault injected"
	case g.failed && len(g.checkers) > 0:
		return "a failure by " + strings.Join(g.checkers, ", ")
	case g.failed:
		return "a failure"
	}
	var parts []string
	if g.blocks > 0 {
		parts = append(parts, plural(g.blocks, "new block", "new blocks"))
	}
	if g.pairs > 0 {
		parts = append(parts, plural(g.pairs, "new (site, role) pair", "new (site, role) pairs"))
	}
	switch len(g.notes) {
	case 0:
	case 1:
		parts = append(parts, "an informational verdict by "+g.notes[0])
	default:
		parts = append(parts, "informational verdicts by "+strings.Join(g.notes, ", "))
	}
	if len(parts) == 0 {
		return "its fault alone"
	}
	return strings.Join(parts, ", ")
}

// plural is "1 new block" or "3 new blocks".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// pairKey is how the portfolio keeps a (site, role) pair.
func pairKey(r record.Reach) string { return r.SiteID + "|" + r.Role }

// newPairs counts the (site, role) pairs of rs that no trial told before
// reached, and keeps them all. The first trial with any only makes them
// known: the portfolio does not see the fault-free trials, and what any
// trial reaches is not news.
func (p *portfolio) newPairs(rs []record.Reach) int {
	first := len(p.reached) == 0
	n := 0
	for _, r := range rs {
		if k := pairKey(r); !p.reached[k] {
			p.reached[k] = true
			n++
		}
	}
	if first {
		return 0
	}
	return n
}

func (a *arm) mean() float64 { return a.reward / float64(a.trials) }

func (a *arm) exhausted() bool {
	f, ok := a.p.(Finite)
	return ok && f.Exhausted()
}

// choose returns the arm for the next trial and why: an arm never tried,
// in order; else the highest UCB1 score, mean + sqrt(2 ln N / n), over the
// arms with something left to try (the first on a tie). An arm whose
// first trial is still running (trials run at once) is tried: it gets
// another only when no arm has ended a trial yet. The exploration term
// counts an arm's running trials as pulls (n and N are trials begun, the
// mean is over those ended): else trials begun at once, before any of
// them ended, would all go to the same arm. Run one at a time, this is
// plain UCB1.
func (p *portfolio) choose() (int, string) {
	total := 0
	for _, a := range p.arms {
		total += a.pulls()
	}
	best, bestScore, bestMean, waiting := -1, math.Inf(-1), -1, -1
	for i, a := range p.arms {
		if a.exhausted() {
			continue
		}
		if a.trials == 0 && a.running == 0 {
			return i, "not tried yet: each technique gets a trial first, in turn"
		}
		if a.trials == 0 {
			if waiting < 0 {
				waiting = i
			}
			continue
		}
		if score := a.mean() + explore(total, a.pulls()); score > bestScore {
			best, bestScore = i, score
		}
		if bestMean < 0 || a.mean() > p.arms[bestMean].mean() {
			bestMean = i
		}
	}
	switch {
	case best < 0 && waiting >= 0:
		return waiting, "not tried yet: the first trial of every technique is still running"
	case best < 0:
		return 0, "every technique has run out of new faults"
	}
	return best, p.reason(best, bestMean, total)
}

// explore is UCB1's exploration term for an arm of n trials of total.
func explore(total, n int) float64 { return math.Sqrt(2 * math.Log(float64(total)) / float64(n)) }

// pulls are the arm's trials begun: ended and running.
func (a *arm) pulls() int { return a.trials + a.running }

// reason says why arm best was chosen over total trials, bestMean being
// the arm of the best mean reward: the evidence (its mean, its trials,
// the exploration term), whether it won on its mean or by exploration,
// and its last trial that revealed something.
func (p *portfolio) reason(best, bestMean, total int) string {
	a := p.arms[best]
	e, running := explore(total, a.pulls()), ""
	if a.running > 0 {
		running = fmt.Sprintf("; %d more running", a.running)
	}
	why := fmt.Sprintf("UCB %.2f: mean reward %.2f over %s (%d failed, %d injected%s) + %.2f to explore, of %d trials begun",
		a.mean()+e, a.mean(), plural(a.trials, "trial", "trials"), a.failed, a.injects, running, e, total)
	if bm := p.arms[bestMean]; bestMean != best && bm.mean() > a.mean() {
		why += fmt.Sprintf("; exploring: %s has the best mean, %.2f over %s", bm.name, bm.mean(), plural(bm.trials, "trial", "trials"))
	} else {
		why += "; the best mean"
	}
	if a.last != nil {
		return why + fmt.Sprintf("; its trial %d revealed %s (reward %.2f)", a.last.Trial, a.last.What, a.last.Reward)
	}
	return why + "; none of its trials revealed more than its fault yet"
}

// Begin implements Policy: the trial goes to the chosen arm.
func (p *portfolio) Begin(info TrialInfo) Plan {
	i, why := p.choose()
	p.trials.begin(info.Index, &portfolioTrial{arm: i, why: why})
	p.arms[i].running++
	return p.arms[i].p.Begin(info)
}

// Decide implements Policy: the trial's arm decides.
func (p *portfolio) Decide(req *Request) Decision {
	t := p.trials.of(req.Trial)
	if t == nil {
		return Decision{Done: true}
	}
	return p.arms[t.arm].p.Decide(req)
}

// End implements Policy: the trial's arm learns its outcome and the
// portfolio its reward.
func (p *portfolio) End(out Outcome) {
	t := p.trials.end(out.Index)
	if t == nil {
		return
	}
	a := p.arms[t.arm]
	a.running--
	a.p.End(out)
	g := gain{injected: len(out.Injections) > 0, failed: out.Failed, checkers: out.Checkers,
		blocks: out.NewBlocks, pairs: p.newPairs(out.Reached), notes: out.Notes}
	r := g.reward()
	a.trials++
	a.reward += r
	if out.Failed {
		a.failed++
	}
	if g.injected {
		a.injects++
	}
	if r > rewardFault {
		a.last = &revealed{Trial: out.Index, Reward: r, What: g.String()}
	}
}

// Observe implements Observer for an arm that observes (cofi).
func (p *portfolio) Observe(o *Observation) Partition {
	t := p.trials.of(o.Trial)
	if t == nil {
		return Partition{}
	}
	if ob, ok := p.arms[t.arm].p.(Observer); ok {
		return ob.Observe(o)
	}
	return Partition{}
}

// Learn implements Learner: each arm that learns from the fault-free
// trials (cofi mines its invariants from their observations) gets them.
// Without it cofi's trials in the portfolio had no invariant to break and
// injected nothing.
func (p learningPortfolio) Learn(trials [][]record.Observation) {
	for _, a := range p.arms {
		if l, ok := a.p.(Learner); ok {
			l.Learn(trials)
		}
	}
}

// Invariants returns what the arms that mine invariants (cofi) mined, for
// the campaign to store as it does a cofi campaign's.
func (p learningPortfolio) Invariants() []record.Invariant {
	var out []record.Invariant
	for _, a := range p.arms {
		if m, ok := a.p.(interface{ Invariants() []record.Invariant }); ok {
			out = append(out, m.Invariants()...)
		}
	}
	return out
}

// Exhausted implements Finite: every arm has run out.
func (p *portfolio) Exhausted() bool {
	for _, a := range p.arms {
		if !a.exhausted() {
			return false
		}
	}
	return true
}

// Explain implements Explainer: the technique that has trial index, why
// it was chosen (reason) and, when the technique explains itself (fuzz),
// what it did.
func (p *portfolio) Explain(index int) Choice {
	t := p.trials.of(index)
	if t == nil {
		return Choice{}
	}
	a := p.arms[t.arm]
	why := t.why
	if e, ok := a.p.(Explainer); ok {
		if c := e.Explain(index); c.Why != "" {
			why += "; " + c.Why
		}
	}
	return Choice{Technique: a.name, Why: why}
}

// portfolioState is the portfolio's Snapshot: each arm's counts and, for
// a Stateful arm, its own snapshot, and the (site, role) pairs reached.
type portfolioState struct {
	Arms    []armState `json:"arms"`
	Reached []string   `json:"reached,omitempty"`
}

type armState struct {
	Name    string          `json:"name"`
	Trials  int             `json:"trials"`
	Reward  float64         `json:"reward"`
	Failed  int             `json:"failed"`
	Injects int             `json:"injects"`
	Last    *revealed       `json:"last,omitempty"`
	State   json.RawMessage `json:"state,omitempty"`
}

// Snapshot implements Stateful.
func (p *portfolio) Snapshot() ([]byte, error) {
	var st portfolioState
	for _, a := range p.arms {
		as := armState{Name: a.name, Trials: a.trials, Reward: a.reward, Failed: a.failed, Injects: a.injects, Last: a.last}
		if s, ok := a.p.(Stateful); ok {
			data, err := s.Snapshot()
			if err != nil {
				return nil, fmt.Errorf("portfolio arm %s: %w", a.name, err)
			}
			as.State = data
		}
		st.Arms = append(st.Arms, as)
	}
	for k := range p.reached {
		st.Reached = append(st.Reached, k)
	}
	slices.Sort(st.Reached)
	return json.Marshal(st)
}

// Restore implements Stateful; an arm the snapshot lacks starts afresh.
func (p *portfolio) Restore(data []byte) error {
	var st portfolioState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("portfolio state: %w", err)
	}
	for _, as := range st.Arms {
		for _, a := range p.arms {
			if a.name != as.Name {
				continue
			}
			a.trials, a.reward, a.failed, a.injects, a.last = as.Trials, as.Reward, as.Failed, as.Injects, as.Last
			if s, ok := a.p.(Stateful); ok && len(as.State) > 0 {
				if err := s.Restore(as.State); err != nil {
					return fmt.Errorf("portfolio arm %s: %w", a.name, err)
				}
			}
		}
	}
	for _, k := range st.Reached {
		p.reached[k] = true
	}
	return nil
}
