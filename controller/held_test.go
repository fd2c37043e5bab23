package controller

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

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
			s := newSession(cat, TrialSpec{ID: "t1", Nodes: []string{"n1", "n2", "n3"}}, pol.plan, pol.Decide)
			s.attach(n1, "n1", wire.RoleAgent, true)
			s.attach(n2, "n2", wire.RoleAgent, true)
			s.attach(n3, "n3", wire.RoleAgent, true)
			var seq uint64 = 3
			plans(t, s.arm(), &seq)
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
