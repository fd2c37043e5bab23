package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// etcdLikeCatalog has 40 sites like an etcd build's: disk and network I/O
// with errors, delays and crashes, a third of them under a lock or a
// timeout (Sieve's), and ten (30–39) that no trial ever requests.
func etcdLikeCatalog() *catalog.Catalog {
	c := &catalog.Catalog{}
	for i := 0; i < 40; i++ {
		s := catalog.Site{
			Index: uint32(i), ID: fmt.Sprintf("pkg%d.fn%d#Write.0", i%7, i),
			Kind: catalog.KindError | catalog.KindDelay | catalog.KindCrash, IO: "disk",
			Errors: []catalog.ErrorValue{{Name: "EIO"}},
			Block:  fmt.Sprintf("b%d", i), Rep: true,
		}
		if i%2 == 1 {
			s.IO = "net"
			s.Errors = append(s.Errors, catalog.ErrorValue{Name: "ECONNRESET"})
		}
		s.LockHeld = i%3 == 0
		s.Timeout = i%5 == 0
		c.Sites = append(c.Sites, s)
	}
	c.Hash = c.ComputeHash()
	return c
}

// etcdLikeTrial is the request stream of trial t, as etcd's might be: a
// few hot sites requested all the time (the raft loop's WAL writes and
// peer sends), most requests in the follower state, the leader's on one
// node (n1, whose requests carry the leader's role, the others' the
// follower's), an election state early in some trials, a snapshot state
// late in one trial of four, and trial lengths that vary tenfold (a delay or a
// crash multiplies the requests of some trials).
func etcdLikeTrial(cat *catalog.Catalog, t int) []Request {
	rng := rand.New(rand.NewPCG(99, uint64(t)))
	n := 80 + rng.IntN(200)
	if t%6 == 5 {
		n *= 10
	}
	snapFrom := -1
	if t%4 == 3 {
		snapFrom = n * 3 / 4
	}
	var rs []Request
	for i := 0; i < n; i++ {
		node := fmt.Sprintf("n%d", rng.IntN(3)+1)
		var site int
		switch r := rng.IntN(10); {
		case r < 6:
			site = rng.IntN(4) // hot sites
		case r < 9:
			site = 4 + rng.IntN(16)
		default:
			site = 20 + rng.IntN(10) // cold sites
		}
		task, state := uint32(1), uint32(1) // raft loop, follower
		switch {
		case node == "n1":
			state = 2 // leader
		case i < 10 && t%3 == 0:
			state = 3 // candidate, early in some trials
		}
		if snapFrom >= 0 && i >= snapFrom && i < snapFrom+5 {
			state = 4 // snapshot, late and short
		}
		if site >= 16 {
			task, state = 2, uint32(5+site%3) // the apply loop
		}
		role := "StateFollower"
		if node == "n1" {
			role = "StateLeader"
		}
		rs = append(rs, Request{
			Node: node, Site: &cat.Sites[site], Task: task, State: state, Role: role,
			Stack: stackOf("main.loop", fmt.Sprintf("main.caller%d", rng.IntN(1+site%3))),
		})
	}
	return rs
}

// runCampaign runs up to trials synthetic trials through p, as the
// controller and campaign do: a trial's live sites and nodes only, no
// more requests after Decision.Done, and no trial begun once a Finite
// policy is exhausted. It returns the trials run and those that injected.
func runCampaign(p Policy, cat *catalog.Catalog, trials int) (run, injected int) {
	for t := 0; t < trials; t++ {
		if f, ok := p.(Finite); ok && f.Exhausted() {
			break
		}
		plan := p.Begin(TrialInfo{Index: t, Nodes: []string{"n1", "n2", "n3"}})
		live := map[uint32]bool{}
		for _, s := range plan.Sites {
			live[s] = true
		}
		var inj []record.Injection
		done := false
		seq := 0
		for _, r := range etcdLikeTrial(cat, t) {
			if done || !live[r.Site.Index] || !plan.LiveOn(r.Node) {
				continue
			}
			r.Trial, r.Seq = t, seq
			seq++
			d := p.Decide(&r)
			if d.Fault.Kind != catalog.KindNone {
				inj = append(inj, record.Injection{Node: r.Node, SiteID: r.Site.ID, Kind: d.Fault.Kind, State: r.State})
			}
			done = d.Done
		}
		p.End(Outcome{Index: t, Requests: seq, Injections: inj})
		run++
		if len(inj) > 0 {
			injected++
		}
	}
	return run, injected
}

