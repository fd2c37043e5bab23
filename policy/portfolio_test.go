package policy

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestPortfolio: the base (the first arm) leads; the others get one
// trial in challengeEvery, each untried one in turn, then by UCB1; the
// one whose trials fail takes the lead and most of the trials, the others
// are still explored; one that injects nothing is benched after
// noInjectAfter trials; the choice says why; the counts survive a
// snapshot.
func TestPortfolio(t *testing.T) {
	base, good, meh, idle := &armStub{inject: true}, &armStub{inject: true}, &armStub{inject: true}, &armStub{}
	stubs := map[string]*armStub{"t-base": base, "t-good": good, "t-meh": meh, "t-idle": idle}
	for name, s := range stubs {
		s := s
		Register(name, func(Env) (Policy, error) { return s, nil })
		defer delete(registry, name)
	}
	old := portfolioArms
	portfolioArms = []string{"t-base", "t-idle", "t-meh", "t-good", "t-unregistered"}
	defer func() { portfolioArms = old }()

	pol, err := New("portfolio", Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, learns := pol.(Learner); learns {
		t.Error("a portfolio without an arm that learns is a Learner: its campaign would run fault-free trials for nothing")
	}
	p := pol.(*portfolio)
	var order []string
	for i := range 60 {
		p.Begin(TrialInfo{Index: i})
		arm := p.arms[p.trials.of(i).arm].name
		if i < 12 {
			order = append(order, arm)
		}
		if c := p.Explain(i); i == 3 && (c.Technique != "t-idle" || !strings.Contains(c.Why, "a challenger's turn (1 in 4; the others had 0 of 3 trials begun), t-base leads") || !strings.Contains(c.Why, "not tried yet")) {
			t.Errorf("trial 3: %+v, want t-idle's first turn as a challenger", c)
		}
		d := p.Decide(&Request{Trial: i})
		out := Outcome{Index: i}
		if d.Fault.Kind != catalog.KindNone {
			out.Injections = []record.Injection{{Kind: d.Fault.Kind}}
			out.Failed = arm == "t-good" // its faults reveal a symptom
		}
		p.End(out)
	}
	// The base has trials 0-2, the untried challengers 3, 7 and 11 in
	// order; the base the rest (t-idle is one trial short of a bench).
	want := "t-base,t-base,t-base,t-idle,t-base,t-base,t-base,t-meh,t-base,t-base,t-base,t-good"
	if got := strings.Join(order, ","); got != want {
		t.Errorf("first 12 trials %s\nwant              %s", got, want)
	}
	if !(good.trials > 30 && good.trials > 2*base.trials && base.trials >= 2 && meh.trials >= 2 && idle.trials == 1) {
		t.Errorf("trials: base %d, good %d, meh %d, idle %d; want good > 30 and > 2 × base, base and meh ≥ 2 (explored), idle 1",
			base.trials, good.trials, meh.trials, idle.trials)
	}
	p.Begin(TrialInfo{Index: 60})
	if c := p.Explain(60); c.Technique != "t-good" || !strings.HasPrefix(c.Why, "leads: mean reward 1.00 over") || !strings.Contains(c.Why, "above t-base's 0.10") {
		t.Errorf("Explain = %+v, want the failing arm leading and why", c)
	}
	p.End(Outcome{Index: 60})

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
// symptom everything; otherwise the fault, new coverage, new (site, role)
// pairs and an informational verdict each earn their part, never 1.
func TestPortfolioReward(t *testing.T) {
	for _, tc := range []struct {
		g    gain
		want float64
	}{
		{gain{}, 0},
		{gain{failed: true, checkers: []string{"hang"}}, 0},
		{gain{injected: true, failed: true, checkers: []string{"hang"}}, 1},
		{gain{injected: true, failed: true, blocks: 500, notes: []string{"crash"}}, 1},
		{gain{injected: true}, 0.1},
		{gain{injected: true, blocks: 10}, 0.3},
		{gain{injected: true, blocks: 500}, 0.5},
		{gain{injected: true, pairs: 1}, 0.14},
		{gain{injected: true, pairs: 9}, 0.3},
		{gain{injected: true, notes: []string{"crash"}}, 0.3},
		{gain{injected: true, notes: []string{"crash", "slow"}}, 0.3},
		{gain{injected: true, blocks: 500, pairs: 500, notes: []string{"slow"}}, 0.9},
	} {
		got := tc.g.reward()
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("reward(%+v) = %v, want %v", tc.g, got, tc.want)
		}
		if got < 0 || got > 1 || got == 1 && !tc.g.failed {
			t.Errorf("reward(%+v) = %v, out of [0, 1) for a trial that did not fail", tc.g, got)
		}
	}
}

// TestGainString: what a trial revealed, in the words a reason cites.
func TestGainString(t *testing.T) {
	for _, tc := range []struct {
		g    gain
		want string
	}{
		{gain{}, "no fault injected"},
		{gain{injected: true}, "its fault alone"},
		{gain{injected: true, failed: true}, "a failure"},
		{gain{injected: true, failed: true, checkers: []string{"linearizability", "replicas"}, blocks: 3}, "a failure by linearizability, replicas"},
		{gain{injected: true, blocks: 1}, "1 new block"},
		{gain{injected: true, blocks: 12, pairs: 2}, "12 new blocks, 2 new (site, role) pairs"},
		{gain{injected: true, pairs: 1, notes: []string{"crash"}}, "1 new (site, role) pair, an informational verdict by crash"},
		{gain{injected: true, notes: []string{"crash", "slow"}}, "informational verdicts by crash, slow"},
	} {
		if got := tc.g.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.g, got, tc.want)
		}
	}
}

