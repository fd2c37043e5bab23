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

// testCatalog has three sites: a file write (two errors, delay, crash), a
// helper returning a sentinel (error only) and a read (delay only).
func testCatalog() *catalog.Catalog {
	c := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "wal.save#Write.0", Kind: catalog.KindError | catalog.KindDelay | catalog.KindCrash, IO: "disk",
			Errors: []catalog.ErrorValue{{Name: "EIO"}, {Name: "ENOSPC"}}},
		{Index: 1, ID: "raft.step#check.0", Kind: catalog.KindError, Errors: []catalog.ErrorValue{{Name: "ErrStopped"}}},
		{Index: 2, ID: "rafthttp.read#Read.0", Kind: catalog.KindDelay, IO: "net"},
	}}
	c.Hash = c.ComputeHash()
	return c
}

// stream is a synthetic trial: the requests its nodes would make.
type stream []Request

func stackOf(fns ...string) []record.Frame {
	var fs []record.Frame
	for _, f := range fns {
		fs = append(fs, record.Frame{Func: f})
	}
	return fs
}

// syntheticTrial makes n requests cycling over the sites and two stacks.
func syntheticTrial(cat *catalog.Catalog, n int) stream {
	var s stream
	for i := 0; i < n; i++ {
		s = append(s, Request{
			Node:  fmt.Sprintf("n%d", i%3+1),
			Site:  &cat.Sites[i%len(cat.Sites)],
			Stack: stackOf("main.a", fmt.Sprintf("main.caller%d", i%2)),
		})
	}
	return s
}

// replay runs trials of the same stream through p and returns the granted
// faults per trial, as "siteID/faultKey" strings.
func replay(p Policy, cat *catalog.Catalog, trials, perTrial int) [][]string {
	var out [][]string
	for t := 0; t < trials; t++ {
		plan := p.Begin(TrialInfo{Index: t, Nodes: []string{"n1", "n2", "n3"}})
		live := map[uint32]bool{}
		for _, s := range plan.Sites {
			live[s] = true
		}
		var granted []string
		var inj []record.Injection
		done := false
		reqs := 0
		for i, r := range syntheticTrial(cat, perTrial) {
			if done || !live[r.Site.Index] || !plan.LiveOn(r.Node) {
				continue
			}
			r.Trial, r.Seq = t, i
			reqs++
			d := p.Decide(&r)
			if d.Fault.Kind != catalog.KindNone {
				granted = append(granted, r.Site.ID+"/"+d.Fault.Key())
				inj = append(inj, record.Injection{Node: r.Node, SiteID: r.Site.ID, Kind: d.Fault.Kind})
			}
			done = d.Done
		}
		p.End(Outcome{Index: t, Requests: reqs, Injections: inj})
		out = append(out, granted)
	}
	return out
}

func mustNew(t *testing.T, name string, env Env) Policy {
	t.Helper()
	p, err := New(name, env)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDeterministicUnderSeed(t *testing.T) {
	cat := testCatalog()
	for _, name := range []string{"random", "exhaustive", "fate", "bsrr", "new-state-only", "sieve", "sieve-insensitive"} {
		t.Run(name, func(t *testing.T) {
			a := replay(mustNew(t, name, Env{Catalog: cat, Seed: 7}), cat, 20, 60)
			b := replay(mustNew(t, name, Env{Catalog: cat, Seed: 7}), cat, 20, 60)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("same seed, different decisions:\n%v\n%v", a, b)
			}
		})
	}
}

func TestRandom(t *testing.T) {
	cat := testCatalog()
	tests := []struct {
		name     string
		env      Env
		maxPer   int
		kindsOK  func(key string) bool
		minTotal int
	}{
		{"one per trial", Env{Catalog: cat, Seed: 1}, 1, func(string) bool { return true }, 10},
		{"two per trial", Env{Catalog: cat, Seed: 2, PerTrial: 2}, 2, func(string) bool { return true }, 20},
		{"errors only", Env{Catalog: cat, Seed: 3, Kinds: []catalog.Kind{catalog.KindError}}, 1,
			func(k string) bool { return strings.Contains(k, "/error:") }, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := replay(mustNew(t, "random", tt.env), cat, 40, 100)
			total := 0
			for i, g := range got {
				if len(g) > tt.maxPer {
					t.Errorf("trial %d: %d injections, want at most %d", i, len(g), tt.maxPer)
				}
				for _, k := range g {
					if !tt.kindsOK(k) {
						t.Errorf("trial %d: fault %s not allowed", i, k)
					}
				}
				total += len(g)
			}
			// p is sized for about one grant per trial, so most trials inject.
			if total < tt.minTotal {
				t.Errorf("only %d injections in 40 trials", total)
			}
		})
	}
}

