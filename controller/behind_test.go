package controller

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
)

// behindCatalog is partitionCatalog with a delay site (4, a WAL sync) and
// an observation point whose variables are a term and a commit index.
func behindCatalog() *catalog.Catalog {
	cat := partitionCatalog()
	cat.Sites = append(cat.Sites, catalog.Site{Index: 4, ID: "p.(*WAL).Sync#0", Kind: catalog.KindDelay, IO: "disk"})
	cat.ObservePoints = []catalog.ObservePoint{{Index: 0, ID: "observe:p.(*raft).Step", When: catalog.ObserveHandled,
		Vars: []catalog.ObserveVar{{Name: "msg.Term"}, {Name: "msg.Commit"}}}}
	cat.Hash = cat.ComputeHash()
	return cat
}

// commitSeenAt is an observation of a message carrying commit index c (and
// a term far above it, which is no commit index) at t0+at.
func commitSeenAt(at time.Duration, c int64) wire.Event {
	return wire.Event{Kind: wire.EvObserve, Time: t0.Add(at).UnixNano(), A: 0, B: 3, C: 1, D: 2, Data: wire.AppendValues(nil, []int64{999, c})}
}

// TestSessionHeldBehind: every held shape — a partition, a disconnect, a
// one-way cut, a split and a delay — held until its cut members are N
// entries behind ("behind=N") ends the moment the commit index observed
// at a member other than the cut ones passes what the cut members had
// when it began by N; observations of the cut members themselves never
// count (neither toward the others' index nor as its base), and a cut
// member that observed none before counts from the others' index at the
// start, or their first after it (a zero, a message that carries none,
// is none). Its record says how far behind and
// its real length; one never met ends at its cap at the next
// observation. While it is on, the plans of the members other than the
// cut ones ask for observations (wire.FlagObserve) though the policy's
// plan does not, and lose them when it ends; the observations that flow
// only for it are not recorded.
//
// The fault strikes n3's dial to n1 (or its WAL sync) while n2, a member
// no shape cuts, observes; the cut members are n3, and n1 too for a
// disconnect.
func TestSessionHeldBehind(t *testing.T) {
	cat := behindCatalog()
	const sync = uint32(4)
	const n1, n2, n3 = PeerID(1), PeerID(2), PeerID(3)
	addrs := map[PeerID]string{n1: "127.0.0.1:4001", n2: "127.0.0.1:4002", n3: "127.0.0.1:4003"}
	observe := func(id PeerID, at time.Duration, c int64) func(s *session) []Effect {
		return func(s *session) []Effect { return s.events(id, []wire.Event{commitSeenAt(at, c)}) }
	}
	shapes := []catalog.Kind{catalog.KindPartition, catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit, catalog.KindDelay}
	for _, tc := range []struct {
		name   string
		before []func(s *session) []Effect // before the fault
		after  []func(s *session) []Effect // after it, at t0
		met    string                      // "": ended at the cap; {who} {was} {when} filled by shape
		length time.Duration
	}{
		{"past the cut member's own index by N; its own observations do not count",
			[]func(*session) []Effect{observe(n3, -time.Second, 100), observe(n2, -time.Second, 100)},
			[]func(*session) []Effect{observe(n3, time.Second, 200), observe(n2, 2*time.Second, 115), observe(n2, 3*time.Second, 125)},
			"{who} {was} 25 entries behind: commit 125 at the others, 100 at {who} {when}", 3 * time.Second},
		{"none of its own: from the others' index at the start",
			[]func(*session) []Effect{observe(n2, -time.Second, 100)},
			[]func(*session) []Effect{observe(n3, time.Second, 300), observe(n2, 2*time.Second, 120)},
			"{who} {was} 20 entries behind: commit 120 at the others, 100 at the others {when}", 2 * time.Second},
		{"none at all before: from the others' first after the start",
			nil,
			[]func(*session) []Effect{observe(n3, 500*time.Millisecond, 300), observe(n2, 700*time.Millisecond, 0), observe(n2, time.Second, 150), observe(n2, 2*time.Second, 160), observe(n2, 4*time.Second, 171)},
			"{who} {was} 21 entries behind: commit 171 at the others, 150 at the others {when}", 4 * time.Second},
		{"below N: ended at the cap, at the next observation",
			[]func(*session) []Effect{observe(n3, -time.Second, 100)},
			[]func(*session) []Effect{observe(n2, 2*time.Second, 119), observe(n2, 11*time.Second, 119)},
			"", 10 * time.Second},
		{"met only past the cap: ended at the cap",
			[]func(*session) []Effect{observe(n3, -time.Second, 100)},
			[]func(*session) []Effect{observe(n2, 11*time.Second, 140)},
			"", 10 * time.Second},
	} {
		for _, k := range shapes {
			t.Run(tc.name+"/"+k.String(), func(t *testing.T) {
				site := uint32(1)
				if k == catalog.KindDelay {
					site = sync
				}
				pol := &scripted{plan: policy.Plan{Sites: []uint32{site}}, script: []policy.Fault{{Kind: k, Delay: 10 * time.Second, Until: "behind=20"}}, done: true}
				s, seq := heldSession(t, cat, pol)
				s.setAddresses(map[string]string{addrs[n1]: "n1", addrs[n2]: "n2", addrs[n3]: "n3"})
				for _, f := range tc.before {
					if effs := f(s); len(effs) != 0 {
						t.Fatalf("an observation before any hold: effects %v", effs)
					}
				}
				cutMembers := []PeerID{n3}
				if k == catalog.KindDisconnect {
					cutMembers = append(cutMembers, n1)
				}
				resp, effs := s.request(n3, &wire.Request{ID: 1, Site: site, Peer: addrs[n1]}, t0)
				if resp.Action == wire.ActNone {
					t.Fatalf("the fault did not start: %+v", resp)
				}
				start := plans(t, effs, seq)
				for _, id := range []PeerID{n1, n2, n3} {
					p, ok := start[id]
					if !ok {
						t.Fatalf("the start gave no plan to peer %d: %v", id, start)
					}
					if obs := p.Flags&wire.FlagObserve != 0; obs == slices.Contains(cutMembers, id) {
						t.Errorf("peer %d's plan at the start asks for observations: %v", id, obs)
					}
				}
				var last map[PeerID]wire.Plan
				for _, f := range tc.after {
					if got := plans(t, f(s), seq); len(got) > 0 {
						last = got
					}
				}
				if len(s.holds) != 0 {
					t.Fatalf("%d holds left, want the hold ended", len(s.holds))
				}
				for _, id := range []PeerID{n1, n2, n3} {
					p, ok := last[id]
					if !ok {
						t.Fatalf("the end gave no plan to peer %d: %v", id, last)
					}
					if p.Flags&wire.FlagObserve != 0 || len(p.Holding) != 0 {
						t.Errorf("peer %d's plan after the end %+v: still observing or holding", id, p)
					}
				}
				res, _ := s.end()
				in := res.Injections[0]
				want := tc.met
				if want != "" {
					who, was, when := "n3", "was", "when cut"
					if k == catalog.KindDisconnect {
						who, was = "n3, n1", "were"
					}
					if k == catalog.KindDelay {
						when = "when its call was held"
					}
					want = strings.NewReplacer("{who}", who, "{was}", was, "{when}", when).Replace(want)
				}
				if in.Kind != k || in.Until != "behind=20" || in.Cap != 10*time.Second || in.Met != want || in.Delay != tc.length {
					t.Errorf("injection %s until %q cap %s met %q length %s; want %s, behind=20, 10s, %q, %s", in.Kind, in.Until, in.Cap, in.Met, in.Delay, k, want, tc.length)
				}
				if !strings.HasPrefix(in.Held(), " until 20 entries behind (") {
					t.Errorf("Held() = %q", in.Held())
				}
				if len(res.Observations) != 0 {
					t.Errorf("%d observations recorded, want none: the policy's plan asked for none", len(res.Observations))
				}
			})
		}
	}
}

