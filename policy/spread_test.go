package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// skewedCatalog has a hot site (index 0, a codec's write) and ten cold
// ones (1–10), each a disk call that can take an error, a delay or a
// crash.
func skewedCatalog() *catalog.Catalog {
	c := &catalog.Catalog{}
	for i := range 11 {
		id := fmt.Sprintf("cold%d#Write.0", i)
		if i == 0 {
			id = "codec.encode#Write.0"
		}
		c.Sites = append(c.Sites, catalog.Site{Index: uint32(i), ID: id, IO: "disk",
			Kind: catalog.KindError | catalog.KindDelay | catalog.KindCrash, Errors: []catalog.ErrorValue{{Name: "EIO"}}})
	}
	c.Hash = c.ComputeHash()
	return c
}

// burst is a site's requests in a trial: count of them, evenly spread
// between the fractions from and to of the trial.
type burst struct {
	site     int
	count    int
	from, to float64
}

// coldBursts are the cold sites' requests of a skewed trial: 1 to 50 a
// trial, some at the start (an open), some at the end (a
// defragmentation), the others in between.
var coldBursts = []burst{
	{1, 1, 0, 0.01}, {2, 2, 0.95, 1}, {3, 3, 0.1, 0.2}, {4, 5, 0.2, 0.4}, {5, 8, 0, 1},
	{6, 12, 0.5, 0.6}, {7, 20, 0.3, 0.9}, {8, 30, 0, 0.5}, {9, 40, 0.6, 1}, {10, 50, 0, 1},
}

// skewedTrial is a trial of hot requests at site 0 with the bursts of
// the cold sites merged in by position, alternating over three nodes.
func skewedTrial(cat *catalog.Catalog, hot int, bursts []burst) stream {
	type at struct {
		pos  float64
		site int
	}
	var all []at
	for i := range hot {
		all = append(all, at{float64(i) / float64(hot), 0})
	}
	for _, b := range bursts {
		for i := range b.count {
			all = append(all, at{b.from + (float64(i)+0.5)*(b.to-b.from)/float64(b.count), b.site})
		}
	}
	slices.SortStableFunc(all, func(a, b at) int {
		switch {
		case a.pos < b.pos:
			return -1
		case a.pos > b.pos:
			return 1
		}
		return 0
	})
	s := make(stream, len(all))
	for i, a := range all {
		s[i] = Request{Node: fmt.Sprintf("n%d", i%3+1), Site: &cat.Sites[a.site]}
	}
	return s
}

// strike is one trial's first grant: where (the site and the request's
// stack), at which occurrence of its site, and which fault.
type strike struct {
	site, occurrence int
	fault            Fault
	stack            []record.Frame
}

// runTrials runs trials first..first+n-1 of stream(trial) through p and
// returns each trial's first grant (nil: none). A trial's requests all go
// to p: spread and random keep counting after their grant.
func runTrials(p Policy, first, n int, stream func(trial int) stream) []*strike {
	var out []*strike
	for trial := first; trial < first+n; trial++ {
		p.Begin(TrialInfo{Index: trial, Nodes: []string{"n1", "n2", "n3"}})
		var got *strike
		var inj []record.Injection
		occ := map[int]int{}
		reqs := stream(trial)
		for i := range reqs {
			r := reqs[i]
			r.Trial, r.Seq = trial, i
			occ[int(r.Site.Index)]++
			r.Occurrence = occ[int(r.Site.Index)]
			if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
				inj = append(inj, record.Injection{Node: r.Node, SiteID: r.Site.ID, Kind: d.Fault.Kind})
				if got == nil {
					got = &strike{site: int(r.Site.Index), occurrence: occ[int(r.Site.Index)], fault: d.Fault, stack: r.Stack}
				}
			}
		}
		p.End(Outcome{Index: trial, Requests: len(reqs), Injections: inj})
		out = append(out, got)
	}
	return out
}

// perSite counts the strikes by site and the trials that struck.
func perSite(strikes []*strike) (map[int]int, int) {
	by := map[int]int{}
	n := 0
	for _, s := range strikes {
		if s != nil {
			by[s.site]++
			n++
		}
	}
	return by, n
}