// TestEveryTrialCounts replays 50 etcd-like trials through every policy:
// at least 90% of the trials run inject, and a policy that runs out of
// faults to try says so (Finite) instead of running fault-free trials.
func TestEveryTrialCounts(t *testing.T) {
	cat := etcdLikeCatalog()
	tests := []struct {
		policy string
		env    Env
	}{
		{"random", Env{}},
		{"bsrr", Env{}},
		{"bsrr", Env{Key: KeyStateSite}},
		{"bsrr", Env{Key: KeyStateSiteStack}},
		{"bsrr", Env{Kinds: []catalog.Kind{catalog.KindCrash}}},
		{"new-state-only", Env{}},
		{"sieve", Env{}},
		{"sieve-insensitive", Env{}},
		{"fate", Env{}},
		{"fate", Env{Kinds: []catalog.Kind{catalog.KindCrash}}},
		{"exhaustive", Env{}},
		{"exhaustive", Env{Kinds: []catalog.Kind{catalog.KindCrash}}},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s/key=%s/kinds=%v", tt.policy, tt.env.Key, tt.env.Kinds)
		t.Run(name, func(t *testing.T) {
			for seed := int64(1); seed <= 3; seed++ {
				env := tt.env
				env.Catalog, env.Seed = cat, seed
				p := mustNew(t, tt.policy, env)
				run, injected := runCampaign(p, cat, 50)
				t.Logf("seed %d: %d of %d trials injected", seed, injected, run)
				if run == 0 || float64(injected) < 0.9*float64(run) {
					t.Errorf("seed %d: %d of %d trials injected, want at least 90%%", seed, injected, run)
				}
				if f, ok := p.(Finite); ok && run < 50 && !f.Exhausted() {
					t.Errorf("seed %d: stopped after %d trials without being exhausted", seed, run)
				}
			}
		})
	}
}

// TestExhaustedAfterOneDryTrial replays a small, repetitive campaign (three
// sites, two stacks, one state) until the policies that grant each fault
// identity once have tried everything: each widens instead of running
// fault-free trials, and reports exhaustion after a single trial that
// injected nothing.
func TestExhaustedAfterOneDryTrial(t *testing.T) {
	cat := testCatalog()
	for _, name := range []string{"exhaustive", "fate", "new-state-only", "sieve", "sieve-insensitive"} {
		t.Run(name, func(t *testing.T) {
			p := mustNew(t, name, Env{Catalog: cat, Seed: 1, TargetErrors: true})
			got := replayUntilExhausted(p, cat, 200)
			dry := 0
			for _, g := range got {
				if len(g) == 0 {
					dry++
				}
			}
			if !p.(Finite).Exhausted() {
				t.Fatalf("not exhausted after %d trials", len(got))
			}
			if dry != 1 || len(got[len(got)-1]) != 0 {
				t.Fatalf("%d trials, %d of them dry, want only the last: %v", len(got), dry, got)
			}
			t.Logf("%d trials, exhausted after the last", len(got))
		})
	}
}

// replayUntilExhausted is replay, stopping as a campaign does once the
// policy is exhausted.
func replayUntilExhausted(p Policy, cat *catalog.Catalog, max int) [][]string {
	var out [][]string
	for i := 0; i < max && !p.(Finite).Exhausted(); i++ {
		out = append(out, replayFrom(p, cat, i, i+1, 30)...)
	}
	return out
}