// stubArms registers stub techniques under names and makes them the
// portfolio's arms, in order, for the test.
func stubArms(t *testing.T, arms map[string]Policy, order ...string) *portfolio {
	t.Helper()
	for name, a := range arms {
		Register(name, func(Env) (Policy, error) { return a, nil })
		t.Cleanup(func() { delete(registry, name) })
	}
	old := portfolioArms
	portfolioArms = order
	t.Cleanup(func() { portfolioArms = old })
	pol, err := New("portfolio", Env{})
	if err != nil {
		t.Fatal(err)
	}
	return pol.(*portfolio)
}

// exhaustedStub is a technique that has run out of faults.
type exhaustedStub struct{ armStub }

func (*exhaustedStub) Exhausted() bool { return true }

// explainingStub is a technique that says what it did (as fuzz does).
type explainingStub struct{ armStub }

func (*explainingStub) Explain(index int) Choice {
	return Choice{Technique: "stub", Why: fmt.Sprintf("appends a crash of n2 to trial %d's sequence", index-1)}
}

// TestPortfolioReasons: the reason names the evidence (an untried arm;
// the UCB score, mean, trials and exploration; whether the arm won on
// its mean or by exploration), the arm's last trial that revealed
// something and what, and, for an arm that explains itself, what it did.
func TestPortfolioReasons(t *testing.T) {
	for _, tc := range []struct {
		name string
		// arms are the arms' trials, summed rewards and last revealing
		// trial (nil: none), in order; exhausted marks the arms out of
		// faults.
		arms      []arm
		exhausted []bool
		wantArm   string
		want      []string
		notWant   []string
	}{
		{
			name:    "an untried arm",
			arms:    []arm{{trials: 3, reward: 3}, {}},
			wantArm: "b", want: []string{"not tried yet"}, notWant: []string{"UCB"},
		},
		{
			name:    "the best mean",
			arms:    []arm{{trials: 5, reward: 4, failed: 3, injects: 5, last: &revealed{Trial: 37, Reward: 1, What: "a failure by linearizability"}}, {trials: 5, reward: 0.5, injects: 5}},
			wantArm: "a",
			want: []string{"UCB 1.76: mean reward 0.80 over 5 trials (3 failed, 5 injected) + 0.96 to explore, of 10 trials begun",
				"the best mean", "its trial 37 revealed a failure by linearizability (reward 1.00)"},
			notWant: []string{"exploring"},
		},
		{
			name:    "exploring an arm left alone",
			arms:    []arm{{trials: 40, reward: 20, injects: 40}, {trials: 1, reward: 0.1, injects: 1}},
			wantArm: "b",
			want:    []string{"mean reward 0.10 over 1 trial (0 failed, 1 injected)", "exploring: a has the best mean, 0.50 over 40 trials", "none of its trials revealed more than its fault yet"},
		},
		{
			name:      "an exhausted arm is passed over",
			arms:      []arm{{trials: 5, reward: 5}, {trials: 5, reward: 0.5, last: &revealed{Trial: 4, Reward: 0.3, What: "10 new blocks"}}},
			exhausted: []bool{true, false},
			wantArm:   "b", want: []string{"the best mean", "its trial 4 revealed 10 new blocks (reward 0.30)"},
		},
		{
			name:      "every arm exhausted",
			arms:      []arm{{trials: 5, reward: 5}, {trials: 5}},
			exhausted: []bool{true, true},
			wantArm:   "a", want: []string{"every technique has run out of new faults"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stubs := map[string]Policy{}
			for i, name := range []string{"a", "b"} {
				stubs[name] = &armStub{}
				if i < len(tc.exhausted) && tc.exhausted[i] {
					stubs[name] = &exhaustedStub{}
				}
			}
			p := stubArms(t, stubs, "a", "b")
			for i, a := range tc.arms {
				p.arms[i].trials, p.arms[i].reward, p.arms[i].failed, p.arms[i].injects, p.arms[i].last = a.trials, a.reward, a.failed, a.injects, a.last
			}
			p.Begin(TrialInfo{Index: 50})
			c := p.Explain(50)
			if c.Technique != tc.wantArm {
				t.Errorf("chose %q (%s), want %s", c.Technique, c.Why, tc.wantArm)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Why, w) {
					t.Errorf("why %q\\nlacks %q", c.Why, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(c.Why, w) {
					t.Errorf("why %q\\nhas %q", c.Why, w)
				}
			}
		})
	}
}

// TestPortfolioExplain: a technique that explains itself adds what it
// did to the portfolio's reason; a trial not running has no choice; the
// arm's last revealing trial is the last one that earned more than its
// fault, and it survives a snapshot, as the (site, role) pairs do.
func TestPortfolioExplain(t *testing.T) {
	p := stubArms(t, map[string]Policy{"t-fuzz": &explainingStub{armStub{inject: true}}}, "t-fuzz")
	if c := p.Explain(0); c != (Choice{}) {
		t.Errorf("Explain of no trial = %+v", c)
	}
	inj := []record.Injection{{Kind: catalog.KindCrash}}
	reach := func(pairs ...string) []record.Reach {
		var rs []record.Reach
		for _, p := range pairs {
			site, role, _ := strings.Cut(p, "|")
			rs = append(rs, record.Reach{SiteID: site, Role: role, Requests: 1})
		}
		return rs
	}
	for i, out := range []Outcome{
		// The first trial's pairs are only made known.
		{Injections: inj, Reached: reach("s1|leader", "s1|follower", "s2|follower")},
		{Injections: inj, NewBlocks: 12, Reached: reach("s1|leader", "s2|leader")},
		{Injections: inj, Reached: reach("s1|leader")},
		{Injections: inj, Notes: []string{"crash"}},
		{Injections: inj},
	} {
		p.Begin(TrialInfo{Index: i})
		out.Index = i
		p.End(out)
	}
	a := p.arms[0]
	if l := a.last; l == nil || l.Trial != 3 || math.Abs(l.Reward-0.3) > 1e-9 || l.What != "an informational verdict by crash" {
		t.Errorf("last = %+v, want trial 3's informational verdict", l)
	}
	// The second trial's 12 blocks (0.24) and 1 new pair (0.04) count.
	if want := 0.1 + 0.38 + 0.1 + 0.3 + 0.1; math.Abs(a.reward-want) > 1e-9 {
		t.Errorf("reward %v, want %v", a.reward, want)
	}
	p.Begin(TrialInfo{Index: 5})
	c := p.Explain(5)
	if c.Technique != "t-fuzz" || !strings.Contains(c.Why, "its trial 3 revealed an informational verdict by crash (reward 0.30); appends a crash of n2 to trial 4's sequence") {
		t.Errorf("Explain = %+v, want the reason, then what the technique did", c)
	}
	p.End(Outcome{Index: 5})

	data, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q := stubArms(t, map[string]Policy{"t-fuzz": &explainingStub{}}, "t-fuzz")
	if err := q.Restore(data); err != nil {
		t.Fatal(err)
	}
	if l := q.arms[0].last; l == nil || *l != *a.last {
		t.Errorf("last after restore = %+v, want %+v", l, a.last)
	}
	if len(q.reached) != 4 || q.newPairs(reach("s2|leader", "s3|")) != 1 {
		t.Errorf("pairs after restore %v, want the 4 reached, s3 new", q.reached)
	}
}

// TestPortfolioParallel: trials that run at once each keep their own
// technique: requests and the end of one go to its arm, not to the arm
// of the trial begun last.
func TestPortfolioParallel(t *testing.T) {
	a, b := &armStub{inject: true}, &armStub{}
	p := stubArms(t, map[string]Policy{"t-a": a, "t-b": b}, "t-a", "t-b")
	p.Begin(TrialInfo{Index: 0}) // t-a
	p.Begin(TrialInfo{Index: 1}) // t-b
	p.Begin(TrialInfo{Index: 2}) // both still running: t-a again
	if c := p.Explain(2); c.Technique != "t-a" || !strings.Contains(c.Why, "first trial of every technique is still running") {
		t.Errorf("trial 2: %+v, want t-a while every first trial runs", c)
	}
	p.End(Outcome{Index: 2})
	if d := p.Decide(&Request{Trial: 0}); d.Fault.Kind != catalog.KindCrash {
		t.Errorf("trial 0's request: %+v, want t-a's crash", d)
	}
	p.End(Outcome{Index: 1})
	if d := p.Decide(&Request{Trial: 0}); d.Fault.Kind != catalog.KindCrash {
		t.Errorf("trial 0's request after trial 1 ended: %+v, want t-a's crash", d)
	}
	if d := p.Decide(&Request{Trial: 1}); !d.Done || d.Fault.Kind != catalog.KindNone {
		t.Errorf("request of ended trial 1: %+v, want none, done", d)
	}
	p.End(Outcome{Index: 0, Injections: []record.Injection{{Kind: catalog.KindCrash}}, Failed: true})
	if p.arms[0].trials != 2 || p.arms[0].failed != 1 || p.arms[1].trials != 1 || p.arms[1].injects != 0 {
		t.Errorf("arms after: t-a %+v, t-b %+v; want each its own trial", *p.arms[0], *p.arms[1])
	}
}

// TestPortfolioParallelSpread: after the first round, trials begun
// before any of them ends spread over the arms (running trials count as
// pulls); plain UCB1 would give all of them the same arm.
func TestPortfolioParallelSpread(t *testing.T) {
	a, b, c := &armStub{inject: true}, &armStub{inject: true}, &armStub{inject: true}
	p := stubArms(t, map[string]Policy{"t-a": a, "t-b": b, "t-c": c}, "t-a", "t-b", "t-c")
	for i := range 3 { // the first round, ended alike
		p.Begin(TrialInfo{Index: i})
		p.End(Outcome{Index: i, Injections: []record.Injection{{Kind: catalog.KindCrash}}})
	}
	got := map[string]int{}
	for i := 3; i < 6; i++ {
		p.Begin(TrialInfo{Index: i})
		got[p.Explain(i).Technique]++
	}
	if len(got) != 3 {
		t.Errorf("three trials begun at once went to %v, want one each", got)
	}
	p.Begin(TrialInfo{Index: 6}) // a fourth: its arm has one running
	if why := p.Explain(6).Why; !strings.Contains(why, "over 1 trial (0 failed, 1 injected; 1 more running) + 1.34 to explore, of 6 trials begun") {
		t.Errorf("reason %q does not count the running trial", why)
	}
}

// TestOutcomeOf: a judged trial's outcome names the checkers that failed
// it and those that passed it with a note.
func TestOutcomeOf(t *testing.T) {
	tr := &record.Trial{Index: 4, Requests: 9, Status: record.StatusFailed, NewBlocks: 3,
		Reached: []record.Reach{{SiteID: "s", Role: "leader"}},
		Verdicts: []record.Verdict{
			{Checker: "crash", Symptom: "informational: node stopped on a corruption it detected"},
			{Checker: "hang", Failed: true, Symptom: "client n2/0 made no progress for 3s"},
			{Checker: "log"},
			{Checker: "linearizability", Unknown: true, Symptom: "search timed out"},
		}}
	out := OutcomeOf(tr)
	if out.Index != 4 || out.Requests != 9 || !out.Failed || out.NewBlocks != 3 || len(out.Reached) != 1 ||
		!slices.Equal(out.Checkers, []string{"hang"}) || !slices.Equal(out.Notes, []string{"crash"}) {
		t.Errorf("OutcomeOf = %+v", out)
	}
}

// TestPortfolioLearns: the portfolio hands the fault-free trials'
// observations to its cofi arm, which mines its invariants from them (and
// the campaign stores them through Invariants); before, cofi's trials in
// the portfolio had no invariant and injected nothing.
func TestPortfolioLearns(t *testing.T) {
	cat := cofiCatalog()
	cat.Sites = []catalog.Site{{Index: 0, ID: "rafthttp:conn.Write#0", Kind: catalog.KindError, IO: "net", Peer: "to"}}
	pol, err := New("portfolio", Env{Catalog: cat, Seed: 1, Partition: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l, ok := pol.(Learner)
	if !ok {
		t.Fatal("the portfolio is no Learner")
	}
	var clean []record.Observation
	for range 30 {
		clean = append(clean, handled(0, "n2", 3, 1, 2, 2).Observation)
	}
	l.Learn([][]record.Observation{clean})
	got := pol.(interface{ Invariants() []record.Invariant }).Invariants()
	if len(got) != 1 || got[0].A != "msg.Term" || got[0].B != "node.Term" {
		t.Fatalf("invariants %+v, want cofi's msg.Term == node.Term", got)
	}
}

// TestPortfolioArmKinds: cofi, which only partitions, is an arm of the
// portfolio only where faults.kinds allows partitions (or lists nothing);
// under [pause] its trials would inject a kind the user did not list, or
// nothing (the first bench of the portfolio: 88 % injected).
func TestPortfolioArmKinds(t *testing.T) {
	cat := cofiCatalog()
	cat.Sites = []catalog.Site{{Index: 0, ID: "rafthttp:conn.Write#0", Kind: catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindPartition, IO: "net", Peer: "to", Errors: []catalog.ErrorValue{{Name: "EIO"}}}}
	tests := []struct {
		kinds []catalog.Kind
		cofi  bool
	}{
		{nil, true},
		{[]catalog.Kind{catalog.KindPartition}, true},
		{[]catalog.Kind{catalog.KindError, catalog.KindPartition}, true},
		{[]catalog.Kind{catalog.KindPause}, false},
		{[]catalog.Kind{catalog.KindError, catalog.KindDelay, catalog.KindCrash, catalog.KindCrashAfter}, false},
	}
	for _, tt := range tests {
		pol, err := New("portfolio", Env{Catalog: cat, Seed: 1, Kinds: tt.kinds})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		p, ok := pol.(*portfolio)
		if lp, isLP := pol.(learningPortfolio); isLP {
			p, ok = lp.portfolio, true
		}
		if !ok {
			t.Fatalf("kinds %v: %T is no portfolio", tt.kinds, pol)
		}
		for _, a := range p.arms {
			names = append(names, a.name)
		}
		if got := slices.Contains(names, "cofi"); got != tt.cofi {
			t.Errorf("kinds %v: arms %v, cofi among them %v, want %v", tt.kinds, names, got, tt.cofi)
		}
		if _, learns := pol.(Learner); learns != tt.cofi {
			t.Errorf("kinds %v: a Learner %v, want %v (only cofi learns)", tt.kinds, learns, tt.cofi)
		}
	}
}
