package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// runTrial feeds one synthetic trial (n requests cycling over the sites and
// nodes, with per-node-and-site occurrences) to p and returns its
// injections in order.
func runTrial(p Policy, cat *catalog.Catalog, index, n int, failed bool) []record.Injection {
	return runStream(p, index, syntheticTrial(cat, n), failed)
}

// runStream is runTrial over the given requests.
func runStream(p Policy, index int, reqs stream, failed bool) []record.Injection {
	plan := p.Begin(TrialInfo{Index: index, Nodes: []string{"n1", "n2", "n3"}})
	live := map[uint32]bool{}
	for _, s := range plan.Sites {
		live[s] = true
	}
	occ := map[string]int{}
	var inj []record.Injection
	n := 0
	for i, r := range reqs {
		if !live[r.Site.Index] || !plan.LiveOn(r.Node) {
			continue
		}
		k := r.Node + "|" + r.Site.ID
		occ[k]++
		r.Trial, r.Seq, r.Occurrence = index, i, occ[k]
		n++
		d := p.Decide(&r)
		if d.Fault.Kind != catalog.KindNone {
			in := record.Injection{Node: r.Node, Site: r.Site.Index, SiteID: r.Site.ID, Kind: d.Fault.Kind, Occurrence: r.Occurrence}
			if d.Fault.Kind == catalog.KindError {
				in.Error = r.Site.Errors[d.Fault.Error-1].Name
			}
			if d.Fault.Kind == catalog.KindDelay {
				in.Delay = d.Fault.Delay
			}
			inj = append(inj, in)
		}
	}
	p.End(Outcome{Index: index, Requests: n, Injections: inj, Failed: failed})
	return inj
}

func key(inj []record.Injection) []string {
	var out []string
	for _, in := range inj {
		out = append(out, fmt.Sprintf("%s@%s#%d:%s", in.Node, in.SiteID, in.Occurrence, in.Kind))
	}
	return out
}

// TestFuzzSequences: seeds inject one fault, mutants grow sequences up to
// MaxPerTrial faults, each later fault at a point reached after the
// earlier ones, on any node; the same seed makes the same sequences.
func TestFuzzSequences(t *testing.T) {
	cat := testCatalog()
	run := func() [][]string {
		p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: 3, MaxPerTrial: 3})
		var out [][]string
		for i := 0; i < 40; i++ {
			out = append(out, key(runTrial(p, cat, i, 90, false)))
		}
		return out
	}
	a := run()
	if b := run(); !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different sequences:\n%v\n%v", a, b)
	}
	most, across := 0, 0
	for i, tr := range a {
		if len(tr) > 3 {
			t.Errorf("trial %d injected %d faults, want at most 3: %v", i, len(tr), tr)
		}
		for _, f := range tr[min(1, len(tr)):] {
			if strings.Split(f, "@")[0] != strings.Split(tr[0], "@")[0] {
				across++
				break
			}
		}
		if i < seedTrials && len(tr) > 1 {
			t.Errorf("seed trial %d injected %v, want one fault", i, tr)
		}
		most = max(most, len(tr))
	}
	if most < 3 {
		t.Errorf("no trial of 40 ran a 3-fault sequence: %v", a)
	}
	if across == 0 {
		t.Errorf("no trial of 40 struck two nodes: %v", a)
	}
}

// TestFuzzReplaysExactly: a multi-fault trial's injections, replayed, are
// granted at the same points in the same order.
func TestFuzzReplaysExactly(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: 3, MaxPerTrial: 3})
	for i := 0; i < 40; i++ {
		inj := runTrial(p, cat, i, 90, false)
		if len(inj) < 2 {
			continue
		}
		got := runTrial(NewReplay(cat, inj), cat, 0, 90, false)
		if !reflect.DeepEqual(key(got), key(inj)) {
			t.Fatalf("replay of trial %d granted %v, want %v", i, key(got), key(inj))
		}
		return
	}
	t.Fatal("no multi-fault trial to replay")
}

