package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// commitStack is the stack of a request at the hot site of skewedCatalog
// as the agent sends it, from the instrumentation's literal down: the
// backend's bbolt commit (etcd's batchTx.commit), reached by the
// backend's periodic commit (run) or, compacting, by ForceCommit.
func commitStack(compaction bool) []record.Frame {
	s := []record.Frame{
		{Func: "go.etcd.io/etcd/server/v3/storage/backend.(*batchTx).commit.func1", File: "batch_tx.go", Line: 271},
		{Func: "go.etcd.io/etcd/server/v3/storage/backend.(*batchTx).commit", File: "batch_tx.go", Line: 271},
		{Func: "go.etcd.io/etcd/server/v3/storage/backend.(*batchTxBuffered).unsafeCommit", File: "batch_tx.go", Line: 363},
		{Func: "go.etcd.io/etcd/server/v3/storage/backend.(*batchTxBuffered).commit", File: "batch_tx.go", Line: 356},
		{Func: "go.etcd.io/etcd/server/v3/storage/backend.(*batchTxBuffered).Commit", File: "batch_tx.go", Line: 343},
	}
	if !compaction {
		return append(s, record.Frame{Func: "go.etcd.io/etcd/server/v3/storage/backend.(*backend).run", File: "backend.go", Line: 428})
	}
	return append(s,
		record.Frame{Func: "go.etcd.io/etcd/server/v3/storage/backend.(*backend).ForceCommit", File: "backend.go", Line: 330},
		record.Frame{Func: "go.etcd.io/etcd/server/v3/storage/mvcc.(*store).scheduleCompaction", File: "kvstore_compaction.go", Line: 85},
		record.Frame{Func: "go.etcd.io/etcd/server/v3/storage/mvcc.(*store).compact.func1", File: "kvstore.go", Line: 291},
		record.Frame{Func: "go.etcd.io/etcd/pkg/v3/schedule.(*fifo).run", File: "schedule.go", Line: 157},
	)
}

// compacting reports whether a strike's stack came by ForceCommit.
func compacting(s *strike) bool {
	return s != nil && slices.ContainsFunc(s.stack, func(f record.Frame) bool { return strings.HasSuffix(f.Func, ".ForceCommit") })
}

// pathTrial is a skewed trial (skewedTrial) whose requests have stacks:
// the hot site's by the periodic commit but for compactions of them (2,
// at a third and two thirds of the trial, where compact), the cold sites'
// each by one path of its own.
func pathTrial(cat *catalog.Catalog, hot, compactions int) stream {
	s := skewedTrial(cat, hot, coldBursts)
	var at []int
	for i := range compactions {
		at = append(at, hot*(i+1)/(compactions+1))
	}
	periodic, compaction := commitStack(false), commitStack(true)
	n := 0
	for i := range s {
		if s[i].Site.Index != 0 {
			s[i].Stack = []record.Frame{{Func: "cold.write", File: "cold.go", Line: 10}, {Func: "cold.caller" + fmt.Sprint(s[i].Site.Index), File: "cold.go", Line: 20}}
			continue
		}
		n++
		s[i].Stack = periodic
		if slices.Contains(at, n) {
			s[i].Stack = compaction
		}
	}
	return s
}

func TestSpreadOverPaths(t *testing.T) {
	// The hot site, the backend's commit, is asked 10,000 times a trial
	// by the periodic commit and twice by a compaction: spread's turns of
	// the site alternate between the two paths; random strikes one of
	// the compaction's commits with a chance of 2 in 10,172 a trial.
	cat := skewedCatalog()
	every := pathTrial(cat, 10_000, 2)
	// Shorter trials where it does not matter, to keep the test short.
	short, shortNone := pathTrial(cat, 2_000, 2), pathTrial(cat, 2_000, 0)
	const trials = 300
	for _, tt := range []struct {
		name, policy string
		stream       func(int) stream
		// the compaction's share of the hot site's strikes: at least, at
		// most
		min, max float64
	}{
		// The hot site's 28–30 strikes of 300 (1/11 of them) alternate
		// between the paths. Measured over seeds 1–30: 13 or 14 in a
		// compaction (43–50 %), every trial struck.
		{"spread", "spread", func(int) stream { return every }, 0.35, 0.65},
		// A compaction in one trial of two (the odd ones): the turns of
		// its path in the other trials are not lost, the fallback strikes
		// there (every site, the hot one 19–26 times). Measured over seeds
		// 1–30: 4–10 in a compaction (20–38 %), 299 or 300 trials struck.
		{"spread, compaction in one trial of two", "spread", func(i int) stream {
			if i%2 == 1 {
				return short
			}
			return shortNone
		}, 0.1, 0.65},
		// Measured over seeds 1–30: 0 in a compaction (1 in one seed) of
		// the hot site's 286–297 strikes.
		{"random", "random", func(int) stream { return every }, 0, 0.01},
	} {
		t.Run(tt.name, func(t *testing.T) {
			strikes := runTrials(mustNew(t, tt.policy, Env{Catalog: cat, Seed: 5}), 0, trials, tt.stream)
			by, n := perSite(strikes)
			compactions := 0
			for _, s := range strikes {
				if compacting(s) {
					compactions++
				}
			}
			t.Logf("%s: %d of %d trials struck; by site %v; %d in a compaction", tt.name, n, trials, by, compactions)
			if n < trials*98/100 {
				t.Errorf("%d of %d trials struck; want ≥ 98 %%", n, trials)
			}
			if share := float64(compactions) / float64(max(1, by[0])); share < tt.min || share > tt.max {
				t.Errorf("%d of the hot site's %d strikes in a compaction (%.0f %%); want %.0f–%.0f %%", compactions, by[0], 100*share, 100*tt.min, 100*tt.max)
			}
		})
	}
}