// TestParallelTrialsEachInject runs the etcd-like trials 2 and 10 at a time
// (trials.parallel), their requests interleaved: each trial keeps its own
// quota and random source, so one trial's grant does not leave the other
// without one, and a state whose budget the other trials spent is not the
// focus of the rest (bsrr, measured on etcd with --parallel 10).
func TestParallelTrialsEachInject(t *testing.T) {
	cat := etcdLikeCatalog()
	for _, width := range []int{2, 10} {
		for _, name := range []string{"random", "bsrr", "new-state-only", "sieve", "fate", "exhaustive"} {
			t.Run(fmt.Sprintf("%s/parallel-%d", name, width), func(t *testing.T) {
				p := mustNew(t, name, Env{Catalog: cat, Seed: 1})
				run, injected := 0, 0
				for a := 0; a < 40; a += width {
					if f, ok := p.(Finite); ok && f.Exhausted() {
						break
					}
					trials := make([][]Request, width)
					inj := make([][]record.Injection, width)
					longest := 0
					for k := range trials {
						trials[k] = etcdLikeTrial(cat, a+k)
						longest = max(longest, len(trials[k]))
						p.Begin(TrialInfo{Index: a + k})
					}
					for i := 0; i < longest; i++ {
						for k := range trials {
							if i >= len(trials[k]) {
								continue
							}
							r := trials[k][i]
							r.Trial, r.Seq = a+k, i
							if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
								inj[k] = append(inj[k], record.Injection{Node: r.Node, SiteID: r.Site.ID})
							}
						}
					}
					for k := range trials {
						p.End(Outcome{Index: a + k, Requests: len(trials[k]), Injections: inj[k]})
						run++
						if len(inj[k]) > 0 {
							injected++
						}
						if len(inj[k]) > 1 {
							t.Errorf("trial %d: %d injections, want 1", a+k, len(inj[k]))
						}
					}
				}
				t.Logf("%d of %d trials injected", injected, run)
				if float64(injected) < 0.9*float64(run) {
					t.Errorf("%d of %d parallel trials injected, want at least 90%%", injected, run)
				}
			})
		}
	}
}