// TestFuzzResume: the queue survives Snapshot and Restore, so a resumed
// campaign goes on with the same sequences.
func TestFuzzResume(t *testing.T) {
	cat := testCatalog()
	env := Env{Catalog: cat, Seed: 5, MaxPerTrial: 3}
	p := mustNew(t, "fuzz", env)
	for i := 0; i < 10; i++ {
		runTrial(p, cat, i, 90, i == 6)
	}
	data, err := p.(Stateful).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q := mustNew(t, "fuzz", env)
	if err := q.(Stateful).Restore(data); err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 20; i++ {
		a, b := key(runTrial(p, cat, i, 90, false)), key(runTrial(q, cat, i, 90, false))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("trial %d: resumed policy injected %v, the original %v", i, b, a)
		}
	}
}

// TestFuzzPrefersNewCoverage: of two sequences whose runs were alike but
// for the coverage blocks they covered first, the one with new coverage
// is the parent of the next mutant; without coverage the earlier one is.
func TestFuzzPrefersNewCoverage(t *testing.T) {
	cat := testCatalog()
	for _, tt := range []struct {
		name       string
		newBlocks  [2]int
		wantParent int
	}{
		{"no coverage: the first", [2]int{0, 0}, 0},
		{"the second covered new blocks", [2]int{0, 40}, 1},
		{"the first covered more", [2]int{90, 3}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: 1, MaxPerTrial: 3})
			f := p.(*fuzz)
			seqs := [2][]Point{
				{{Node: "n1", Site: cat.Sites[0].ID, Occurrence: 2, Fault: Fault{Kind: catalog.KindDelay}}},
				{{Node: "n2", Site: cat.Sites[0].ID, Occurrence: 5, Fault: Fault{Kind: catalog.KindDelay}}},
			}
			for i, seq := range seqs {
				// Each run reached one point after its fault, at a site of
				// its own: both found the same number of new points.
				after := []Point{{Node: seq[0].Node, Site: cat.Sites[2*i].ID, Occurrence: 1}}
				f.trials.begin(i, &fuzzTrial{seq: seq, next: 1, after: after})
				p.End(Outcome{Index: i, Requests: 10, NewBlocks: tt.newBlocks[i]})
			}
			for i := range seqs {
				if got := f.mem.Queue[i].NewBlocks; got != tt.newBlocks[i] {
					t.Errorf("entry %d keeps %d new blocks, want %d", i, got, tt.newBlocks[i])
				}
			}
			m, _, ok := f.mutant(trialRand(1, 2))
			if !ok || len(m) != 2 {
				t.Fatalf("mutant %v, %v", m, ok)
			}
			if !reflect.DeepEqual(m[0], seqs[tt.wantParent][0]) {
				t.Errorf("mutant %v grows %v, want the sequence of trial %d", m, m[0], tt.wantParent)
			}
		})
	}
}

func TestCoverScore(t *testing.T) {
	if coverScore(0) != 0 || coverScore(-1) != 0 || coverScore(1) != 2 || coverScore(7) != 6 {
		t.Errorf("coverScore 0, 1, 7 = %v %v %v", coverScore(0), coverScore(1), coverScore(7))
	}
}

