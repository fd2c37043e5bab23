package controller

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// heldSession is an armed session of members n1, n2 and n3 (agent
// connections 1, 2 and 3) under pol, and the sequence number of its last
// plan.
func heldSession(t *testing.T, cat *catalog.Catalog, pol *scripted) (*session, *uint64) {
	t.Helper()
	s := newSession(cat, TrialSpec{ID: "t1", Nodes: []string{"n1", "n2", "n3"}}, pol.plan, pol.Decide)
	for i, n := range []string{"n1", "n2", "n3"} {
		s.attach(PeerID(i+1), n, wire.RoleAgent, true)
	}
	seq := uint64(3)
	plans(t, s.arm(), &seq)
	return s, &seq
}

// planOf returns peer id's plan among got, the plans that what gave,
// failing the test when it gave id none.
func planOf(t *testing.T, got map[PeerID]wire.Plan, id PeerID, what string) wire.Plan {
	t.Helper()
	p, ok := got[id]
	if !ok {
		t.Fatalf("%s gave no plan to peer %d: %v", what, id, got)
	}
	return p
}

// TestSessionHeldCut: a partition held until a condition heals the moment
// the condition holds — leadership moved to another member, or the other
// members' clients made K more requests that succeeded (the cut member's
// own clients do not count) — its record then saying what met it and its
// real length; one whose condition never comes heals at its cap, saying
// so.
func TestSessionHeldCut(t *testing.T) {
	cat := partitionCatalog()
	cat.Role = &catalog.Role{Pkg: "p", Type: "raft", Field: "state",
		Values: []catalog.RoleValue{{Value: 0, Name: "StateFollower"}, {Value: 2, Name: "StateLeader"}}}
	cat.Hash = cat.ComputeHash()
	const n1, n2, n3 = PeerID(1), PeerID(2), PeerID(3)
	role := func(ns int64, v uint64) wire.Event {
		return wire.Event{Kind: wire.EvRole, Time: t0.UnixNano() + ns, A: v}
	}
	success := func(client string, at time.Duration) wire.Event {
		data, _ := json.Marshal(record.ClientEvent{Time: t0.Add(at), Client: client, Kind: record.EvProgress, Msg: "put k"})
		return wire.Event{Kind: wire.EvWorkload, Time: t0.Add(at).UnixNano(), Data: data}
	}
	for _, tc := range []struct {
		name   string
		until  string
		events func(s *session)
		met    string
		length time.Duration
	}{
		{"until the leader moved", "leader", func(s *session) {
			s.events(n2, []wire.Event{role(int64(2*time.Second), 2)}) // n2 takes over from n1
		}, "n2 became StateLeader", 2 * time.Second},
		{"the old leader leading again is no move", "leader", func(s *session) {
			s.events(n1, []wire.Event{role(int64(time.Second), 0), role(int64(2*time.Second), 2)})
		}, "", 10 * time.Second},
		{"until 3 more requests of the others", "requests=3", func(s *session) {
			s.events(n3, []wire.Event{success("n3/0", 500*time.Millisecond), success("n3/0", 600*time.Millisecond), success("n3/0", 700*time.Millisecond)}) // the cut member's own
			s.events(n1, []wire.Event{success("n1/0", time.Second), success("n2/0", 2*time.Second), success("n1/0", 4*time.Second)})
		}, "the other members' clients made 3 requests that succeeded", 4 * time.Second},
		{"a condition that never comes: healed at the cap", "requests=100", func(s *session) {
			s.events(n1, []wire.Event{success("n1/0", time.Second)})
		}, "", 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := &scripted{plan: policy.Plan{Sites: []uint32{2}}, script: []policy.Fault{{Kind: catalog.KindPartition, Delay: 10 * time.Second, Until: tc.until}}, done: true}
			s, _ := heldSession(t, cat, pol)
			s.events(n1, []wire.Event{role(0, 2)}) // n1 leads
			s.events(n2, []wire.Event{role(0, 0)})
			s.events(n3, []wire.Event{role(0, 0)})
			if resp, _ := s.request(n3, &wire.Request{ID: 1, Site: 2}, t0); resp.Action != wire.ActStall {
				t.Fatalf("the cut did not start: %+v", resp)
			}
			tc.events(s)
			_, cut := s.cuts["n3"]
			if healed := !cut; healed != (tc.met != "") {
				t.Fatalf("healed %v, want %v", healed, tc.met != "")
			}
			if !cut {
				// Healed: a peer request now goes through.
				if resp, _ := s.request(n3, &wire.Request{ID: 2, Site: 1}, t0.Add(5*time.Second)); resp.Action != wire.ActNone {
					t.Errorf("dial after the heal: %+v", resp)
				}
			} else if resp, _ := s.request(n3, &wire.Request{ID: 2, Site: 1}, t0.Add(10*time.Second)); resp.Action != wire.ActNone {
				t.Errorf("dial at the cap: %+v, want the heal", resp)
			}
			res, _ := s.end()
			in := res.Injections[0]
			if in.Until != tc.until || in.Cap != 10*time.Second || in.Met != tc.met || in.Delay != tc.length {
				t.Errorf("injection until %q cap %s met %q length %s; want %q, 10s, %q, %s", in.Until, in.Cap, in.Met, in.Delay, tc.until, tc.met, tc.length)
			}
			if in.Held() == "" {
				t.Errorf("Held() is empty for %+v", in)
			}
		})
	}
}