func TestSpreadOverSites(t *testing.T) {
	cat := skewedCatalog()
	trial := skewedTrial(cat, 10_000, coldBursts)
	same := func(int) stream { return trial }
	const trials = 300
	tests := []struct {
		policy string
		// the hot site's share of the strikes: at most, at least
		hotMax, hotMin float64
		spread         bool // every site's share within tolerance of uniform
	}{
		// 11 sites: uniform is 1/11 of the strikes each.
		{"spread", 0.15, 0, true},
		// random follows the requests: 10,000 of 10,171 are the hot site's.
		{"random", 1, 0.9, false},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			strikes := runTrials(mustNew(t, tt.policy, Env{Catalog: cat, Seed: 5}), 0, trials, same)
			by, n := perSite(strikes)
			t.Logf("%s: %d of %d trials struck; by site %v", tt.policy, n, trials, by)
			if n < trials*98/100 {
				t.Errorf("%d of %d trials struck; want ≥ 98 %%", n, trials)
			}
			if hot := float64(by[0]) / float64(n); hot > tt.hotMax || hot < tt.hotMin {
				t.Errorf("the hot site took %.0f %% of the strikes; want %.0f–%.0f %%", 100*hot, 100*tt.hotMin, 100*tt.hotMax)
			}
			if !tt.spread {
				return
			}
			// Tolerance: each site within ±20 % of the uniform share (27
			// of 300). The sites take turns as targets, so only the first
			// trial (random's) and the fallbacks stray from it; a uniform
			// draw with replacement would have a binomial sd of 5 (18 %).
			// Measured over seeds 1–30: no miss (and no seed below 98 %
			// injected, nor without a strike in each quarter below).
			uniform := float64(n) / float64(len(cat.Sites))
			for site := range cat.Sites {
				if c := float64(by[site]); c < uniform*0.8 || c > uniform*1.2 {
					t.Errorf("site %d struck %v times; want %.0f–%.0f (uniform %.1f)", site, c, uniform*0.8, uniform*1.2, uniform)
				}
			}
			// Within the hot site, the strikes spread over its requests:
			// some in each quarter of them.
			var quarters [4]int
			for _, s := range strikes {
				if s != nil && s.site == 0 {
					quarters[min(3, (s.occurrence-1)*4/10_000)]++
				}
			}
			if slices.Contains(quarters[:], 0) {
				t.Errorf("the hot site's strikes by quarter of its requests: %v; want some in each", quarters)
			}
		})
	}
}

// variedTrial is trial i of a campaign whose trials differ: the hot site
// makes 5,000 to 15,000 requests, site 9 10 to 50, and site 10 comes only
// in one trial of four.
func variedTrial(cat *catalog.Catalog) func(int) stream {
	return func(i int) stream {
		bs := slices.Clone(coldBursts)
		bs[8].count = 10 + 20*(i%3)
		if i%4 != 0 {
			bs = bs[:9]
		}
		return skewedTrial(cat, 5_000+2_500*(i%5), bs)
	}
}

func TestSpreadFallback(t *testing.T) {
	cat := skewedCatalog()
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 9})
	sp := p.(*spread)
	const trials = 300
	gen := variedTrial(cat)
	injected, aimed, rescued := 0, 0, 0
	for i := range trials {
		// Run one trial at a time to see its target.
		sp.Begin(TrialInfo{Index: i})
		tg := sp.trials.of(i).targets
		missing := len(tg) > 0 && tg[0].site == 10 && i%4 != 0
		sp.trials.end(i)
		strikes := runTrials(p, i, 1, gen)
		if strikes[0] != nil {
			injected++
		}
		if missing {
			aimed++
			if strikes[0] != nil {
				rescued++
			}
		}
	}
	t.Logf("%d of %d trials struck; %d aimed at site 10 in a trial without it, %d of them struck by the fallback", injected, trials, aimed, rescued)
	// Measured over seeds 1–20: 300 of 300 trials struck in every one.
	if injected < trials*98/100 {
		t.Errorf("%d of %d trials struck; want ≥ 98 %%", injected, trials)
	}
	if aimed < 5 || rescued < aimed*9/10 {
		t.Errorf("of %d trials aimed at a site they did not reach, %d struck; want ≥ 90 %%", aimed, rescued)
	}
}

