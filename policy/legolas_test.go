package policy

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// statefulTrial is a synthetic trial of a node whose main task spends most
// requests in state 1 (follower), some in state 2 (leader) and two requests
// in the rare state 3 (snapshotting), all at the same file-write site.
func statefulTrial(cat *catalog.Catalog) []Request {
	var rs []Request
	for i := 0; i < 200; i++ {
		st := uint32(1)
		switch {
		case i%10 == 5:
			st = 2
		case i == 120 || i == 121:
			st = 3
		}
		rs = append(rs, Request{Node: "n1", Site: &cat.Sites[0], Task: 1, State: st, Stack: stackOf("main.write")})
	}
	return rs
}

// trialsToState runs trials until p injects in state want and returns how
// many it took (or max+1).
func trialsToState(p Policy, cat *catalog.Catalog, want uint32, max int) int {
	for t := 0; t < max; t++ {
		p.Begin(TrialInfo{Index: t})
		hit := false
		var inj []record.Injection
		for i, r := range statefulTrial(cat) {
			r.Trial, r.Seq = t, i
			if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
				inj = append(inj, record.Injection{State: r.State})
				if r.State == want {
					hit = true
				}
			}
		}
		p.End(Outcome{Index: t, Requests: 200, Injections: inj})
		if hit {
			return t + 1
		}
	}
	return max + 1
}

func TestBSRRFindsRareStateFasterThanRandom(t *testing.T) {
	cat := testCatalog()
	var bsrr, rnd []int
	for seed := int64(1); seed <= 9; seed++ {
		env := Env{Catalog: cat, Seed: seed, Kinds: []catalog.Kind{catalog.KindError}}
		bsrr = append(bsrr, trialsToState(mustNew(t, "bsrr", env), cat, 3, 200))
		rnd = append(rnd, trialsToState(mustNew(t, "random", env), cat, 3, 200))
	}
	mb, mr := median(bsrr), median(rnd)
	t.Logf("trials to the rare state: bsrr %v (median %d), random %v (median %d)", bsrr, mb, rnd, mr)
	if mb > 5 {
		t.Errorf("bsrr needed a median of %d trials to inject in the rare state; it focuses one state per trial", mb)
	}
	if mr < 3*mb {
		t.Errorf("random (median %d) is not 3× slower than bsrr (median %d) on a rare state", mr, mb)
	}
}

func median(xs []int) int {
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[len(s)/2]
}

func TestBSRRRoundRobinAndBudget(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "bsrr", Env{Catalog: cat, Seed: 3, Budget: 1, Kinds: []catalog.Kind{catalog.KindError}})
	var states []uint32
	for trial := 0; trial < 6; trial++ {
		p.Begin(TrialInfo{Index: trial})
		for i, r := range statefulTrial(cat) {
			r.Trial, r.Seq = trial, i
			if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
				states = append(states, r.State)
			}
		}
		p.End(Outcome{Index: trial})
	}
	// Budget 1: the three states once each (in Algorithm 2's rotation
	// order), then every budget is spent, reset, and each state once more.
	if fmt.Sprint(states) != "[1 3 2 2 1 3]" {
		t.Fatalf("injected in states %v, want [1 3 2 2 1 3]", states)
	}
}

func TestBSRRKeys(t *testing.T) {
	cat := testCatalog()
	r := &Request{Site: &cat.Sites[1], Task: 2, State: 5, Stack: stackOf("a", "b")}
	tests := []struct{ key, want string }{
		{KeyState, "t2/s5"},
		{KeyStateSite, "t2/s5@raft.step#check.0"},
		{KeyStateSiteStack, "t2/s5@raft.step#check.0@" + StackKey(r.Stack)},
	}
	for _, tt := range tests {
		if got := stateKey(tt.key, r); got != tt.want {
			t.Errorf("stateKey(%s) = %q, want %q", tt.key, got, tt.want)
		}
	}
	// With the node's role: in the state and state+site keys, not in the
	// (already sparse) state+site+stack key.
	lr := *r
	lr.Role = "StateLeader"
	for _, tt := range []struct{ key, want string }{
		{KeyState, "t2/s5|r:StateLeader"},
		{KeyStateSite, "t2/s5|r:StateLeader@raft.step#check.0"},
		{KeyStateSiteStack, "t2/s5@raft.step#check.0@" + StackKey(r.Stack)},
	} {
		if got := stateKey(tt.key, &lr); got != tt.want {
			t.Errorf("stateKey(%s) with a role = %q, want %q", tt.key, got, tt.want)
		}
	}
	if _, err := New("bsrr", Env{Catalog: cat, Key: "bogus"}); err == nil {
		t.Error("bsrr accepted an unknown key")
	}
}

func TestNewStateOnly(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "new-state-only", Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindError}})
	var got []uint32
	for trial := 0; trial < 5; trial++ {
		p.Begin(TrialInfo{Index: trial})
		for _, r := range statefulTrial(cat) {
			r.Trial = trial
			if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
				got = append(got, r.State)
			}
		}
		p.End(Outcome{Index: trial})
	}
	if fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("new-state-only injected in states %v, want each state once in order of appearance", got)
	}
}