func TestSpreadExplainsPath(t *testing.T) {
	// A trial aimed at the compaction's commit names the path by where it
	// parts from the periodic one.
	cat := skewedCatalog()
	reqs := pathTrial(cat, 1_000, 2)
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 3})
	want := regexp.MustCompile(`^spread: site \d+ of 11 reached \(codec\.encode#Write\.0\), path [12] of 2 \(…scheduleCompaction → ForceCommit, ~2 requests a trial\), occurrence [12]; struck; kind \S+ of 3 offered$`)
	periodic := regexp.MustCompile(`, path [12] of 2 \(run → Commit, ~99\d requests a trial\), `)
	seen := map[string]bool{}
	for trial := range 60 {
		p.Begin(TrialInfo{Index: trial})
		compaction := false
		for i, r := range reqs {
			r.Trial, r.Seq = trial, i
			if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone && compacting(&strike{stack: r.Stack}) {
				compaction = true
			}
		}
		why := p.(Explainer).Explain(trial).Why
		p.End(Outcome{Index: trial, Requests: len(reqs)})
		switch {
		case compaction && strings.Contains(why, "ForceCommit"):
			seen["compaction"] = true
			if !want.MatchString(why) {
				t.Errorf("trial %d: Explain = %q; want it to match %s", trial, why, want)
			}
		case periodic.MatchString(why):
			seen["periodic"] = true
		}
	}
	if !seen["compaction"] || !seen["periodic"] {
		t.Errorf("aimed at the paths %v in 60 trials; want both", seen)
	}
}

func TestSpreadPathsBound(t *testing.T) {
	// Trials 0–2 reach the hot site by 10 paths, trial 3 by 40 others:
	// the memory keeps 32 paths of the site, all of trial 3's.
	cat := skewedCatalog()
	paths := func(from, n int) stream {
		s := make(stream, 400)
		for i := range s {
			s[i] = Request{Node: "n1", Site: &cat.Sites[0], Stack: stackOf("main.write", fmt.Sprintf("main.caller%d", from+i%n))}
		}
		return s
	}
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 1})
	runTrials(p, 0, 3, func(int) stream { return paths(0, 10) })
	runTrials(p, 3, 1, func(int) stream { return paths(10, 40) })
	h := p.(*spread).mem.Sites[0]
	if len(h.Paths) != spreadPaths {
		t.Fatalf("%d paths kept; want %d", len(h.Paths), spreadPaths)
	}
	for _, ph := range h.Paths {
		var n int
		if _, err := fmt.Sscanf(ph.Callers[0], "main.caller%d:", &n); err != nil || n < 10 || ph.Seen != 4 {
			t.Errorf("kept %v (seen by trial %d); want only trial 3's paths", ph.Callers, ph.Seen)
		}
	}
}

func TestSpreadPathsFromOldMemory(t *testing.T) {
	// A memory of trials without stacks (as main's spread, before paths,
	// stored it) loads; the trials with stacks then aim at the paths.
	cat := skewedCatalog()
	old := mustNew(t, "spread", Env{Catalog: cat, Seed: 2})
	runTrials(old, 0, 12, func(int) stream { return skewedTrial(cat, 1_000, coldBursts) })
	data, err := old.(Stateful).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"paths"`) {
		t.Fatalf("a memory without stacks has paths: %s", data)
	}
	p := mustNew(t, "spread", Env{Catalog: cat, Seed: 2})
	if err := p.(Stateful).Restore(data); err != nil {
		t.Fatal(err)
	}
	reqs := pathTrial(cat, 1_000, 2)
	strikes := runTrials(p, 12, 24, func(int) stream { return reqs })
	if _, n := perSite(strikes); n < 24 {
		t.Errorf("%d of 24 trials struck; want all", n)
	}
	sp := p.(*spread)
	aimed := 0
	for i := 36; i < 60; i++ {
		sp.Begin(TrialInfo{Index: i})
		if tg := sp.trials.of(i).targets[0]; tg.site == 0 && tg.path != 0 {
			aimed++
		}
		sp.End(Outcome{Index: i})
	}
	if h := sp.mem.Sites[0]; len(h.Paths) != 2 || aimed == 0 {
		t.Errorf("the hot site has %d paths, aimed at %d times in 24 trials; want 2 paths aimed at", len(h.Paths), aimed)
	}
}