// TestFuzzEveryTrialInjects: one of the three sites is requested by the
// trial's leader only, and the leader moves from trial to trial, so a
// mutant whose first point is on that site is often not reached (its node
// is a follower this time). Such a trial falls back to a seed's single
// fault rather than injecting nothing.
func TestFuzzEveryTrialInjects(t *testing.T) {
	cat := testCatalog()
	trial := func(i int) stream {
		leader := fmt.Sprintf("n%d", i*7%3+1)
		var s stream
		for j := 0; len(s) < 120; j++ {
			node, site := fmt.Sprintf("n%d", j%3+1), &cat.Sites[j%len(cat.Sites)]
			if site.Index == 2 && node != leader {
				continue
			}
			s = append(s, Request{Node: node, Site: site, Stack: stackOf("main.a")})
		}
		return s
	}
	for _, seed := range []int64{1, 2, 3} {
		p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: seed, MaxPerTrial: 3})
		injected, sequences := 0, 0
		const trials = 80
		for i := 0; i < trials; i++ {
			inj := runStream(p, i, trial(i), false)
			if len(inj) > 0 {
				injected++
			}
			if len(inj) > 1 {
				sequences++
			}
		}
		t.Logf("seed %d: %d of %d trials injected, %d with a sequence", seed, injected, trials, sequences)
		if injected < trials*95/100 {
			t.Errorf("seed %d: %d of %d trials injected, want at least 95%%", seed, injected, trials)
		}
		if sequences < trials/4 {
			t.Errorf("seed %d: %d of %d trials ran a sequence, want at least a quarter", seed, sequences, trials)
		}
	}
}

func TestGiveUpAt(t *testing.T) {
	for _, tc := range []struct{ at, c, giveUp, window int }{
		{0, 0, 0, 0},        // nothing known: never give up
		{0, 300, 200, 100},  // no position kept: two thirds
		{10, 300, 150, 150}, // early parent: at least half
		{160, 300, 240, 60}, // half as long again as the parent
		{290, 300, 270, 30}, // late parent: at most nine tenths
		{5, 1, 1, 1},
	} {
		g, w := giveUpAt(tc.at, tc.c)
		if g != tc.giveUp || w != tc.window {
			t.Errorf("giveUpAt(%d, %d) = %d, %d; want %d, %d", tc.at, tc.c, g, w, tc.giveUp, tc.window)
		}
	}
}

// everySiteTrial is n requests in which every node reaches every site in
// turn (n1, n2, n3 at site 0, then at site 1, ...), so any fault can move
// to another node.
func everySiteTrial(cat *catalog.Catalog, n int) stream {
	var s stream
	for i := 0; len(s) < n; i++ {
		s = append(s, Request{
			Node:  fmt.Sprintf("n%d", i%3+1),
			Site:  &cat.Sites[i/3%len(cat.Sites)],
			Stack: stackOf("main.a"),
		})
	}
	return s
}

// TestFuzzGrowsOnAnyNode: a mutant appends its fault at a point that the
// run reached after the last fault, on any node: with each node's points
// drawn as likely, 30 mutants of one crash on n1 put their second fault on
// n2 or n3 often, and always after the first fault.
func TestFuzzGrowsOnAnyNode(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: 7, MaxPerTrial: 2})
	f := p.(*fuzz)
	seq := []Point{{Node: "n1", Site: cat.Sites[0].ID, Occurrence: 1, Fault: Fault{Kind: catalog.KindCrash}}}
	var after []Point
	for _, n := range []string{"n1", "n2", "n3"} {
		for i := 2; i <= 4; i++ {
			after = append(after, Point{Node: n, Site: cat.Sites[0].ID, Occurrence: i})
		}
	}
	f.trials.begin(0, &fuzzTrial{seq: seq, next: 1, after: after})
	p.End(Outcome{Index: 0, Requests: 10})
	others := map[string]int{}
	for i := 0; i < 30; i++ {
		m, _, ok := f.grow(trialRand(7, i))
		if !ok || len(m) != 2 || !reflect.DeepEqual(m[0], seq[0]) {
			t.Fatalf("mutant %d: %v, %v", i, m, ok)
		}
		if !slices.ContainsFunc(after, func(p Point) bool {
			return reflect.DeepEqual(p, Point{Node: m[1].Node, Site: m[1].Site, Occurrence: m[1].Occurrence})
		}) {
			t.Errorf("mutant %d appended %v, not a point reached after the first fault", i, m[1])
		}
		others[m[1].Node]++
	}
	if others["n2"] < 5 || others["n3"] < 5 {
		t.Errorf("second faults by node %v: want n2 and n3 five times each at least", others)
	}
}