func TestSpreadFallbackExplains(t *testing.T) {
	cat := skewedCatalog()
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 2})
	sp := p.(*spread)
	runTrials(p, 0, 8, variedTrial(cat)) // history: site 10 in trials 0 and 4
	sp.Begin(TrialInfo{Index: 9})
	tr := sp.trials.of(9)
	h := sp.mem.Sites[10]
	tr.targets[0] = spreadTarget{site: 10, rank: 11, k: 1, expected: h.expected(), missAt: h.firstAt(), shortAt: h.lastAt()}
	tr.why = "spread: site 11 of 11 reached"
	var why string
	granted := false
	for i, r := range variedTrial(cat)(9) { // no site 10
		r.Trial, r.Seq = 9, i
		if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
			granted = true
			why = p.(Explainer).Explain(9).Why
		}
	}
	if !granted || !strings.Contains(why, "not reached (0 of its requests by request") || !strings.Contains(why, ": fallback at ") {
		t.Errorf("granted %v, why %q; want a fallback grant", granted, why)
	}
}

func TestSpreadKinds(t *testing.T) {
	// A site that offers one error and a pause and a stop of three
	// lengths each: seven faults, three kinds.
	cat := &catalog.Catalog{Sites: []catalog.Site{{Index: 0, ID: "wal.sync#Sync.0", IO: "disk",
		Kind: catalog.KindError | catalog.KindCrash, Errors: []catalog.ErrorValue{{Name: "EIO"}}}}}
	env := Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindError, catalog.KindPause, catalog.KindStop},
		Timers: map[string]time.Duration{"election": time.Second}}
	trial := make(stream, 100)
	for i := range trial {
		trial[i] = Request{Node: "n1", Site: &cat.Sites[0]}
	}
	const trials = 300
	for _, tt := range []struct {
		policy         string
		errMin, errMax float64 // the errors' share of the strikes
	}{
		// Measured over seeds 1–100: spread within its bounds in all.
		{"spread", 0.25, 0.42}, // a kind of three: 1/3
		{"random", 0.08, 0.2},  // a fault of seven: 1/7
	} {
		t.Run(tt.policy, func(t *testing.T) {
			env.Seed = 4
			strikes := runTrials(mustNew(t, tt.policy, env), 0, trials, func(int) stream { return trial })
			by := map[catalog.Kind]int{}
			n := 0
			for _, s := range strikes {
				if s != nil {
					by[s.fault.Kind]++
					n++
				}
			}
			t.Logf("%s: %d strikes: error %d, pause %d, stop %d", tt.policy, n, by[catalog.KindError], by[catalog.KindPause], by[catalog.KindStop])
			if e := float64(by[catalog.KindError]) / float64(n); e < tt.errMin || e > tt.errMax {
				t.Errorf("errors took %.0f %% of the strikes; want %.0f–%.0f %%", 100*e, 100*tt.errMin, 100*tt.errMax)
			}
		})
	}
}

func TestSpreadDeterministic(t *testing.T) {
	cat := testCatalog()
	a := replay(mustNew(t, "spread", Env{Catalog: cat, Seed: 7}), cat, 30, 60)
	b := replay(mustNew(t, "spread", Env{Catalog: cat, Seed: 7}), cat, 30, 60)
	c := replay(mustNew(t, "spread", Env{Catalog: cat, Seed: 8}), cat, 30, 60)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different decisions:\n%v\n%v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Fatalf("seeds 7 and 8 made the same decisions: %v", a)
	}
}

func TestSpreadSnapshotRestore(t *testing.T) {
	cat := skewedCatalog()
	gen := variedTrial(cat)
	env := Env{Catalog: cat, Seed: 3}
	a := mustNew(t, "spread", env)
	runTrials(a, 0, 12, gen)
	data, err := a.(Stateful).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	b := mustNew(t, "spread", env)
	if err := b.(Stateful).Restore(data); err != nil {
		t.Fatal(err)
	}
	if again, _ := b.(Stateful).Snapshot(); string(again) != string(data) {
		t.Fatalf("restored snapshot differs:\n%s\n%s", data, again)
	}
	sa, sb := runTrials(a, 12, 10, gen), runTrials(b, 12, 10, gen)
	if !reflect.DeepEqual(sa, sb) {
		t.Errorf("the restored policy decides otherwise:\n%v\n%v", sa, sb)
	}
	if err := b.(Stateful).Restore([]byte("{")); err == nil || !strings.Contains(err.Error(), "restore spread policy") {
		t.Errorf("Restore of bad data: %v", err)
	}
}