func TestRandomSpreadsOverTheTrial(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "random", Env{Catalog: cat, Seed: 5})
	replay(p, cat, 3, 100) // learn the request count
	early, late := 0, 0
	for trial := 3; trial < 103; trial++ {
		p.Begin(TrialInfo{Index: trial})
		for i, r := range syntheticTrial(cat, 100) {
			r.Trial = trial
			d := p.Decide(&r)
			if d.Fault.Kind != catalog.KindNone {
				if i < 10 {
					early++
				}
				if i >= 50 {
					late++
				}
				break
			}
		}
		p.End(Outcome{Index: trial, Requests: 100})
	}
	// With p = 1 − e^(ln 0.01/101), about 37% of first grants fall in the
	// first 10 requests and about 10% after the 50th.
	if early > 60 || late == 0 {
		t.Errorf("first grants: %d of 100 in the first 10 requests, %d after the 50th; want them spread", early, late)
	}
}

func TestExhaustiveTriesEveryFaultOnce(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "exhaustive", Env{Catalog: cat, TargetErrors: true})
	got := replay(p, cat, 10, 30)
	var all []string
	for _, g := range got {
		if len(g) > 1 {
			t.Fatalf("more than one injection in a trial: %v", g)
		}
		all = append(all, g...)
	}
	// Sites are reached in index order within a trial, so each trial takes
	// the first site that still has an untried fault.
	want := []string{
		"wal.save#Write.0/error:1", "wal.save#Write.0/error:2", "wal.save#Write.0/delay:2s", "wal.save#Write.0/crash",
		"raft.step#check.0/error:1", "rafthttp.read#Read.0/delay:2s",
	}
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("injections = %v, want %v", all, want)
	}
	if !p.(Finite).Exhausted() {
		t.Fatal("not exhausted after every fault was tried")
	}
	if plan := p.Begin(TrialInfo{Index: 11}); len(plan.Sites) != 0 {
		t.Fatalf("exhausted policy still has live sites %v", plan.Sites)
	}
}

func TestFATENewFailureIDsOnly(t *testing.T) {
	cat := testCatalog()
	p := mustNew(t, "fate", Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindError}, TargetErrors: true})
	got := replay(p, cat, 8, 30)
	n := 0
	for _, g := range got {
		n += len(g)
	}
	// Error faults: site 0 has 2 errors × 2 stacks, site 1 has 1 error × 2
	// stacks (stacks alternate with the request index): 6 failure IDs.
	if n != 6 {
		t.Fatalf("FATE injected %d faults over 8 trials, want the 6 distinct failure IDs: %v", n, got)
	}
	for i := 6; i < 8; i++ {
		if len(got[i]) != 0 {
			t.Fatalf("trial %d repeated an old failure: %v", i, got[i])
		}
	}
}

func TestNoneNeverInjects(t *testing.T) {
	cat := testCatalog()
	for _, g := range replay(mustNew(t, "none", Env{Catalog: cat}), cat, 5, 50) {
		if len(g) != 0 {
			t.Fatalf("none injected %v", g)
		}
	}
}

func TestSnapshotRestoreContinues(t *testing.T) {
	cat := testCatalog()
	for _, name := range []string{"random", "exhaustive", "fate", "bsrr", "new-state-only", "sieve", "sieve-insensitive"} {
		t.Run(name, func(t *testing.T) {
			whole := replay(mustNew(t, name, Env{Catalog: cat, Seed: 9}), cat, 8, 40)

			first := mustNew(t, name, Env{Catalog: cat, Seed: 9})
			part := replay(first, cat, 4, 40)
			data, err := first.(Stateful).Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			second := mustNew(t, name, Env{Catalog: cat, Seed: 9})
			if err := second.(Stateful).Restore(data); err != nil {
				t.Fatal(err)
			}
			rest := replayFrom(second, cat, 4, 8, 40)
			if got := append(part, rest...); !reflect.DeepEqual(got, whole) {
				t.Fatalf("resumed campaign diverged:\n got %v\nwant %v", got, whole)
			}
		})
	}
}

// replayFrom is replay starting at trial index from.
func replayFrom(p Policy, cat *catalog.Catalog, from, to, n int) [][]string {
	return replay(&offset{p, from}, cat, to-from, n)
}

// offset shifts trial indices, so replay can continue a campaign.
type offset struct {
	Policy
	by int
}

func (o *offset) Begin(info TrialInfo) Plan {
	info.Index += o.by
	return o.Policy.Begin(info)
}

func (o *offset) Decide(r *Request) Decision {
	r.Trial += o.by
	return o.Policy.Decide(r)
}

func (o *offset) End(out Outcome) {
	out.Index += o.by
	o.Policy.End(out)
}

func TestUnknownPolicyListsNames(t *testing.T) {
	_, err := New("bogus", Env{})
	if err == nil || !strings.Contains(err.Error(), "random") || !strings.Contains(err.Error(), "fate") {
		t.Fatalf("err = %v, want a list of policies", err)
	}
}

func TestInjectProbability(t *testing.T) {
	for _, c := range []int{1, 2, 3, 10, 100} {
		p := injectProbability(c)
		none := 1.0
		for i := 0; i < c+1; i++ {
			none *= 1 - p
		}
		if none < 0.0099 || none > 0.0101 {
			t.Errorf("c=%d: P(no grant in c+1 requests) = %v, want 0.01", c, none)
		}
	}
}