// TestRestoreBeforeWidening restores snapshots written before the policies
// widened (a bare set of identities; Sieve's under "tried"): what they
// tried stays tried.
func TestRestoreBeforeWidening(t *testing.T) {
	cat := testCatalog()
	req := Request{Node: "n1", Site: &cat.Sites[0], Stack: stackOf("main.a")}
	tests := []struct {
		policy, snapshot string
	}{
		{"fate", `{"` + FailureID(cat.Sites[0].ID, StackKey(req.Stack), Fault{Kind: catalog.KindError, Error: 1}) + `":true}`},
		{"exhaustive", `{"` + cat.Sites[0].ID + `|error:1":true}`},
		{"sieve", `{"tried":{"` + cat.Sites[0].ID + `|` + StackKey(req.Stack) + `":true},"per_site":{"` + cat.Sites[0].ID + `":1},"timeouts":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			p := mustNew(t, tt.policy, Env{Catalog: cat, Seed: 1})
			if err := p.(Stateful).Restore([]byte(tt.snapshot)); err != nil {
				t.Fatal(err)
			}
			p.Begin(TrialInfo{Index: 0})
			r := req
			d := p.Decide(&r)
			if tt.policy == "sieve" {
				if d.Fault.Kind != catalog.KindNone {
					t.Fatalf("sieve re-injected a restored (site, stack): %+v", d)
				}
				return
			}
			if d.Fault.Kind == catalog.KindError && d.Fault.Error == 1 {
				t.Fatalf("%s re-injected a restored fault: %+v", tt.policy, d)
			}
		})
	}
}

// roleCatalog has three Sieve sites like etcd's: the raft loop's WAL
// fsync, a peer send and the backend commit, each under a lock or a
// timeout.
func roleCatalog() *catalog.Catalog {
	c := &catalog.Catalog{Sites: []catalog.Site{
		{ID: "wal.(*WAL).sync#Fsync.0", Kind: catalog.KindError | catalog.KindDelay, IO: "disk", LockHeld: true, Errors: []catalog.ErrorValue{{Name: "EIO"}}},
		{ID: "rafthttp.(*streamWriter).run#Write.0", Kind: catalog.KindError | catalog.KindDelay, IO: "net", Timeout: true, Errors: []catalog.ErrorValue{{Name: "ECONNRESET"}}},
		{ID: "backend.(*batchTx).commit#Write.0", Kind: catalog.KindError | catalog.KindDelay, IO: "disk", LockHeld: true, Errors: []catalog.ErrorValue{{Name: "EIO"}}},
	}}
	for i := range c.Sites {
		c.Sites[i].Index = uint32(i)
	}
	c.Hash = c.ComputeHash()
	return c
}

// roleTrial is trial t's request stream: the leader is another node each
// trial; the followers write their WAL, send and commit all the time, from
// the start; the leader sends and commits, and writes its WAL once, late
// in the trial (the leader's WAL write only happens on one node). With
// roles, a request carries its node's role; without, none does.
func roleTrial(cat *catalog.Catalog, t int, roles bool) (leader string, rs []Request) {
	leader = fmt.Sprintf("n%d", t%3+1)
	req := func(node string, site int) Request {
		r := Request{Node: node, Site: &cat.Sites[site], Task: 1, State: 1, Stack: stackOf("raft.run", "raft.site"+fmt.Sprint(site))}
		if roles {
			r.Role = "StateFollower"
			if node == leader {
				r.Role = "StateLeader"
			}
		}
		return r
	}
	for i := 0; i < 40; i++ {
		for n := 1; n <= 3; n++ {
			node := fmt.Sprintf("n%d", n)
			if node == leader {
				rs = append(rs, req(node, 1+i%2))
				if i == 35 {
					rs = append(rs, req(node, 0))
				}
				continue
			}
			rs = append(rs, req(node, i%3))
		}
	}
	return leader, rs
}

// TestLeaderWALWrite is the etcd finding behind node roles: a bug needs a
// slow WAL write on the leader, and sieve delayed the WAL write only on
// followers. With the node's role in its identities, sieve (and fate and
// exhaustive) inject the WAL write on the leader within the first trials,
// whichever node leads — in at most as many trials as the (site, role)
// pairs the trials reach.
func TestLeaderWALWrite(t *testing.T) {
	cat := roleCatalog()
	const wal = 0
	firstOnLeader := func(name string, roles bool, trials int) int {
		p := mustNew(t, name, Env{Catalog: cat, Seed: 1})
		for i := 0; i < trials; i++ {
			p.Begin(TrialInfo{Index: i, Nodes: []string{"n1", "n2", "n3"}})
			leader, rs := roleTrial(cat, i, roles)
			var inj []record.Injection
			found := false
			for seq, r := range rs {
				r.Trial, r.Seq = i, seq
				d := p.Decide(&r)
				if d.Fault.Kind == catalog.KindNone {
					continue
				}
				inj = append(inj, record.Injection{Node: r.Node, SiteID: r.Site.ID, Kind: d.Fault.Kind, Role: r.Role})
				if r.Site.Index == wal && r.Node == leader {
					if roles && r.Role != "StateLeader" {
						t.Errorf("%s: the WAL write on leader %s carries role %q", name, leader, r.Role)
					}
					found = true
				}
			}
			p.End(Outcome{Index: i, Requests: len(rs), Injections: inj})
			if found {
				return i
			}
		}
		return -1
	}
	for _, tc := range []struct {
		name   string
		trials int
	}{
		{"sieve", 6}, // 3 sites × 2 roles
		{"sieve-insensitive", 6},
		{"fate", 12}, // × 2 fault kinds
		{"exhaustive", 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := firstOnLeader(tc.name, true, tc.trials)
			without := firstOnLeader(tc.name, false, tc.trials)
			t.Logf("the leader's WAL write first injected in trial %d with roles, %d without (-1: not within %d trials)", got, without, tc.trials)
			if got < 0 {
				t.Errorf("the leader's WAL write not injected within %d trials", tc.trials)
			}
		})
	}
}

// TestNothingToInject: a policy whose faults the campaign does not allow
// says so at once (Finite), rather than run fault-free trials.
func TestNothingToInject(t *testing.T) {
	env := Env{Catalog: etcdLikeCatalog(), Seed: 1, Kinds: []catalog.Kind{catalog.KindCrash}}
	for _, name := range []string{"sieve", "sieve-insensitive"} {
		p, err := New(name, env)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := p.(Finite); !ok || !f.Exhausted() {
			t.Errorf("%s under faults.kinds=[crash] is not exhausted before its first trial", name)
		}
	}
	env.Kinds = []catalog.Kind{catalog.KindDelay}
	if p, _ := New("sieve", env); p.(Finite).Exhausted() {
		t.Error("sieve with delays allowed is exhausted before its first trial")
	}
}

// TestRandomExpected replays a gofault test campaign's mix through random:
// tests whose requests outside setup differ a hundredfold (6 beside 600,
// in turn), each trial also making 60 requests in the test's setup, which
// gofault test answers itself (no fault there) without asking the policy
// — the trial's Outcome.Requests counts them, the policy never sees them.
// Sized on earlier trials' counts, random takes a small test for 66
// requests and mostly misses it; told each trial's own count
// (TrialInfo.Expected, the test's fault-free measure outside setup), it
// injects in at least 95% of both (it aims at a miss in 1,000 trials).
// Measured over 3 seeds × 200 trials: 35–41% of the small tests'
// trials injected without Expected, 99–100% with (96–100% when it aimed
// at 1 in 100).
func TestRandomExpected(t *testing.T) {
	cat := etcdLikeCatalog()
	sizes := []int{6, 600}
	const setup = 60
	run := func(seed int64, tell bool) (small, big float64) {
		p := mustNew(t, "random", Env{Catalog: cat, Seed: seed})
		var inj [2]int
		const trials = 200
		for tr := 0; tr < trials; tr++ {
			n := sizes[tr%2]
			info := TrialInfo{Index: tr, Nodes: []string{"n1"}}
			if tell {
				info.Expected = n
			}
			p.Begin(info)
			got := false
			for i := 0; i < n; i++ {
				r := Request{Trial: tr, Seq: i, Node: "n1", Site: &cat.Sites[i%30], Task: 1, State: 1}
				if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
					got = true
				}
			}
			p.End(Outcome{Index: tr, Requests: n + setup})
			if got {
				inj[tr%2]++
			}
		}
		return float64(inj[0]) / (trials / 2), float64(inj[1]) / (trials / 2)
	}
	for seed := int64(1); seed <= 3; seed++ {
		s0, b0 := run(seed, false)
		s1, b1 := run(seed, true)
		t.Logf("seed %d: small tests injected %.0f%% without Expected, %.0f%% with; big %.0f%%, %.0f%%", seed, 100*s0, 100*s1, 100*b0, 100*b1)
		if s1 < 0.95 || b1 < 0.95 {
			t.Errorf("seed %d: with Expected, small %.0f%%, big %.0f%% injected; want at least 95%% each", seed, 100*s1, 100*b1)
		}
		if s0 >= s1 {
			t.Errorf("seed %d: Expected did not help the small tests (%.0f%% without, %.0f%% with)", seed, 100*s0, 100*s1)
		}
	}
}