// TestPrintedEvents: an event the workload printed on its stdout counts
// live as one sent over the connection — the client's progress, the
// requests a held cut waits for, ClientEvents — but stays out of the
// trial's Result, which the runner merges what it read into.
func TestPrintedEvents(t *testing.T) {
	pol := &scripted{plan: policy.Plan{Sites: []uint32{2}}, script: []policy.Fault{{Kind: catalog.KindPartition, Delay: 10 * time.Second, Until: "requests=2"}}, done: true}
	c, err := Listen("unix", sockPath(t), Options{Catalog: partitionCatalog(), Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tr, err := c.BeginTrial(TrialSpec{ID: "t1", Nodes: []string{"n1", "n2"}})
	if err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	s := tr.s
	s.attach(1, "n1", wire.RoleAgent, true)
	s.attach(2, "n2", wire.RoleAgent, true)
	s.arm()
	if resp, _ := s.request(2, &wire.Request{ID: 1, Site: 2}, t0); resp.Action != wire.ActStall {
		t.Fatalf("the cut did not start: %+v", resp)
	}
	tr.mu.Unlock()
	for i := range 2 {
		tr.Printed(record.ClientEvent{Time: t0.Add(time.Duration(i+1) * time.Second), Client: "n1/0", Kind: record.EvProgress, Msg: "put k"})
	}
	if _, ok := tr.LastProgress()["n1/0"]; !ok {
		t.Errorf("printed progress not counted: %v", tr.LastProgress())
	}
	if n := len(tr.ClientEvents()); n != 2 {
		t.Errorf("ClientEvents: %d events, want the 2 printed", n)
	}
	tr.mu.Lock()
	_, cut := s.cuts["n2"]
	tr.mu.Unlock()
	if cut {
		t.Error("the cut held until 2 requests did not heal on 2 printed ones")
	}
	res := tr.End()
	if len(res.Client) != 0 {
		t.Errorf("Result.Client holds %d printed events, want none (the runner merges them)", len(res.Client))
	}
	if res.Injections[0].Met == "" {
		t.Errorf("injection %+v, want what met it", res.Injections[0])
	}
}

// TestSessionHeldSite: a partition held until a member other than the cut
// one reached a site ("site=S") makes the sites whose ID contains S live
// in the other members' plans while it lasts, whatever the policy's plan
// says, and heals the moment one of them reaches one, its record saying
// who reached what; the cut member's own reach does not count; one never
// reached, or reached only after the cap, heals at its cap. A request
// live only for the watch never reaches the policy; one at a site the
// policy's plan has live too is asked about as before.
func TestSessionHeldSite(t *testing.T) {
	cat := partitionCatalog()
	cat.Sites = append(cat.Sites, catalog.Site{Index: 4, ID: "p.(*Node).writeSnapshot:os.Rename#0", Kind: catalog.KindError, IO: "disk", Errors: []catalog.ErrorValue{{Name: "EIO"}}})
	cat.Hash = cat.ComputeHash()
	const snap = uint32(4)
	const n1, n2, n3 = PeerID(1), PeerID(2), PeerID(3)
	for _, tc := range []struct {
		name   string
		until  string
		policy []uint32 // the policy's plan; not done after the cut when it has the watched site
		reach  []PeerID // who reaches the snapshot site, 1 s apart from 2 s on
		met    string
		length time.Duration
		asked  int // the policy's requests, the cut's included
	}{
		{"reached by another member", "site=writeSnapshot", []uint32{2}, []PeerID{n1},
			"n1 reached p.(*Node).writeSnapshot:os.Rename#0", 2 * time.Second, 1},
		{"not by the cut member itself", "site=writeSnapshot", []uint32{2}, []PeerID{n3, n2},
			"n2 reached p.(*Node).writeSnapshot:os.Rename#0", 3 * time.Second, 1},
		{"never reached: healed at the cap", "site=writeSnapshot", []uint32{2}, []PeerID{n3}, "", 10 * time.Second, 1},
		{"reached after the cap: healed at the cap", "site=writeSnapshot", []uint32{2}, []PeerID{n3, n3, n3, n3, n3, n3, n3, n3, n3, n1}, "", 10 * time.Second, 1},
		{"the policy's own site: asked as before", "site=Rename", []uint32{2, snap}, []PeerID{n2},
			"n2 reached p.(*Node).writeSnapshot:os.Rename#0", 2 * time.Second, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ownSite := len(tc.policy) > 1
			pol := &scripted{plan: policy.Plan{Sites: tc.policy}, script: []policy.Fault{{Kind: catalog.KindPartition, Delay: 10 * time.Second, Until: tc.until}}, done: !ownSite}
			s, seq := heldSession(t, cat, pol)
			resp, effs := s.request(n3, &wire.Request{ID: 1, Site: 2}, t0)
			if resp.Action != wire.ActStall {
				t.Fatalf("the cut did not start: %+v", resp)
			}
			got := plans(t, effs, seq)
			for _, id := range []PeerID{n1, n2, n3} {
				p := planOf(t, got, id, "the cut")
				if live := slices.Contains(p.Sites, snap); live != (id != n3 || ownSite) {
					t.Errorf("peer %d's plan %v: the watched site live %v", id, p.Sites, live)
				}
			}
			for i, id := range tc.reach {
				at := t0.Add(2*time.Second + time.Duration(i)*time.Second)
				resp, effs := s.request(id, &wire.Request{ID: uint64(10 + i), Site: snap}, at)
				if resp.Action != wire.ActNone {
					t.Errorf("request at the watched site: %+v, want no fault", resp)
				}
				if _, cut := s.cuts["n3"]; !cut {
					for pid, p := range plans(t, effs, seq) {
						if slices.Contains(p.Sites, snap) && !ownSite {
							t.Errorf("peer %d's plan after the heal %v still watches the site", pid, p.Sites)
						}
					}
					break
				}
			}
			if _, cut := s.cuts["n3"]; cut && tc.met != "" {
				t.Fatal("not healed when the site was reached")
			}
			if n := pol.requests(); n != tc.asked {
				t.Errorf("the policy was asked %d times, want %d", n, tc.asked)
			}
			if resp, _ := s.request(n3, &wire.Request{ID: 99, Site: 1}, t0.Add(10*time.Second)); resp.Action != wire.ActNone {
				t.Errorf("dial after the heal or at the cap: %+v", resp)
			}
			res, _ := s.end()
			in := res.Injections[0]
			if in.Until != tc.until || in.Cap != 10*time.Second || in.Met != tc.met || in.Delay != tc.length {
				t.Errorf("injection until %q cap %s met %q length %s; want %q, 10s, %q, %s", in.Until, in.Cap, in.Met, in.Delay, tc.until, tc.met, tc.length)
			}
			sub := strings.TrimPrefix(tc.until, "site=")
			want := " until another member reached " + sub + " (" + tc.met + ")"
			if tc.met == "" {
				want = " until another member reached " + sub + " (not met: healed at its 10s cap)"
			}
			if in.Held() != want {
				t.Errorf("Held() = %q, want %q", in.Held(), want)
			}
		})
	}
}

// TestHoldSites: "site=S" watches the sites whose stable ID contains S;
// any other condition, or an S that none contains, watches none.
func TestHoldSites(t *testing.T) {
	cat := partitionCatalog()
	for _, tc := range []struct {
		until string
		want  []uint32
	}{
		{"site=RoundTrip", []uint32{1}},
		{"site=t.", []uint32{1, 2, 3}},
		{"site=SaveSnap", nil},
		{"site=", nil},
		{"leader", nil},
		{"requests=3", nil},
	} {
		if got := HoldSites(cat, tc.until); !slices.Equal(got, tc.want) {
			t.Errorf("HoldSites(%q) = %v, want %v", tc.until, got, tc.want)
		}
	}
}

// TestSessionHeldArcs: a disconnect, a one-way cut and a split held until
// a condition heal every arc at once the moment it holds, as a held
// partition does, counting only what the members other than the cut ones
// did — both ends of a disconnect, the struck member of a one-way cut,
// the struck side of a split: leadership moved, K more requests of the
// others' clients succeeded, another member reached a watched site. The
// calls across the arcs then run again, and the record says what met the
// condition and the real length. One whose condition never comes heals
// at its cap, lazily as a fixed cut does, and leaves no hold behind: a
// "site=S" hold no longer keeps the site live in the others' plans.
//
// The fault strikes n3's dial to n1 while n1 leads; the cut members are
// n3 and n1 (disconnect) or n3 alone (one-way, split of n3 from n1, n2).
func TestSessionHeldArcs(t *testing.T) {
	cat := partitionCatalog()
	cat.Sites = append(cat.Sites, catalog.Site{Index: 4, ID: "p.(*Node).writeSnapshot:os.Rename#0", Kind: catalog.KindError, IO: "disk", Errors: []catalog.ErrorValue{{Name: "EIO"}}})
	cat.Role = &catalog.Role{Pkg: "p", Type: "raft", Field: "state",
		Values: []catalog.RoleValue{{Value: 0, Name: "StateFollower"}, {Value: 2, Name: "StateLeader"}}}
	cat.Hash = cat.ComputeHash()
	const snap = uint32(4)
	const n1, n2, n3 = PeerID(1), PeerID(2), PeerID(3)
	addrs := map[PeerID]string{n1: "127.0.0.1:4001", n2: "127.0.0.1:4002", n3: "127.0.0.1:4003"}
	role := func(at time.Duration, v uint64) wire.Event {
		return wire.Event{Kind: wire.EvRole, Time: t0.Add(at).UnixNano(), A: v}
	}
	success := func(client string, at time.Duration) wire.Event {
		data, _ := json.Marshal(record.ClientEvent{Time: t0.Add(at), Client: client, Kind: record.EvProgress, Msg: "put k"})
		return wire.Event{Kind: wire.EvWorkload, Time: t0.Add(at).UnixNano(), Data: data}
	}
	// reach has the members reach the watched site, 1 s apart from 2 s on.
	reach := func(ids ...PeerID) func(s *session) {
		return func(s *session) {
			for i, id := range ids {
				at := t0.Add(2*time.Second + time.Duration(i)*time.Second)
				if resp, _ := s.request(id, &wire.Request{ID: uint64(10 + i), Site: snap}, at); resp.Action != wire.ActNone {
					t.Errorf("request at the watched site: %+v, want no fault", resp)
				}
			}
		}
	}
	type want struct {
		met    string
		length time.Duration
	}
	shapes := []catalog.Kind{catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit}
	for _, tc := range []struct {
		name   string
		until  string
		events func(s *session)
		want   map[catalog.Kind]want // by shape; "" met: healed at the cap
	}{
		{"until the leader moved", "leader", func(s *session) {
			s.events(n2, []wire.Event{role(2*time.Second, 2)})
		}, map[catalog.Kind]want{
			catalog.KindDisconnect: {"n2 became StateLeader", 2 * time.Second},
			catalog.KindOneWay:     {"n2 became StateLeader", 2 * time.Second},
			catalog.KindSplit:      {"n2 became StateLeader", 2 * time.Second},
		}},
		{"until 3 more requests of the members not cut", "requests=3", func(s *session) {
			s.events(n3, []wire.Event{success("n3/0", 500*time.Millisecond), success("n3/0", 600*time.Millisecond), success("n3/0", 700*time.Millisecond)})
			s.events(n1, []wire.Event{success("n1/0", time.Second), success("n2/0", 2*time.Second), success("n2/0", 3*time.Second), success("n2/0", 4*time.Second)})
		}, map[catalog.Kind]want{
			catalog.KindDisconnect: {"the other members' clients made 3 requests that succeeded", 4 * time.Second}, // n1's client is a cut member's
			catalog.KindOneWay:     {"the other members' clients made 3 requests that succeeded", 3 * time.Second},
			catalog.KindSplit:      {"the other members' clients made 3 requests that succeeded", 3 * time.Second},
		}},
		{"until a member not cut reached the site", "site=writeSnapshot", reach(n3, n1, n2), map[catalog.Kind]want{
			catalog.KindDisconnect: {"n2 reached p.(*Node).writeSnapshot:os.Rename#0", 4 * time.Second}, // n1 is cut too
			catalog.KindOneWay:     {"n1 reached p.(*Node).writeSnapshot:os.Rename#0", 3 * time.Second},
			catalog.KindSplit:      {"n1 reached p.(*Node).writeSnapshot:os.Rename#0", 3 * time.Second},
		}},
		{"requests never made: healed at the cap", "requests=100", func(s *session) {
			s.events(n2, []wire.Event{success("n2/0", time.Second)})
		}, nil},
		{"a site never reached by another: healed at the cap, the watch with it", "site=writeSnapshot", reach(n3), nil},
	} {
		for _, k := range shapes {
			t.Run(tc.name+"/"+k.String(), func(t *testing.T) {
				pol := &scripted{plan: policy.Plan{Sites: []uint32{1}}, script: []policy.Fault{{Kind: k, Delay: 10 * time.Second, Until: tc.until}}, done: true}
				s, seq := heldSession(t, cat, pol)
				s.setAddresses(map[string]string{addrs[n1]: "n1", addrs[n2]: "n2", addrs[n3]: "n3"})
				s.events(n1, []wire.Event{role(0, 2)}) // n1 leads
				s.events(n2, []wire.Event{role(0, 0)})
				s.events(n3, []wire.Event{role(0, 0)})
				resp, effs := s.request(n3, &wire.Request{ID: 1, Site: 1, Peer: addrs[n1]}, t0)
				if resp.Action != wire.ActError {
					t.Fatalf("the cut did not start: %+v", resp)
				}
				watching := HoldSites(cat, tc.until) != nil
				for id, p := range plans(t, effs, seq) {
					if live := slices.Contains(p.Sites, snap); live != (watching && id != n3 && (id != n1 || k != catalog.KindDisconnect)) {
						t.Errorf("peer %d's plan %v at the start: the watched site live %v", id, p.Sites, live)
					}
				}
				tc.events(s)
				w, met := tc.want[k]
				if met != (len(s.arcs) == 0) || met != (len(s.holds) == 0) {
					t.Fatalf("arcs %v, holds %d: want healed %v, every arc at once", s.arcs, len(s.holds), met)
				}
				at := t0.Add(5 * time.Second)
				if !met {
					// At the cap the cut heals lazily, at the first call
					// across it, and its hold with it.
					w.length, at = 10*time.Second, t0.Add(10*time.Second)
				}
				resp, effs = s.request(n3, &wire.Request{ID: 2, Site: 1, Peer: addrs[n1]}, at)
				if resp.Action != wire.ActNone {
					t.Errorf("n3's dial to n1 after the heal: %+v", resp)
				}
				for id, p := range plans(t, effs, seq) {
					if slices.Contains(p.Sites, snap) {
						t.Errorf("peer %d's plan after the heal %v still watches the site", id, p.Sites)
					}
				}
				if len(s.arcs) != 0 || len(s.holds) != 0 {
					t.Fatalf("after the heal: arcs %v, %d holds; want none", s.arcs, len(s.holds))
				}
				if resp, _ := s.request(n1, &wire.Request{ID: 3, Site: 1, Peer: addrs[n3]}, at); resp.Action != wire.ActNone {
					t.Errorf("n1's dial to n3 after the heal: %+v", resp)
				}
				reach(n2)(s) // no hold left: the reach changes nothing
				res, _ := s.end()
				in := res.Injections[0]
				if in.Kind != k || in.Until != tc.until || in.Cap != 10*time.Second || in.Met != w.met || in.Delay != w.length {
					t.Errorf("injection %s until %q cap %s met %q length %s; want %s, %q, 10s, %q, %s", in.Kind, in.Until, in.Cap, in.Met, in.Delay, k, tc.until, w.met, w.length)
				}
				if in.Held() == "" {
					t.Errorf("Held() is empty for %+v", in)
				}
			})
		}
	}
}

// TestSessionHeldDelay: a delay held until a condition sleeps its call
// (wire.ActHold, the cap as Arg) while its connection's plan lists it
// (wire.Plan.Holding, in the plan that goes out ahead of the response),
// and wakes it the moment the condition holds — leadership moved, the
// other members' clients made K more requests that succeeded, another
// member reached a watched site — with a plan that no longer lists it,
// its record then saying what met it and its real length. What the
// delayed member does itself never counts: its own clients' requests,
// its own reach of the site. One whose condition never comes ends at its
// cap, the call waking by itself; a later match changes nothing and ends
// the hold. A delay without a condition is a fixed one (wire.ActDelay).
//
// The delay strikes n3's WAL sync while n1 leads.
func TestSessionHeldDelay(t *testing.T) {
	cat := partitionCatalog()
	cat.Sites = append(cat.Sites,
		catalog.Site{Index: 4, ID: "p.(*WAL).Sync#0", Kind: catalog.KindDelay, IO: "disk"},
		catalog.Site{Index: 5, ID: "p.(*Node).writeSnapshot:os.Rename#0", Kind: catalog.KindError, IO: "disk", Errors: []catalog.ErrorValue{{Name: "EIO"}}})
	cat.Role = &catalog.Role{Pkg: "p", Type: "raft", Field: "state",
		Values: []catalog.RoleValue{{Value: 0, Name: "StateFollower"}, {Value: 2, Name: "StateLeader"}}}
	cat.Hash = cat.ComputeHash()
	const sync, snap = uint32(4), uint32(5)
	const n1, n2, n3 = PeerID(1), PeerID(2), PeerID(3)
	const call = uint64(7) // the delayed call's request
	role := func(at time.Duration, v uint64) wire.Event {
		return wire.Event{Kind: wire.EvRole, Time: t0.Add(at).UnixNano(), A: v}
	}
	success := func(client string, at time.Duration) wire.Event {
		data, _ := json.Marshal(record.ClientEvent{Time: t0.Add(at), Client: client, Kind: record.EvProgress, Msg: "put k"})
		return wire.Event{Kind: wire.EvWorkload, Time: t0.Add(at).UnixNano(), Data: data}
	}
	// reach has the members reach the watched site, 1 s apart from 2 s on.
	reach := func(ids ...PeerID) func(s *session) []Effect {
		return func(s *session) []Effect {
			var effs []Effect
			for i, id := range ids {
				resp, e := s.request(id, &wire.Request{ID: uint64(10 + i), Site: snap}, t0.Add(2*time.Second+time.Duration(i)*time.Second))
				if resp.Action != wire.ActNone {
					t.Errorf("request at the watched site: %+v, want no fault", resp)
				}
				effs = append(effs, e...)
			}
			return effs
		}
	}
	events := func(id PeerID, evs ...wire.Event) func(s *session) []Effect {
		return func(s *session) []Effect { return s.events(id, evs) }
	}
	for _, tc := range []struct {
		name   string
		until  string
		events func(s *session) []Effect
		met    string // "": not met, ended at the cap
		length time.Duration
	}{
		{"until the leader moved", "leader", events(n2, role(2*time.Second, 2)),
			"n2 became StateLeader", 2 * time.Second},
		{"the leader leading again is no move", "leader", events(n1, role(time.Second, 0), role(2*time.Second, 2)),
			"", 10 * time.Second},
		{"until 3 more requests of the others, not its own clients'", "requests=3", func(s *session) []Effect {
			effs := s.events(n3, []wire.Event{success("n3/0", 500*time.Millisecond), success("n3/0", 600*time.Millisecond), success("n3/0", 700*time.Millisecond)})
			return append(effs, s.events(n1, []wire.Event{success("n1/0", time.Second), success("n2/0", 2*time.Second), success("n1/0", 4*time.Second)})...)
		}, "the other members' clients made 3 requests that succeeded", 4 * time.Second},
		{"until another member reached the site, not itself", "site=writeSnapshot", reach(n3, n2),
			"n2 reached p.(*Node).writeSnapshot:os.Rename#0", 3 * time.Second},
		{"never met: ended at the cap", "requests=100", events(n1, success("n1/0", time.Second)),
			"", 10 * time.Second},
		{"a site never reached by another: ended at the cap", "site=writeSnapshot", reach(n3),
			"", 10 * time.Second},
		{"no condition: a fixed delay", "", nil, "", 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := &scripted{plan: policy.Plan{Sites: []uint32{sync}}, script: []policy.Fault{{Kind: catalog.KindDelay, Delay: 10 * time.Second, Until: tc.until}}, done: true}
			s, seq := heldSession(t, cat, pol)
			s.events(n1, []wire.Event{role(0, 2)}) // n1 leads
			s.events(n2, []wire.Event{role(0, 0)})
			s.events(n3, []wire.Event{role(0, 0)})
			resp, effs := s.request(n3, &wire.Request{ID: call, Site: sync}, t0)
			if tc.until == "" {
				if resp.Action != wire.ActDelay || resp.Arg != int64(10*time.Second) || len(s.holds) != 0 {
					t.Fatalf("a fixed delay: %+v, %d holds; want ActDelay of 10s, none", resp, len(s.holds))
				}
				return
			}
			if resp.Action != wire.ActHold || resp.Arg != int64(10*time.Second) {
				t.Fatalf("response %+v, want ActHold capped at 10s", resp)
			}
			watching := HoldSites(cat, tc.until) != nil
			start := plans(t, effs, seq)
			if _, ok := start[n3]; !ok {
				t.Fatalf("no plan for n3 ahead of the response: %v", effs)
			}
			for id, p := range start {
				if holds := slices.Equal(p.Holding, []uint64{call}); holds != (id == n3) {
					t.Errorf("peer %d's plan at the start holds %v", id, p.Holding)
				}
				if live := slices.Contains(p.Sites, snap); live != (watching && id != n3) {
					t.Errorf("peer %d's plan %v at the start: the watched site live %v", id, p.Sites, live)
				}
			}
			got := plans(t, tc.events(s), seq)
			p, woken := got[n3]
			if woken = woken && len(p.Holding) == 0; woken != (tc.met != "") {
				t.Fatalf("n3 woken %v (plans %v), want %v", woken, got, tc.met != "")
			}
			for id, p := range got {
				if slices.Contains(p.Sites, snap) {
					t.Errorf("peer %d's plan after the wake %v still watches the site", id, p.Sites)
				}
			}
			if tc.met == "" {
				// Past the cap the call woke by itself: a match then
				// changes nothing and ends the hold.
				s.events(n2, []wire.Event{role(11*time.Second, 2)})
				s.request(n1, &wire.Request{ID: 20, Site: snap}, t0.Add(11*time.Second))
			}
			if left := len(s.holds) != 0; left != (tc.until == "requests=100") {
				t.Errorf("%d holds left, want one only while no match came", len(s.holds))
			}
			res, _ := s.end()
			in := res.Injections[0]
			if in.Kind != catalog.KindDelay || in.Until != tc.until || in.Cap != 10*time.Second || in.Met != tc.met || in.Delay != tc.length {
				t.Errorf("injection %s until %q cap %s met %q length %s; want delay, %q, 10s, %q, %s", in.Kind, in.Until, in.Cap, in.Met, in.Delay, tc.until, tc.met, tc.length)
			}
			want := "(" + tc.met + ")"
			if tc.met == "" {
				want = "(not met: ended at its 10s cap)"
			}
			if !strings.HasSuffix(in.Held(), want) {
				t.Errorf("Held() = %q, want it to end %q", in.Held(), want)
			}
		})
	}
}

