package policy

import (
	"encoding/json"
	"fmt"
	"math"
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
// observation points) or has nothing new to try (Finite) is skipped.
type portfolio struct {
	arms []*arm
	cur  int // the arm of the trial in progress; -1 between trials
	// why says why the trial in progress went to its arm (Explain).
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
}

func newPortfolio(env Env) (Policy, error) {
	p := &portfolio{cur: -1}
	for _, name := range portfolioArms {
		c := registry[name]
		if c == nil {
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
	return p, nil
}

// Name implements Policy.
func (p *portfolio) Name() string { return "portfolio" }

// reward is what a trial tells the portfolio of its arm, in [0, 1]: 0 for
// a trial that injected nothing (wasted), 1 for one a checker failed (a
// symptom), else 0.1 for the fault and up to 0.4 more for the coverage
// blocks no earlier trial had (new recovery code reached: 20 blocks or
// more earn it all).
func reward(out Outcome) float64 {
	switch {
	case len(out.Injections) == 0:
		return 0
	case out.Failed:
		return 1
	}
	return 0.1 + 0.4*math.Min(1, float64(out.NewBlocks)/20)
}

// choose returns the arm for the next trial and why: an arm never tried,
// in order; else the highest UCB1 score, mean + sqrt(2 ln N / n), over the
// arms with something left to try (the first on a tie).
func (p *portfolio) choose() (int, string) {
	total := 0
	for _, a := range p.arms {
		total += a.trials
	}
	best, bestScore := -1, math.Inf(-1)
	for i, a := range p.arms {
		if f, ok := a.p.(Finite); ok && f.Exhausted() {
			continue
		}
		if a.trials == 0 {
			return i, "not tried yet"
		}
		mean := a.reward / float64(a.trials)
		score := mean + math.Sqrt(2*math.Log(float64(total))/float64(a.trials))
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return 0, "every technique has run out of new faults"
	}
	a := p.arms[best]
	return best, fmt.Sprintf("UCB %.2f: mean reward %.2f over %d trials (%d failed, %d injected) of %d in all",
		bestScore, a.reward/float64(a.trials), a.trials, a.failed, a.injects, total)
}

// Begin implements Policy: the trial goes to the chosen arm.
func (p *portfolio) Begin(info TrialInfo) Plan {
	p.cur, p.why = p.choose()
	return p.arms[p.cur].p.Begin(info)
}

// Decide implements Policy.
func (p *portfolio) Decide(req *Request) Decision {
	if p.cur < 0 {
		return Decision{Done: true}
	}
	return p.arms[p.cur].p.Decide(req)
}

// End implements Policy: the arm learns its trial's outcome and the
// portfolio its reward.
func (p *portfolio) End(out Outcome) {
	if p.cur < 0 {
		return
	}
	a := p.arms[p.cur]
	a.p.End(out)
	a.trials++
	a.reward += reward(out)
	if out.Failed {
		a.failed++
	}
	if len(out.Injections) > 0 {
		a.injects++
	}
	p.cur = -1
}

// Observe implements Observer for an arm that observes (cofi).
func (p *portfolio) Observe(o *Observation) Partition {
	if p.cur < 0 {
		return Partition{}
	}
	if ob, ok := p.arms[p.cur].p.(Observer); ok {
		return ob.Observe(o)
	}
	return Partition{}
}

// Exhausted implements Finite: every arm has run out.
func (p *portfolio) Exhausted() bool {
	for _, a := range p.arms {
		if f, ok := a.p.(Finite); !ok || !f.Exhausted() {
			return false
		}
	}
	return true
}

// Explain says which technique has the trial in progress and why, e.g.
// "fuzz (UCB 0.83: mean reward 0.50 over 6 trials …)".
func (p *portfolio) Explain() string {
	if p.cur < 0 {
		return ""
	}
	return p.arms[p.cur].name + " (" + p.why + ")"
}

// portfolioState is the portfolio's Snapshot: each arm's counts and, for
// a Stateful arm, its own snapshot.
type portfolioState struct {
	Arms []armState `json:"arms"`
}

type armState struct {
	Name    string          `json:"name"`
	Trials  int             `json:"trials"`
	Reward  float64         `json:"reward"`
	Failed  int             `json:"failed"`
	Injects int             `json:"injects"`
	State   json.RawMessage `json:"state,omitempty"`
}

// Snapshot implements Stateful.
func (p *portfolio) Snapshot() ([]byte, error) {
	var st portfolioState
	for _, a := range p.arms {
		as := armState{Name: a.name, Trials: a.trials, Reward: a.reward, Failed: a.failed, Injects: a.injects}
		if s, ok := a.p.(Stateful); ok {
			data, err := s.Snapshot()
			if err != nil {
				return nil, fmt.Errorf("portfolio arm %s: %w", a.name, err)
			}
			as.State = data
		}
		st.Arms = append(st.Arms, as)
	}
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
			a.trials, a.reward, a.failed, a.injects = as.Trials, as.Reward, as.Failed, as.Injects
			if s, ok := a.p.(Stateful); ok && len(as.State) > 0 {
				if err := s.Restore(as.State); err != nil {
					return fmt.Errorf("portfolio arm %s: %w", a.name, err)
				}
			}
		}
	}
	return nil
}
