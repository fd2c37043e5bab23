package policy

import (
	"math"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// armStub is a technique for the portfolio's tests: it grants a fault to
// every request when inject is set, and counts its trials.
type armStub struct {
	inject bool
	trials int
}

func (a *armStub) Name() string         { return "stub" }
func (a *armStub) Begin(TrialInfo) Plan { a.trials++; return Plan{Sites: []uint32{0}} }
func (a *armStub) Decide(*Request) Decision {
	if a.inject {
		return Decision{Fault: Fault{Kind: catalog.KindCrash}, Done: true}
	}
	return Decision{Done: true}
}
func (a *armStub) End(Outcome) {}

// TestPortfolio: each technique gets a trial first, in order; then the
// trials go mostly to the one whose trials revealed most (failures), the
// others still get some (exploration); one that injects nothing gets
// fewest; the choice says why; the counts survive a snapshot.
func TestPortfolio(t *testing.T) {
	good, meh, idle := &armStub{inject: true}, &armStub{inject: true}, &armStub{}
	stubs := map[string]*armStub{"t-good": good, "t-meh": meh, "t-idle": idle}
	for name, s := range stubs {
		s := s
		Register(name, func(Env) (Policy, error) { return s, nil })
		defer delete(registry, name)
	}
	old := portfolioArms
	portfolioArms = []string{"t-idle", "t-meh", "t-good", "t-unregistered"}
	defer func() { portfolioArms = old }()

	pol, err := New("portfolio", Env{})
	if err != nil {
		t.Fatal(err)
	}
	p := pol.(*portfolio)
	var order []string
	for i := range 60 {
		p.Begin(TrialInfo{Index: i})
		arm := p.arms[p.cur].name
		if i < 3 {
			order = append(order, arm)
			if !strings.Contains(p.Explain(), "not tried yet") {
				t.Errorf("trial %d: %q, want the first round's reason", i, p.Explain())
			}
		}
		d := p.Decide(&Request{})
		out := Outcome{Index: i}
		if d.Fault.Kind != catalog.KindNone {
			out.Injections = []record.Injection{{Kind: d.Fault.Kind}}
			out.Failed = arm == "t-good" // its faults reveal a symptom
		}
		p.End(out)
	}
	if strings.Join(order, ",") != "t-idle,t-meh,t-good" {
		t.Errorf("first round %v, want every arm once in order", order)
	}
	if !(good.trials > 3*meh.trials && meh.trials >= idle.trials && idle.trials >= 2) {
		t.Errorf("trials: good %d, meh %d, idle %d; want good > 3 × meh, meh ≥ idle ≥ 2 (explored)", good.trials, meh.trials, idle.trials)
	}
	p.Begin(TrialInfo{Index: 60})
	if why := p.Explain(); !strings.HasPrefix(why, "t-good (UCB ") {
		t.Errorf("Explain = %q, want the best arm and its score", why)
	}
	p.End(Outcome{})

	data, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := New("portfolio", Env{})
	if err := fresh.(Stateful).Restore(data); err != nil {
		t.Fatal(err)
	}
	for i, a := range fresh.(*portfolio).arms {
		if b := p.arms[i]; a.trials != b.trials || a.reward != b.reward || a.failed != b.failed {
			t.Errorf("arm %s after restore: %+v, want %+v", a.name, *a, *b)
		}
	}
}

// TestPortfolioReward: a trial that injected nothing earns nothing, a
// symptom everything, new coverage up to half.
func TestPortfolioReward(t *testing.T) {
	inj := []record.Injection{{Kind: catalog.KindError}}
	for _, tc := range []struct {
		out  Outcome
		want float64
	}{
		{Outcome{}, 0},
		{Outcome{Injections: inj, Failed: true}, 1},
		{Outcome{Injections: inj}, 0.1},
		{Outcome{Injections: inj, NewBlocks: 10}, 0.3},
		{Outcome{Injections: inj, NewBlocks: 500}, 0.5},
	} {
		if got := reward(tc.out); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("reward(%+v) = %v, want %v", tc.out, got, tc.want)
		}
	}
}