func sieveCatalog() *catalog.Catalog {
	c := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "wal.sync", Kind: catalog.KindDelay | catalog.KindError, LockHeld: true, Block: "b0", Rep: true},
		{Index: 1, ID: "wal.write", Kind: catalog.KindDelay, LockHeld: true, Block: "b0"}, // grouped away
		{Index: 2, ID: "peer.send", Kind: catalog.KindDelay, Timeout: true, Timeouts: []uint32{0}, Block: "b1", Rep: true},
		{Index: 3, ID: "log.read", Kind: catalog.KindDelay, Block: "b2", Rep: true}, // no lock, no timeout
	}}
	c.Hash = c.ComputeHash()
	return c
}

func TestSieveSitesAndDelays(t *testing.T) {
	cat := sieveCatalog()
	for _, name := range []string{"sieve", "sieve-insensitive"} {
		t.Run(name, func(t *testing.T) {
			p := mustNew(t, name, Env{Catalog: cat, Delay: time.Second})
			plan := p.Begin(TrialInfo{Index: 0})
			if fmt.Sprint(plan.Sites) != "[0 2]" || !plan.Timeouts {
				t.Fatalf("plan = %+v; want the lock-held representative and the timeout site, with timeouts reported", plan)
			}
			p.End(Outcome{Timeouts: []record.Timeout{{Site: 0, Duration: 4 * time.Second}, {Site: 0, Duration: 2 * time.Second}}})

			var delays []string
			for trial := 1; trial <= 6; trial++ {
				p.Begin(TrialInfo{Index: trial})
				for _, stack := range []string{"a", "b"} {
					for _, site := range []int{0, 2} {
						d := p.Decide(&Request{Trial: trial, Site: &cat.Sites[site], Stack: stackOf(stack)})
						if d.Fault.Kind == catalog.KindDelay {
							delays = append(delays, fmt.Sprintf("%s/%s=%v", cat.Sites[site].ID, stack, d.Fault.Delay))
						}
					}
				}
				p.End(Outcome{Index: trial})
			}
			// Each site (and stack) once, then, every one tried, a
			// new round with each site's next delay factor (a widening;
			// node and state add nothing here).
			want := "[wal.sync/a=1s peer.send/a=6s wal.sync/b=3s peer.send/b=18s wal.sync/a=500ms peer.send/a=4.4s]"
			if name == "sieve-insensitive" {
				want = "[wal.sync/a=1s peer.send/a=6s wal.sync/a=3s peer.send/a=18s wal.sync/a=500ms peer.send/a=4.4s]"
			}
			if fmt.Sprint(delays) != want {
				t.Errorf("delays = %v, want %s", delays, want)
			}
		})
	}
}

// TestBSRRFocusesWhereFaultsAre: bsrr keeps no state of a request where
// no allowed fault is offered, so its first trials focus on a state it
// can strike; before, under faults.kinds=[pause] or [rot] in the
// portfolio's bench, 11 of its 15 trials injected nothing (each trial
// focused on a state first seen at a request of another role, or at a
// site that cannot take the kind).
func TestBSRRFocusesWhereFaultsAre(t *testing.T) {
	cat := testCatalog()
	tests := []struct {
		name string
		env  Env
		// req is the i-th request of a trial: most are where no
		// allowed fault is offered.
		req func(i int) Request
	}{
		{
			name: "roles: the leader's requests come first",
			env:  Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindError}, Roles: []string{"follower"}},
			req: func(i int) Request {
				if i%10 == 9 {
					return Request{Node: "n2", Role: "follower", Site: &cat.Sites[0], Task: 1, State: 1}
				}
				return Request{Node: "n1", Role: "leader", Site: &cat.Sites[0], Task: 1, State: 2}
			},
		},
		{
			name: "kinds: most requests at a site that cannot take them",
			env:  Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindDelay}},
			req: func(i int) Request {
				if i%10 == 9 {
					return Request{Node: "n1", Site: &cat.Sites[2], Task: 1, State: 1}
				}
				return Request{Node: "n1", Site: &cat.Sites[1], Task: 2, State: 1}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := int64(1); seed <= 5; seed++ {
				env := tt.env
				env.Seed = seed
				p := mustNew(t, "bsrr", env)
				for trial := range 3 {
					p.Begin(TrialInfo{Index: trial})
					var inj []record.Injection
					for i := range 200 {
						r := tt.req(i)
						r.Trial, r.Seq = trial, i
						if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
							inj = append(inj, record.Injection{State: r.State})
						}
					}
					p.End(Outcome{Index: trial, Requests: 200, Injections: inj})
					if len(inj) == 0 {
						t.Errorf("seed %d, trial %d injected nothing", seed, trial)
					}
				}
			}
		})
	}
}