// TestHeldBehindObservesOnlyWhileOn: a session whose holds are no
// "behind=N" ones never asks for observations; one whose policy's plan
// asks for them (cofi) records every observation, a "behind=N" hold's
// included, and keeps asking after it ended.
func TestHeldBehindObservesOnlyWhileOn(t *testing.T) {
	cat := behindCatalog()
	for _, tc := range []struct {
		name    string
		until   string
		observe bool // the policy's plan
	}{
		{"another condition", "requests=3", false},
		{"the policy observes", "behind=20", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := &scripted{plan: policy.Plan{Sites: []uint32{2}, Observe: tc.observe}, script: []policy.Fault{{Kind: catalog.KindPartition, Delay: 10 * time.Second, Until: tc.until}}, done: true}
			s, seq := heldSession(t, cat, pol)
			resp, effs := s.request(3, &wire.Request{ID: 1, Site: 2}, t0)
			if resp.Action != wire.ActStall {
				t.Fatalf("the cut did not start: %+v", resp)
			}
			all := plans(t, effs, seq)
			for _, f := range []wire.Event{commitSeenAt(time.Second, 100), commitSeenAt(2*time.Second, 130)} {
				for id, p := range plans(t, s.events(1, []wire.Event{f}), seq) {
					all[id] = p
				}
			}
			for id, p := range all {
				if obs := p.Flags&wire.FlagObserve != 0; obs != tc.observe {
					t.Errorf("peer %d's plan %+v: observing %v, want %v", id, p, obs, tc.observe)
				}
			}
			res, _ := s.end()
			if n, want := len(res.Observations), map[bool]int{true: 2}[tc.observe]; n != want {
				t.Errorf("%d observations recorded, want %d", n, want)
			}
		})
	}
}

// TestCommitIndex: the commit index of an observation is the highest value
// of a variable whose name says it holds one, whatever else it observed;
// zero is none.
func TestCommitIndex(t *testing.T) {
	pt := &catalog.ObservePoint{Vars: []catalog.ObserveVar{{Name: "msg.Term"}, {Name: "msg.LeaderCommitIndex"}, {Name: "node.getCommitIndex()"}}}
	if c, ok := commitIndex(pt, []int64{999, 40, 38}); !ok || c != 40 {
		t.Errorf("commitIndex = %d, %v; want 40", c, ok)
	}
	if _, ok := commitIndex(&catalog.ObservePoint{Vars: []catalog.ObserveVar{{Name: "msg.Term"}}}, []int64{3}); ok {
		t.Error("a point without a commit index gave one")
	}
	if _, ok := commitIndex(pt, []int64{999}); ok {
		t.Error("values cut short gave a commit index")
	}
	if _, ok := commitIndex(pt, []int64{999, 0, 0}); ok {
		t.Error("a message that carries no commit index (zero) gave one")
	}
}