// TestFuzzMoves: the move mutation takes one fault of a sequence to
// another node, same site and fault, at the occurrence that node reached
// after the fault before it; the run's points give each fault's moves.
func TestFuzzMoves(t *testing.T) {
	cat := testCatalog()
	s0, s1 := cat.Sites[0].ID, cat.Sites[1].ID
	crash, delay := Fault{Kind: catalog.KindCrash}, Fault{Kind: catalog.KindDelay}
	seq := []Point{{Node: "n1", Site: s0, Occurrence: 2, Fault: crash}, {Node: "n1", Site: s1, Occurrence: 5, Fault: delay}}
	reached := map[reachKey]Point{
		{"n1", s0, 0}: {Node: "n1", Site: s0, Occurrence: 1},
		{"n2", s0, 0}: {Node: "n2", Site: s0, Occurrence: 1, At: 3},
		{"n3", s0, 1}: {Node: "n3", Site: s0, Occurrence: 4, At: 9}, // only after the crash: still before the delay
		{"n2", s1, 0}: {Node: "n2", Site: s1, Occurrence: 1},        // before the crash: not a place for the delay
		{"n3", s1, 1}: {Node: "n3", Site: s1, Occurrence: 2},
		{"n2", s1, 2}: {Node: "n2", Site: s1, Occurrence: 7},
	}
	got := moves(seq, reached)
	want := [][]Point{
		{{Node: "n2", Site: s0, Occurrence: 1, At: 3}, {Node: "n3", Site: s0, Occurrence: 4, At: 9}},
		{{Node: "n2", Site: s1, Occurrence: 7}, {Node: "n3", Site: s1, Occurrence: 2}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("moves = %v, want %v", got, want)
	}
	if m := moves(seq[:1], map[reachKey]Point{{"n1", s0, 0}: {Node: "n1", Site: s0, Occurrence: 1}}); m != nil {
		t.Errorf("moves with no other node = %v, want none", m)
	}
	for _, tc := range []struct {
		name string
		ks   []int
		want [][]Point // the mutants that may come out
	}{
		{"first fault", []int{0}, [][]Point{
			{{Node: "n2", Site: s0, Occurrence: 1, At: 3, Fault: crash}, seq[1]},
			{{Node: "n3", Site: s0, Occurrence: 4, At: 9, Fault: crash}, seq[1]},
		}},
		{"second fault", []int{1}, [][]Point{
			{seq[0], {Node: "n2", Site: s1, Occurrence: 7, Fault: delay}},
			{seq[0], {Node: "n3", Site: s1, Occurrence: 2, Fault: delay}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[int]bool{}
			for i := 0; i < 20; i++ {
				m, ok := moved(trialRand(1, i), seq, got, tc.ks)
				if !ok {
					t.Fatal("no mutant")
				}
				j := slices.IndexFunc(tc.want, func(w []Point) bool { return reflect.DeepEqual(w, m) })
				if j < 0 {
					t.Fatalf("mutant %v, want one of %v", m, tc.want)
				}
				seen[j] = true
			}
			if len(seen) != len(tc.want) {
				t.Errorf("20 mutants took %d of the %d moves", len(seen), len(tc.want))
			}
		})
	}
	if _, ok := moved(trialRand(1, 0), seq, got, nil); ok {
		t.Error("a mutant with no movable fault")
	}
}

// TestFuzzMovesAcrossNodes: over a run where every node reaches every
// site, the queue's sequences record moves and the loop runs mutants
// whose faults strike two nodes or more, which replay repeats exactly.
func TestFuzzMovesAcrossNodes(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: 11, MaxPerTrial: 3})
	f := p.(*fuzz)
	var cross [][]record.Injection
	for i := 0; i < 60; i++ {
		inj := runStream(p, i, everySiteTrial(cat, 90), false)
		nodes := map[string]bool{}
		for _, in := range inj {
			nodes[in.Node] = true
		}
		if len(nodes) > 1 {
			cross = append(cross, inj)
		}
	}
	movable := 0
	for _, e := range f.mem.Queue {
		if len(e.Seq) >= 2 && len(e.Moves) > 0 {
			movable++
		}
	}
	if movable == 0 {
		t.Fatal("no sequence of the queue has a fault to move")
	}
	if len(cross) < 10 {
		t.Fatalf("%d of 60 trials struck two nodes or more, want 10 at least", len(cross))
	}
	got := runStream(NewReplay(cat, cross[0]), 0, everySiteTrial(cat, 90), false)
	if !reflect.DeepEqual(key(got), key(cross[0])) {
		t.Errorf("replay granted %v, want %v", key(got), key(cross[0]))
	}
}