func TestSpreadWithMemory(t *testing.T) {
	cat := testCatalog()
	wal := &cat.Sites[0]
	// Every fault spread offers at the hot site, tried quietly 30 times.
	mem := NewMemory(cat, []int64{1}, quietPast(wal.ID, 30))
	const trials = 300
	for _, tt := range []struct {
		name             string
		mem              *Memory
		coldMin, coldMax float64 // the cold site's share of the strikes
	}{
		// Two sites reached: half each, whatever their requests (95 and
		// 5). Measured over seeds 1–100: within bounds in all.
		{"without memory", nil, 0.35, 0.65},
		// The hot site weighs 1/31: 31/32 ≈ 97 % at the cold site.
		{"with memory", mem, 0.85, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, "spread", Env{Catalog: cat, Seed: 11, Memory: tt.mem})
			injected, cold := grantsAt(t, p, cat, trials)
			t.Logf("%d of %d trials struck, %d at the cold site", injected, trials, cold)
			if c := float64(cold) / float64(injected); c < tt.coldMin || c > tt.coldMax {
				t.Errorf("%.0f %% of the strikes at the cold site; want %.0f–%.0f %%", 100*c, 100*tt.coldMin, 100*tt.coldMax)
			}
			if injected < trials*98/100 {
				t.Errorf("%d of %d trials struck; want ≥ 98 %%", injected, trials)
			}
		})
	}
}

func TestSpreadExplain(t *testing.T) {
	cat := testCatalog()
	mem := NewMemory(cat, []int64{4}, []Past{past("4-1", cat.Sites[0].ID, catalog.KindCrash, "", 0, "", record.StatusOK)})
	for _, tt := range []struct {
		name  string
		mem   *Memory
		trial int
		want  []string
	}{
		{"the first trial", nil, 0, []string{"spread: no site reached by an earlier trial to aim at; grants as random does (p ", "; granted at ", "; kind "}},
		{"a target", nil, 5, []string{"spread: site ", " of 2 reached (", " requests a trial), occurrence ", " offered"}},
		{"with memory", mem, 5, []string{" of 2 reached (", "; with the memory of 1 fault trials of campaign 4 (1 faults): "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, "spread", Env{Catalog: cat, Seed: 1, Memory: tt.mem})
			var why string
			for trial := range tt.trial + 1 {
				p.Begin(TrialInfo{Index: trial, Nodes: []string{"n1"}})
				for i, r := range memoryStream(cat) {
					r.Trial, r.Seq = trial, i
					p.Decide(&r)
				}
				why = p.(Explainer).Explain(trial).Why
				p.End(Outcome{Index: trial, Requests: 100})
			}
			for _, w := range tt.want {
				if !strings.Contains(why, w) {
					t.Errorf("Explain = %q; want %q in it", why, w)
				}
			}
		})
	}
}

func TestSpreadNewSite(t *testing.T) {
	// Trials reach the WAL only; then the reads come too, a site no
	// earlier trial reached: with a target's chance (1 in 2) it is struck
	// at its first request.
	cat := testCatalog()
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 6})
	walOnly := func(int) stream {
		s := make(stream, 50)
		for i := range s {
			s[i] = Request{Node: "n1", Site: &cat.Sites[0]}
		}
		return s
	}
	runTrials(p, 0, 5, walOnly)
	struck := 0
	const trials = 200
	for trial := 5; trial < 5+trials; trial++ {
		// A fresh history each time: the read is new in every one.
		q := mustNew(t, "spread", Env{Catalog: cat, Seed: int64(trial)})
		runTrials(q, 0, 3, walOnly)
		got := runTrials(q, 3, 1, func(int) stream {
			s := append(stream{{Node: "n1", Site: &cat.Sites[2]}}, walOnly(0)...)
			return s
		})
		if got[0] != nil && got[0].site == 2 && got[0].occurrence == 1 {
			struck++
		}
	}
	if struck < trials/3 || struck > trials*2/3 {
		t.Errorf("the new site struck at its first request in %d of %d trials; want about half", struck, trials)
	}
}

