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
// catalog has observation points), rewarded by what each arm's trials
// revealed. The first arm that can run (random, the broad explorer: the
// base) leads from the start: it takes the trials until another arm's
// mean reward over at least leadAfter trials beats it. The others (the
// challengers) get one trial in challengeEvery, each untried one in
// turn, then by UCB1 among them, so none starves; a challenger that
// earns more than the leader takes the lead. With a small budget most
// trials go to the broad explorer, instead of one round over every
// technique first (half of a 10-trial budget with five arms).
// An arm that has no fault here gets no trial (armGates: no site takes a
// fault of the allowed kinds, sieve without a delay site, cofi where
// faults.kinds does not list partition), nor one that has nothing new to
// try (Finite), nor one whose first noInjectAfter trials injected nothing
// while another arm's injected (benched).
// Trials run at once each keep their own arm. Explain says, per trial,
// which arm has it and why.
type portfolio struct {
	arms   []*arm
	trials running[portfolioTrial]
	// reached are the (site, role) pairs that the trials told so far
	// reached, as pairKey: a trial that reaches another earns a reward.
	reached map[string]bool
	// gated are the arms left out for having no fault here, with why
	// (armGates), for the reasons.
	gated []string
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

// armGates say, for an arm by name, why it has no fault to inject in
// env ("" where it has one): such an arm gets no trial, from the first.
// cofi only partitions, whatever faults.kinds says: standing alone that
// is the user's explicit choice; inside the portfolio a trial of its would
// inject a kind the user did not list, or, where the controller refuses
// it, nothing at all (a wasted trial; the first bench of the portfolio
// injected in 88 % and 90 % of the trials under [pause] and [rot]).
var armGates = map[string]func(Env) string{
	"random": noCandidate,
	"fuzz":   noCandidate,
	"bsrr":   noCandidate,
	"sieve": func(env Env) string {
		if len(sieveSites(env)) == 0 {
			return "no delay site of the allowed kinds"
		}
		return ""
	},
	"cofi": func(env Env) string {
		if !env.allows(catalog.KindPartition) {
			return "faults.kinds does not list partition"
		}
		return ""
	},
}

// noCandidate is the gate of the arms that draw from the candidate sites.
func noCandidate(env Env) string {
	if len(env.candidateSites()) == 0 {
		return "no site takes a fault of the allowed kinds"
	}
	return ""
}

func newPortfolio(env Env) (Policy, error) {
	p := &portfolio{reached: map[string]bool{}}
	var gated []*arm
	for _, name := range portfolioArms {
		c := registry[name]
		if c == nil {
			continue
		}
		var why string
		if g := armGates[name]; g != nil {
			why = g(env)
		}
		ap, err := c(env)
		if err != nil {
			continue // e.g. cofi without observation points
		}
		if why != "" {
			p.gated = append(p.gated, name+" ("+why+")")
			gated = append(gated, &arm{name: name, p: ap})
			continue
		}
		p.arms = append(p.arms, &arm{name: name, p: ap})
	}
	if len(p.arms) == 0 && len(gated) > 0 {
		// No arm has a fault here: the trials inject nothing whoever
		// has them. The first (random) runs them, as it would alone,
		// rather than the portfolio refusing the campaign.
		p.arms, p.gated = gated[:1], p.gated[1:]
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

// The portfolio's choice rule (choose).
const (
	// challengeEvery: the challengers (every arm but the leader) get one
	// trial in challengeEvery, counting trials begun.
	challengeEvery = 4
	// leadAfter is the ended trials a challenger needs before its mean
	// reward can take the lead.
	leadAfter = 2
	// noInjectAfter: an arm whose first noInjectAfter ended trials all
	// injected nothing, while another arm's trials injected, is benched.
	noInjectAfter = 2
)

// choose returns the arm for the next trial and why. Among the arms that
// can run (not exhausted, not benched: see benched), the leader is the first (the base:
// random, the broad explorer) unless a challenger's mean reward over at
// least leadAfter ended trials is higher (the highest then leads; the
// base keeps the lead on a tie, and leads while none of its trials has
// ended). The leader takes the trial, except when the challengers have
// had fewer than one in challengeEvery of the trials begun: then the
// trial goes to a challenger, an untried one first (in order), else the
// one of the highest UCB1 score, mean + sqrt(2 ln N / n), N and n being
// trials begun (running ones count as pulls, so trials begun at once
// spread), the mean over those ended.
func (p *portfolio) choose() (int, string) {
	total := 0
	for _, a := range p.arms {
		total += a.pulls()
	}
	var live []int
	for i, a := range p.arms {
		if !a.exhausted() && !p.benched(i) {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return 0, "every technique has run out of new faults"
	}
	lead := live[0]
	for _, i := range live[1:] {
		a, l := p.arms[i], p.arms[lead]
		if a.trials >= leadAfter && l.trials > 0 && a.mean() > l.mean() {
			lead = i
		}
	}
	challenged := 0
	for _, i := range live {
		if i != lead {
			challenged += p.arms[i].pulls()
		}
	}
	if len(live) == 1 || challenged >= (total+1)/challengeEvery {
		return lead, p.leadReason(lead, live[0], challenged, total)
	}
	best, bestScore := -1, math.Inf(-1)
	for _, i := range live {
		a := p.arms[i]
		if i == lead {
			continue
		}
		if a.pulls() == 0 {
			return i, p.challengeReason(lead, challenged, total) + "; not tried yet: each other technique gets a turn, in order"
		}
		if a.trials == 0 {
			continue // its first trial still runs
		}
		if score := a.mean() + explore(total, a.pulls()); score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return lead, p.leadReason(lead, live[0], challenged, total) + "; every challenger's first trial is still running"
	}
	return best, p.challengeReason(lead, challenged, total) + "; " + p.ucbReason(best, total)
}

// benched reports that arm i's first noInjectAfter trials injected
// nothing (its faults are not offered here) while another arm that can
// run injected or is untried: the trials go there instead.
func (p *portfolio) benched(i int) bool {
	if a := p.arms[i]; a.trials < noInjectAfter || a.injects > 0 {
		return false
	}
	for j, b := range p.arms {
		if j != i && !b.exhausted() && (b.injects > 0 || b.pulls() == 0) {
			return true
		}
	}
	return false
}

// explore is UCB1's exploration term for an arm of n trials of total.
func explore(total, n int) float64 { return math.Sqrt(2 * math.Log(float64(total)) / float64(n)) }

// pulls are the arm's trials begun: ended and running.
func (a *arm) pulls() int { return a.trials + a.running }

// evidence says what an arm's trials earned: "mean reward 0.30 over 4
// trials (0 failed, 4 injected; 1 more running)".
func (a *arm) evidence() string {
	running := ""
	if a.running > 0 {
		running = fmt.Sprintf("; %d more running", a.running)
	}
	if a.trials == 0 {
		return fmt.Sprintf("no trial ended yet (%d running)", a.running)
	}
	return fmt.Sprintf("mean reward %.2f over %s (%d failed, %d injected%s)",
		a.mean(), plural(a.trials, "trial", "trials"), a.failed, a.injects, running)
}

// lastReason is the arm's last trial that revealed something, or that
// none did.
func (a *arm) lastReason() string {
	if a.last != nil {
		return fmt.Sprintf("its trial %d revealed %s (reward %.2f)", a.last.Trial, a.last.What, a.last.Reward)
	}
	return "none of its trials revealed more than its fault yet"
}

// leadReason says why the leader lead has the trial: the base (the first
// arm that can run) by default, or a challenger whose mean beat it; the
// challengers' share so far; its last revealing trial.
func (p *portfolio) leadReason(lead, base, challenged, total int) string {
	a := p.arms[lead]
	var why string
	if lead == base {
		why = fmt.Sprintf("leads as the base technique (the broad explorer) until another's mean reward over %d trials beats it: %s", leadAfter, a.evidence())
	} else {
		b := p.arms[base]
		why = fmt.Sprintf("leads: %s, above %s's %.2f over %s", a.evidence(), b.name, b.mean(), plural(b.trials, "trial", "trials"))
	}
	why += fmt.Sprintf("; the others had %d of %d trials begun (1 in %d goes to them)", challenged, total, challengeEvery)
	return why + "; " + a.lastReason() + p.gatedReason()
}

// challengeReason opens the reason of a challenger's trial: its turn.
func (p *portfolio) challengeReason(lead, challenged, total int) string {
	return fmt.Sprintf("a challenger's turn (1 in %d; the others had %d of %d trials begun), %s leads", challengeEvery, challenged, total, p.arms[lead].name) + p.gatedReason()
}

// ucbReason says why challenger i won its turn: its UCB score and the
// evidence, and its last trial that revealed something.
func (p *portfolio) ucbReason(i, total int) string {
	a := p.arms[i]
	e := explore(total, a.pulls())
	return fmt.Sprintf("UCB %.2f: %s + %.2f to explore, of %d trials begun; %s", a.mean()+e, a.evidence(), e, total, a.lastReason())
}

// gatedReason names the arms left out for having no fault here.
func (p *portfolio) gatedReason() string {
	if len(p.gated) == 0 {
		return ""
	}
	return "; not run here: " + strings.Join(p.gated, ", ")
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