// TestSessionHeldDelayBesideCut: a member's held delay and its held cut
// are two holds: the condition of one ends it alone.
func TestSessionHeldDelayBesideCut(t *testing.T) {
	cat := partitionCatalog()
	cat.Sites = append(cat.Sites, catalog.Site{Index: 4, ID: "p.(*WAL).Sync#0", Kind: catalog.KindDelay, IO: "disk"})
	cat.Role = &catalog.Role{Pkg: "p", Type: "raft", Field: "state",
		Values: []catalog.RoleValue{{Value: 0, Name: "StateFollower"}, {Value: 2, Name: "StateLeader"}}}
	cat.Hash = cat.ComputeHash()
	pol := &scripted{plan: policy.Plan{Sites: []uint32{2, 4}}, script: []policy.Fault{
		{Kind: catalog.KindPartition, Delay: 10 * time.Second, Until: "requests=100"},
		{Kind: catalog.KindDelay, Delay: 10 * time.Second, Until: "leader"},
	}, done: true}
	s, seq := heldSession(t, cat, pol)
	s.events(1, []wire.Event{{Kind: wire.EvRole, Time: t0.UnixNano(), A: 2}})
	if resp, _ := s.request(3, &wire.Request{ID: 1, Site: 2}, t0); resp.Action != wire.ActStall {
		t.Fatalf("the cut did not start: %+v", resp)
	}
	if resp, _ := s.request(3, &wire.Request{ID: 2, Site: 4}, t0); resp.Action != wire.ActHold {
		t.Fatalf("the held delay did not start: %+v", resp)
	}
	if len(s.holds) != 2 {
		t.Fatalf("%d holds, want the cut's and the delay's", len(s.holds))
	}
	got := plans(t, s.events(2, []wire.Event{{Kind: wire.EvRole, Time: t0.Add(time.Second).UnixNano(), A: 2}}), seq)
	if p, ok := got[3]; !ok || len(p.Holding) != 0 {
		t.Fatalf("n3's plan after the leader moved %+v (sent %v): want the delay woken", p, ok)
	}
	if _, cut := s.cuts["n3"]; !cut || len(s.holds) != 1 {
		t.Errorf("cut %v, %d holds: want the cut still held", cut, len(s.holds))
	}
	res, _ := s.end()
	if in := res.Injections[1]; in.Met != "n2 became StateLeader" || in.Delay != time.Second {
		t.Errorf("the delay's record: met %q, length %s", in.Met, in.Delay)
	}
	if in := res.Injections[0]; in.Met != "" {
		t.Errorf("the cut's record: met %q, want none", in.Met)
	}
}

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
					if obs := planOf(t, start, id, "the start").Flags&wire.FlagObserve != 0; obs == slices.Contains(cutMembers, id) {
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
					if p := planOf(t, last, id, "the end"); p.Flags&wire.FlagObserve != 0 || len(p.Holding) != 0 {
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