func TestFaultKey(t *testing.T) {
	tests := []struct {
		f    Fault
		want string
	}{
		{Fault{Kind: catalog.KindError, Error: 2}, "error:2"},
		{Fault{Kind: catalog.KindDelay, Delay: 1500 * time.Millisecond}, "delay:1.5s"},
		{Fault{Kind: catalog.KindCrash}, "crash"},
	}
	for _, tt := range tests {
		if got := tt.f.Key(); got != tt.want {
			t.Errorf("Key() = %q, want %q", got, tt.want)
		}
	}
}

func TestTargetErrorsOnlyWhenAsked(t *testing.T) {
	cat := testCatalog()
	env := Env{Catalog: cat}
	if fs := env.faults(&cat.Sites[1]); len(fs) != 0 {
		t.Fatalf("faults at a site whose error the target creates = %v, want none by default", fs)
	}
	if fs := env.faults(&cat.Sites[0]); len(fs) != 4 {
		t.Fatalf("faults at an I/O site = %v, want 2 errors, a delay and a crash", fs)
	}
	env.TargetErrors = true
	if fs := env.faults(&cat.Sites[1]); len(fs) != 1 || fs[0].Kind != catalog.KindError {
		t.Fatalf("faults with TargetErrors = %v, want the site's error", fs)
	}
}

// TestPowerLossOnlyWhenListed: a power loss is offered at a disk call that
// can crash only when the campaign lists the kind, and replays as itself.
func TestPowerLossOnlyWhenListed(t *testing.T) {
	cat := testCatalog()
	for _, tc := range []struct {
		kinds []catalog.Kind
		want  bool
	}{{nil, false}, {[]catalog.Kind{catalog.KindCrash}, false}, {[]catalog.Kind{catalog.KindPowerLoss}, true}} {
		env := Env{Catalog: cat, Kinds: tc.kinds}
		got := false
		for _, f := range env.faults(&cat.Sites[0]) {
			got = got || f.Kind == catalog.KindPowerLoss
		}
		if got != tc.want {
			t.Errorf("kinds %v: power loss offered %v, want %v", tc.kinds, got, tc.want)
		}
	}
	// Only at disk calls: at a network call a power loss is a crash.
	net := catalog.Site{Index: 9, ID: "rafthttp.send#Write.0", Kind: catalog.KindCrash, IO: "net"}
	for _, f := range (&Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindPowerLoss}}).faults(&net) {
		t.Errorf("power loss offered at a network call: %v", f)
	}
	f, err := faultOf(&cat.Sites[0], record.Injection{Kind: catalog.KindPowerLoss})
	if err != nil || f.Kind != catalog.KindPowerLoss {
		t.Errorf("faultOf(powerloss) = %v, %v", f, err)
	}
}

// TestRebootOnlyWhenListed: a reboot is offered at every site that can
// crash (disk or network) only when the campaign lists the kind, never at
// one that cannot, and replays as itself.
func TestRebootOnlyWhenListed(t *testing.T) {
	cat := testCatalog()
	net := catalog.Site{Index: 9, ID: "rafthttp.send#Write.0", Kind: catalog.KindCrash, IO: "net"}
	for _, tc := range []struct {
		kinds []catalog.Kind
		site  *catalog.Site
		want  bool
	}{
		{nil, &cat.Sites[0], false},
		{[]catalog.Kind{catalog.KindCrash}, &cat.Sites[0], false},
		{[]catalog.Kind{catalog.KindReboot}, &cat.Sites[0], true},
		{[]catalog.Kind{catalog.KindReboot}, &net, true},
		{[]catalog.Kind{catalog.KindReboot}, &cat.Sites[1], false}, // cannot crash
	} {
		env := Env{Catalog: cat, Kinds: tc.kinds}
		got := false
		for _, f := range env.faults(tc.site) {
			got = got || f.Kind == catalog.KindReboot
		}
		if got != tc.want {
			t.Errorf("kinds %v at %s: reboot offered %v, want %v", tc.kinds, tc.site.ID, got, tc.want)
		}
	}
	f, err := faultOf(&cat.Sites[0], record.Injection{Kind: catalog.KindReboot})
	if err != nil || f.Kind != catalog.KindReboot {
		t.Errorf("faultOf(reboot) = %v, %v", f, err)
	}
}

func TestPlanWithin(t *testing.T) {
	for _, tc := range []struct {
		name         string
		sites, reach []uint32
		want         []uint32
	}{
		{"kept in order", []uint32{1, 3, 5, 7}, []uint32{7, 3}, []uint32{3, 7}},
		{"reach outside the plan", []uint32{1}, []uint32{2}, []uint32{}},
		{"empty reach", []uint32{1, 2}, nil, []uint32{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan{Sites: tc.sites, Stacks: true}
			got := p.Within(tc.reach)
			if len(got.Sites) != len(tc.want) || (len(tc.want) > 0 && !slices.Equal(got.Sites, tc.want)) || !got.Stacks {
				t.Errorf("Within = %+v, want sites %v and Stacks kept", got, tc.want)
			}
			if len(tc.sites) > 0 && len(p.Sites) != len(tc.sites) {
				t.Errorf("Within changed the plan it was called on: %v", p.Sites)
			}
		})
	}
}