func TestSpreadReach(t *testing.T) {
	// A trial whose reach is known (a gofault test's test) aims only at
	// the sites of its reach.
	cat := skewedCatalog()
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 1})
	trial := skewedTrial(cat, 1_000, coldBursts)
	runTrials(p, 0, 6, func(int) stream { return trial })
	sp := p.(*spread)
	for i := 6; i < 40; i++ {
		sp.Begin(TrialInfo{Index: i, Reach: []uint32{4, 7}})
		if tg := sp.trials.of(i).targets; len(tg) != 1 || tg[0].site != 4 && tg[0].site != 7 {
			t.Fatalf("trial %d aims at %+v; want site 4 or 7", i, tg)
		}
		sp.End(Outcome{Index: i})
	}
}

func TestSpreadSkipsSitesOnlyFaultsReach(t *testing.T) {
	// The WAL's writes come in every trial; the step check (site 1) only
	// after a crash, in the restarted node's recovery, in half the crash
	// trials: the trial's one fault is spent before it comes, so it is
	// no target.
	cat := testCatalog()
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 4, TargetErrors: true, Kinds: []catalog.Kind{catalog.KindError, catalog.KindCrash}})
	sp := p.(*spread)
	recovered := 0
	for trial := range 40 {
		p.Begin(TrialInfo{Index: trial, Nodes: []string{"n1"}})
		if tg := sp.trials.of(trial).targets; len(tg) > 0 && tg[0].site == 1 {
			t.Fatalf("trial %d aims at the recovery site: %+v", trial, tg[0])
		}
		crashed := false
		for i := range 50 {
			r := Request{Trial: trial, Seq: i, Node: "n1", Site: &cat.Sites[0]}
			if d := p.Decide(&r); d.Fault.Kind == catalog.KindCrash {
				crashed = true
			}
		}
		if crashed && trial%2 == 0 {
			recovered++
			for i := range 3 {
				r := Request{Trial: trial, Seq: 50 + i, Node: "n1", Site: &cat.Sites[1]}
				p.Decide(&r)
			}
		}
		p.End(Outcome{Index: trial, Requests: 50})
	}
	if h := sp.mem.Sites[1]; recovered == 0 || h == nil || h.Trials != recovered || h.Free != 0 {
		t.Errorf("%d trials recovered; the recovery site's history %+v", recovered, h)
	}
}

func TestSpreadRestoresSparseState(t *testing.T) {
	// A snapshot with a site of no counts, a null site, a null path and
	// no trials (hand-edited, or from a later version) neither panics nor
	// aims at the null site.
	cat := testCatalog()
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 1})
	if err := p.(Stateful).Restore([]byte(`{"trials":5,"sites":{"0":{"trials":5,"free":5,"paths":{"7":null}},"2":null}}`)); err != nil {
		t.Fatal(err)
	}
	strikes := runTrials(p, 0, 3, func(int) stream { return memoryStream(cat) })
	for i, s := range strikes {
		if s == nil {
			t.Errorf("trial %d struck nothing", i)
		}
	}
}

func TestSpreadTwoPerTrial(t *testing.T) {
	cat := skewedCatalog()
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 3, PerTrial: 2})
	trial := skewedTrial(cat, 1_000, coldBursts)
	const trials = 60
	two := 0
	for i := range trials {
		p.Begin(TrialInfo{Index: i})
		grants := 0
		for j, r := range trial {
			r.Trial, r.Seq = i, j
			if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
				grants++
			}
		}
		why := p.(Explainer).Explain(i).Why
		if grants == 2 {
			two++
			if i > 0 && (strings.Count(why, "; then ") != 1 || strings.Count(why, "spread: ") != 1) {
				t.Errorf("trial %d: Explain = %q; want one account, its second grant after \"then\"", i, why)
			}
		}
		p.End(Outcome{Index: i, Requests: len(trial)})
	}
	if two < trials*9/10 {
		t.Errorf("%d of %d trials struck twice; want ≥ 90 %%", two, trials)
	}
}