// TestFuzzAfterSpread: after the last fault a run keeps the first three
// requests of each node and site, then the 4th, 8th, 16th, ... — points
// spread over the rest of the run, so that a second member's fault may
// strike while the first member is down; only the first three of the
// killed node are its recovery points.
func TestFuzzAfterSpread(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want bool
	}{{1, false}, {3, false}, {4, true}, {5, false}, {8, true}, {12, false}, {16, true}, {1024, true}} {
		if got := spreadAt(tc.n); got != tc.want {
			t.Errorf("spreadAt(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
	cat := testCatalog()
	p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: 1, MaxPerTrial: 3})
	f := p.(*fuzz)
	site := &cat.Sites[0]
	tr := &fuzzTrial{seq: []Point{{Node: "n1", Site: site.ID, Occurrence: 1, Fault: Fault{Kind: catalog.KindCrash}}},
		afterAt: map[[2]string]int{}, reached: map[reachKey]Point{}}
	f.trials.begin(0, tr)
	if d := p.Decide(&Request{Trial: 0, Node: "n1", Site: site, Occurrence: 1}); d.Fault.Kind != catalog.KindCrash {
		t.Fatalf("first point not granted: %+v", d)
	}
	for i := 1; i <= 40; i++ {
		p.Decide(&Request{Trial: 0, Node: "n2", Site: site, Occurrence: i})
		p.Decide(&Request{Trial: 0, Node: "n1", Site: site, Occurrence: i + 1})
	}
	var got []string
	for _, pt := range tr.after {
		got = append(got, fmt.Sprintf("%s#%d", pt.Node, pt.Occurrence))
	}
	want := []string{"n2#1", "n1#2", "n2#2", "n1#3", "n2#3", "n1#4", "n2#4", "n1#5", "n2#8", "n1#9", "n2#16", "n1#17", "n2#32", "n1#33"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after = %v, want %v", got, want)
	}
	var rec []string
	for _, pt := range tr.recovery {
		rec = append(rec, fmt.Sprintf("%s#%d", pt.Node, pt.Occurrence))
	}
	if want := []string{"n1#2", "n1#3", "n1#4"}; !reflect.DeepEqual(rec, want) {
		t.Errorf("recovery = %v, want %v", rec, want)
	}
}

