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

// TestPortfolioReasons: the choice rule and its reason: the base leads
// (until a challenger's mean over leadAfter trials beats it) and takes
// the trial unless the challengers are owed one in challengeEvery; then
// an untried challenger, else the best UCB1 score among them; an
// exhausted arm is passed over, a benched one too. The reason names the
// evidence (the leader's mean and trials, the challengers' share, the
// UCB score), the arm's last trial that revealed something and what.
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
			name:    "the base leads from the first trial",
			arms:    []arm{{}, {}, {}},
			wantArm: "a", want: []string{"leads as the base technique", "no trial ended yet (0 running)", "the others had 0 of 0 trials begun (1 in 4 goes to them)"},
			notWant: []string{"not tried yet", "UCB"},
		},
		{
			name:    "the base leads while the challengers had their share",
			arms:    []arm{{trials: 5, reward: 0.5, injects: 5}, {trials: 1, reward: 0.9, injects: 1}, {trials: 1, reward: 0.1, injects: 1}},
			wantArm: "a", want: []string{"mean reward 0.10 over 5 trials (0 failed, 5 injected)", "the others had 2 of 7 trials begun", "none of its trials revealed more than its fault yet"},
		},
		{
			name:    "a challenger's turn: the untried one first",
			arms:    []arm{{trials: 6, reward: 0.6, injects: 6}, {trials: 1, reward: 0.9, injects: 1}, {}},
			wantArm: "c", want: []string{"a challenger's turn (1 in 4; the others had 1 of 7 trials begun), a leads", "not tried yet"},
		},
		{
			name:    "a challenger's turn: the best UCB",
			arms:    []arm{{trials: 9, reward: 0.9, injects: 9}, {trials: 1, reward: 0.1, injects: 1}, {trials: 1, reward: 0.5, injects: 1, last: &revealed{Trial: 4, Reward: 0.5, What: "20 new blocks"}}},
			wantArm: "c", want: []string{"a challenger's turn", "UCB 2.69: mean reward 0.50 over 1 trial (0 failed, 1 injected) + 2.19 to explore, of 11 trials begun", "its trial 4 revealed 20 new blocks (reward 0.50)"},
		},
		{
			name:    "one trial of a challenger does not lead",
			arms:    []arm{{trials: 8, reward: 0.8, injects: 8}, {trials: 1, reward: 1, failed: 1, injects: 1}, {trials: 1, reward: 0.1, injects: 1}},
			wantArm: "a", want: []string{"leads as the base technique"},
		},
		{
			name:    "a challenger whose mean beats the base leads",
			arms:    []arm{{trials: 8, reward: 0.8, injects: 8}, {trials: 2, reward: 1.2, failed: 1, injects: 2, last: &revealed{Trial: 6, Reward: 1, What: "a failure by linearizability"}}, {trials: 1, reward: 0.1, injects: 1}},
			wantArm: "b", want: []string{"leads: mean reward 0.60 over 2 trials (1 failed, 2 injected), above a's 0.10 over 8 trials", "the others had 9 of 11 trials begun", "its trial 6 revealed a failure by linearizability (reward 1.00)"},
		},
		{
			name:    "the base, once outdone, is a challenger",
			arms:    []arm{{trials: 1, reward: 0.1, injects: 1}, {trials: 10, reward: 5, injects: 10}, {trials: 1, reward: 0.1, injects: 1}},
			wantArm: "a", want: []string{"a challenger's turn", "b leads", "UCB"},
		},
		{
			name:      "an exhausted base is passed over",
			arms:      []arm{{trials: 1, reward: 1}, {trials: 1, reward: 0.3, injects: 1, last: &revealed{Trial: 4, Reward: 0.3, What: "10 new blocks"}}, {}},
			exhausted: []bool{true, false, false},
			wantArm:   "b", want: []string{"leads as the base technique", "its trial 4 revealed 10 new blocks (reward 0.30)"},
		},
		{
			name:    "a base that injected nothing is benched while a challenger is untried",
			arms:    []arm{{trials: 2}, {}, {}},
			wantArm: "b", want: []string{"leads as the base technique"},
		},
		{
			name:    "an arm that injected nothing is not benched before noInjectAfter trials",
			arms:    []arm{{trials: 1}, {}, {}},
			wantArm: "a",
		},
		{
			name:    "nor where no other arm injects",
			arms:    []arm{{trials: 4}, {trials: 2}, {trials: 2}},
			wantArm: "a",
		},
		{
			name:      "every arm exhausted",
			arms:      []arm{{trials: 5, reward: 5}, {trials: 5}, {}},
			exhausted: []bool{true, true, true},
			wantArm:   "a", want: []string{"every technique has run out of new faults"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stubs := map[string]Policy{}
			for i, name := range []string{"a", "b", "c"} {
				stubs[name] = &armStub{}
				if i < len(tc.exhausted) && tc.exhausted[i] {
					stubs[name] = &exhaustedStub{}
				}
			}
			p := stubArms(t, stubs, "a", "b", "c")
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
	for i := range 4 { // t-a leads; the fourth is t-b's turn
		p.Begin(TrialInfo{Index: i})
	}
	if c := p.Explain(3); c.Technique != "t-b" || !strings.Contains(c.Why, "not tried yet") {
		t.Errorf("trial 3: %+v, want t-b's first turn", c)
	}
	p.End(Outcome{Index: 2})
	if d := p.Decide(&Request{Trial: 3}); d.Fault.Kind != catalog.KindNone {
		t.Errorf("trial 3's request: %+v, want t-b's none", d)
	}
	p.End(Outcome{Index: 1})
	if d := p.Decide(&Request{Trial: 0}); d.Fault.Kind != catalog.KindCrash {
		t.Errorf("trial 0's request after trial 1 ended: %+v, want t-a's crash", d)
	}
	if d := p.Decide(&Request{Trial: 1}); !d.Done || d.Fault.Kind != catalog.KindNone {
		t.Errorf("request of ended trial 1: %+v, want none, done", d)
	}
	p.End(Outcome{Index: 3})
	p.End(Outcome{Index: 0, Injections: []record.Injection{{Kind: catalog.KindCrash}}, Failed: true})
	if p.arms[0].trials != 3 || p.arms[0].failed != 1 || p.arms[1].trials != 1 || p.arms[1].injects != 0 {
		t.Errorf("arms after: t-a %+v, t-b %+v; want each its own trials", *p.arms[0], *p.arms[1])
	}
}

// TestPortfolioParallelSpread: trials begun before any of them ends
// count as pulls: the challengers get their one in challengeEvery of the
// trials begun, not of those ended, and their turns spread over them
// (plain UCB1 would give all of them the same arm).
func TestPortfolioParallelSpread(t *testing.T) {
	a, b, c := &armStub{inject: true}, &armStub{inject: true}, &armStub{inject: true}
	p := stubArms(t, map[string]Policy{"t-a": a, "t-b": b, "t-c": c}, "t-a", "t-b", "t-c")
	begin := func(from, to int) string {
		var got []string
		for i := from; i < to; i++ {
			p.Begin(TrialInfo{Index: i})
			got = append(got, p.Explain(i).Technique)
		}
		return strings.Join(got, ",")
	}
	if got := begin(0, 8); got != "t-a,t-a,t-a,t-b,t-a,t-a,t-a,t-c" {
		t.Errorf("eight trials begun at once went to %s", got)
	}
	for i := range 8 {
		p.End(Outcome{Index: i, Injections: []record.Injection{{Kind: catalog.KindCrash}}})
	}
	if got := begin(8, 16); got != "t-a,t-a,t-a,t-b,t-a,t-a,t-a,t-c" {
		t.Errorf("eight more begun at once went to %s: the running t-b trial must count as a pull", got)
	}
	if why := p.Explain(15).Why; !strings.Contains(why, "mean reward 0.10 over 1 trial (0 failed, 1 injected) + 2.33 to explore, of 15 trials begun") {
		t.Errorf("reason %q does not count the running trials", why)
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

// TestPortfolioArmGates: an arm with no fault of the allowed kinds here
// is no arm of the portfolio, from the first trial (armGates): cofi only
// where faults.kinds allows partitions (or lists nothing), sieve only
// where a site can be delayed, random, fuzz and bsrr only where some site
// takes an allowed fault; the reasons name what was left out and why.
// Under [pause] and [rot] the first bench of the portfolio gave trials to
// arms that injected nothing (88 % and 90 % injected). Where no arm has a
// fault, random alone runs the trials, as it would standing alone.
func TestPortfolioArmGates(t *testing.T) {
	net := catalog.Site{Index: 0, ID: "rafthttp:conn.Write#0", Kind: catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindPartition, IO: "net", Peer: "to", Errors: []catalog.ErrorValue{{Name: "EIO"}}}
	write := catalog.Site{Index: 1, ID: "wal:(*os.File).Write#0", Kind: catalog.KindError | catalog.KindCrash | catalog.KindTorn, IO: "disk", Errors: []catalog.ErrorValue{{Name: "EIO"}}}
	k := func(ks ...catalog.Kind) []catalog.Kind { return ks }
	tests := []struct {
		name  string
		sites []catalog.Site
		kinds []catalog.Kind
		arms  string
		gated []string
	}{
		{"every kind", []catalog.Site{net}, nil, "random,fuzz,sieve,bsrr,cofi", nil},
		{"partitions", []catalog.Site{net}, k(catalog.KindPartition), "random,fuzz,bsrr,cofi", []string{"sieve (no delay site of the allowed kinds)"}},
		{"error and partition", []catalog.Site{net}, k(catalog.KindError, catalog.KindPartition), "random,fuzz,bsrr,cofi", []string{"sieve ("}},
		{"pause", []catalog.Site{net}, k(catalog.KindPause), "random,fuzz,bsrr", []string{"sieve (no delay site", "cofi (faults.kinds does not list partition)"}},
		{"the profiles' kinds", []catalog.Site{net}, k(catalog.KindError, catalog.KindDelay, catalog.KindCrash, catalog.KindCrashAfter), "random,fuzz,sieve,bsrr", []string{"cofi ("}},
		{"rot at a file write", []catalog.Site{net, write}, k(catalog.KindRot), "random,fuzz,bsrr", []string{"sieve (", "cofi ("}},
		{"rot with no file write: random alone", []catalog.Site{net}, k(catalog.KindRot), "random", []string{"fuzz (no site takes a fault of the allowed kinds)", "bsrr (no site", "sieve (", "cofi ("}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := cofiCatalog()
			cat.Sites = tt.sites
			pol, err := New("portfolio", Env{Catalog: cat, Seed: 1, Kinds: tt.kinds})
			if err != nil {
				t.Fatal(err)
			}
			p, ok := pol.(*portfolio)
			if lp, isLP := pol.(learningPortfolio); isLP {
				p, ok = lp.portfolio, true
			}
			if !ok {
				t.Fatalf("%T is no portfolio", pol)
			}
			var names []string
			for _, a := range p.arms {
				names = append(names, a.name)
			}
			if got := strings.Join(names, ","); got != tt.arms {
				t.Errorf("arms %s, want %s (left out: %v)", got, tt.arms, p.gated)
			}
			cofi := strings.Contains(tt.arms, "cofi")
			if _, learns := pol.(Learner); learns != cofi {
				t.Errorf("a Learner %v, want %v (only cofi learns)", learns, cofi)
			}
			p.Begin(TrialInfo{Index: 0})
			why := p.Explain(0).Why
			for _, g := range tt.gated {
				if !strings.Contains(why, g) {
					t.Errorf("reason %q does not name %q as not run here", why, g)
				}
			}
			if len(tt.gated) == 0 && strings.Contains(why, "not run here") {
				t.Errorf("reason %q names arms not run, none was left out", why)
			}
		})
	}
}

// TestPortfolioSmallBudget: with ten trials and no challenger earning
// more, the base (random, the broad explorer) has eight of them, the
// challengers the 4th and 8th, in order; one at a time or two at once
// (trials.parallel) alike.
func TestPortfolioSmallBudget(t *testing.T) {
	for _, parallel := range []int{1, 2} {
		t.Run(fmt.Sprintf("parallel %d", parallel), func(t *testing.T) {
			stubs := map[string]Policy{"t-random": &armStub{inject: true}, "t-fuzz": &armStub{inject: true}, "t-sieve": &armStub{inject: true}, "t-bsrr": &armStub{inject: true}}
			p := stubArms(t, stubs, "t-random", "t-fuzz", "t-sieve", "t-bsrr")
			var got []string
			for i := 0; i < 10; i += parallel {
				for j := i; j < i+parallel; j++ {
					p.Begin(TrialInfo{Index: j})
					got = append(got, p.Explain(j).Technique)
				}
				for j := i; j < i+parallel; j++ {
					p.End(Outcome{Index: j, Injections: []record.Injection{{Kind: catalog.KindCrash}}, NewBlocks: 20})
				}
			}
			want := "t-random,t-random,t-random,t-fuzz,t-random,t-random,t-random,t-sieve,t-random,t-random"
			if s := strings.Join(got, ","); s != want {
				t.Errorf("ten trials went to %s\nwant            %s", s, want)
			}
		})
	}
}