// TestFuzzDownPoints: the points other nodes reach while the node the last
// fault killed is down — before its next process's first request — are
// marked Down; the killed node's own last requests and everything after
// its restart are not.
func TestFuzzDownPoints(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: 1, MaxPerTrial: 3})
	f := p.(*fuzz)
	site := &cat.Sites[0]
	tr := &fuzzTrial{seq: []Point{{Node: "n2", Site: site.ID, Occurrence: 1, Fault: Fault{Kind: catalog.KindCrash}}},
		afterAt: map[[2]string]int{}, reached: map[reachKey]Point{}}
	f.trials.begin(0, tr)
	if d := p.Decide(&Request{Trial: 0, Node: "n2", Site: site, Occurrence: 1, Process: 1}); d.Fault.Kind != catalog.KindCrash {
		t.Fatalf("first point not granted: %+v", d)
	}
	for _, r := range []Request{
		{Node: "n2", Occurrence: 2, Process: 1}, // the dying process's last request
		{Node: "n1", Occurrence: 1, Process: 1}, // n2 down
		{Node: "n3", Occurrence: 1, Process: 1}, // n2 down
		{Node: "n2", Occurrence: 3, Process: 2}, // n2 restarted
		{Node: "n1", Occurrence: 2, Process: 1},
	} {
		r.Trial, r.Site = 0, site
		p.Decide(&r)
	}
	var got []string
	for _, pt := range tr.after {
		got = append(got, fmt.Sprintf("%s#%d:%v", pt.Node, pt.Occurrence, pt.Down))
	}
	want := []string{"n2#2:false", "n1#1:true", "n3#1:true", "n2#3:false", "n1#2:false"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after = %v, want %v", got, want)
	}
	// A fault that kills nothing marks no point Down.
	tr2 := &fuzzTrial{seq: []Point{{Node: "n2", Site: site.ID, Occurrence: 1, Fault: Fault{Kind: catalog.KindDelay}}},
		afterAt: map[[2]string]int{}, reached: map[reachKey]Point{}}
	f.trials.begin(1, tr2)
	p.Decide(&Request{Trial: 1, Node: "n2", Site: site, Occurrence: 1, Process: 1})
	p.Decide(&Request{Trial: 1, Node: "n1", Site: site, Occurrence: 1, Process: 1})
	if len(tr2.after) != 1 || tr2.after[0].Down {
		t.Errorf("after a delay: %+v, want one point not Down", tr2.after)
	}
}

// TestFuzzGrowsDuringRecovery: after a crash of n2, a third of the draws
// take a point another node reached while n2 was down, so of 60 mutants
// well over a sixth append their fault there (points while down are 2 of
// the 9 reached, about 7 in 60 by a plain draw by node); and the least
// tried of the candidates is taken, so no one point takes most mutants.
func TestFuzzGrowsDuringRecovery(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: 5, MaxPerTrial: 2})
	f := p.(*fuzz)
	s := cat.Sites[0].ID
	seq := []Point{{Node: "n2", Site: s, Occurrence: 1, Fault: Fault{Kind: catalog.KindCrash}}}
	after := []Point{
		{Node: "n2", Site: s, Occurrence: 2},
		{Node: "n1", Site: s, Occurrence: 1, Down: true},
		{Node: "n3", Site: s, Occurrence: 1, Down: true},
		{Node: "n2", Site: s, Occurrence: 3},
		{Node: "n2", Site: s, Occurrence: 4},
	}
	for i := 2; i <= 3; i++ {
		after = append(after, Point{Node: "n1", Site: s, Occurrence: i}, Point{Node: "n3", Site: s, Occurrence: i})
	}
	f.trials.begin(0, &fuzzTrial{seq: seq, next: 1, after: after, recovery: after[3:5]})
	p.End(Outcome{Index: 0, Requests: 10})
	down, by := 0, map[string]int{}
	for i := 0; i < 60; i++ {
		m, _, ok := f.grow(trialRand(5, i))
		if !ok || len(m) != 2 {
			t.Fatalf("mutant %d: %v, %v", i, m, ok)
		}
		if m[1].Down {
			down++
		}
		by[fmt.Sprintf("%s#%d", m[1].Node, m[1].Occurrence)]++
	}
	t.Logf("down %d, by %v", down, by)
	if down < 15 {
		t.Errorf("%d of 60 mutants strike while n2 is down, want 15 or more", down)
	}
	for pt, n := range by {
		if n > 20 {
			t.Errorf("point %s took %d of 60 mutants: the least tried candidate is not preferred (%v)", pt, n, by)
		}
	}
}
