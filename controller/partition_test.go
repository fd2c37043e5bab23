package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
)

// partitionCatalog has a disk site and the peer sites of a transport: a
// dial with a connection error, a read and an accept.
func partitionCatalog() *catalog.Catalog {
	c := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "p.f#os.WriteFile.0", Kind: catalog.KindError, Errors: []catalog.ErrorValue{{Name: "EIO"}}},
		{Index: 1, ID: "t.post#RoundTrip.0", Kind: catalog.KindError | catalog.KindPartition, Peer: catalog.PeerDial,
			Errors: []catalog.ErrorValue{{Name: "EOF"}, {Name: "ECONNREFUSED"}}},
		{Index: 2, ID: "t.decode#ReadFull.0", Kind: catalog.KindDelay | catalog.KindPartition, Peer: catalog.PeerRead},
		{Index: 3, ID: "t.ServeHTTP#check.0", Kind: catalog.KindError | catalog.KindPartition, Peer: catalog.PeerAccept},
	}}
	c.Hash = c.ComputeHash()
	return c
}

// TestSessionPartition: a partition granted at a peer read cuts the asking
// node: its peer sites become live whatever the policy's plan (here done
// after one grant), dials fail with the connection error, reads and
// accepts stall for what is left of it, other nodes and other sites are
// untouched, and the first peer request after the end heals it.
func TestSessionPartition(t *testing.T) {
	pol := &scripted{
		plan:   policy.Plan{Sites: []uint32{2}},
		script: []policy.Fault{{Kind: catalog.KindPartition, Delay: 3 * time.Second}},
		done:   true,
	}
	s := newSession(partitionCatalog(), TrialSpec{ID: "t1", Nodes: []string{"n1", "n2"}}, pol.plan, pol.Decide)
	const n1, n2 = PeerID(1), PeerID(2)
	s.attach(n1, "n1", wire.RoleAgent, true)
	s.attach(n2, "n2", wire.RoleAgent, true)
	var seq uint64 = 2
	plans(t, s.arm(), &seq)

	resp, effs := s.request(n1, &wire.Request{ID: 1, Site: 2}, t0)
	if resp.Action != wire.ActStall || time.Duration(resp.Arg) != 3*time.Second {
		t.Fatalf("the asking read: %+v, want a stall of the whole partition", resp)
	}
	ps := plans(t, effs, &seq)
	if got := ps[n1].Sites; !slices.Equal(got, []uint32{1, 2, 3}) {
		t.Fatalf("cut node's plan %v, want the peer sites", got)
	}
	if got := ps[n2].Sites; len(got) != 0 {
		t.Fatalf("other node's plan %v, want none (the policy is done)", got)
	}
	if inj := s.inj; len(inj) != 1 || inj[0].Kind != catalog.KindPartition || inj[0].Delay != 3*time.Second || inj[0].Node != "n1" {
		t.Fatalf("injections %+v", inj)
	}

	at := t0.Add(time.Second)
	if resp, _ := s.request(n1, &wire.Request{ID: 2, Site: 1}, at); resp.Action != wire.ActError || resp.Arg != 2 {
		t.Errorf("dial while cut: %+v, want ECONNREFUSED (error 2)", resp)
	}
	if resp, _ := s.request(n1, &wire.Request{ID: 3, Site: 3}, at); resp.Action != wire.ActStall || time.Duration(resp.Arg) != 2*time.Second {
		t.Errorf("accept while cut: %+v, want a stall of the 2s left", resp)
	}
	if resp, _ := s.request(n1, &wire.Request{ID: 4, Site: 0}, at); resp.Action != wire.ActNone {
		t.Errorf("disk call while cut: %+v, want none", resp)
	}
	if resp, _ := s.request(n2, &wire.Request{ID: 5, Site: 1}, at); resp.Action != wire.ActNone {
		t.Errorf("other node's dial: %+v, want none", resp)
	}
	before := pol.requests()

	resp, effs = s.request(n1, &wire.Request{ID: 6, Site: 1}, t0.Add(3*time.Second))
	if resp.Action != wire.ActNone {
		t.Fatalf("dial after the end: %+v, want none", resp)
	}
	if ps := plans(t, effs, &seq); len(ps[n1].Sites) != 0 {
		t.Fatalf("healed node's plan %+v, want no live site", ps[n1])
	}
	if pol.requests() != before {
		t.Errorf("the policy saw the cut node's peer requests")
	}
	if res, _ := s.end(); len(res.Injections) != 1 {
		t.Errorf("record: %+v", res.Injections)
	}
}

// TestSessionPartitionRefused: a partition where none can start (no peer
// site) is not carried out.
func TestSessionPartitionRefused(t *testing.T) {
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{{Kind: catalog.KindPartition, Delay: time.Second}}}
	s := newSession(partitionCatalog(), TrialSpec{ID: "t1", Nodes: []string{"n1"}}, pol.plan, pol.Decide)
	s.attach(1, "n1", wire.RoleAgent, true)
	s.arm()
	resp, effs := s.request(1, &wire.Request{ID: 1, Site: 0}, t0)
	if resp.Action != wire.ActNone || len(s.inj) != 0 || len(effs) != 1 || effs[0].Warn == "" {
		t.Fatalf("response %+v, effects %+v, injections %+v", resp, effs, s.inj)
	}
}

// observer is a test Observer: it cuts n1 off at its second observation
// and heals it at the fourth.
type observer struct {
	scripted
	n int
}

func (o *observer) Observe(ob *policy.Observation) policy.Partition {
	o.n++
	switch o.n {
	case 2:
		return policy.Partition{Start: ob.Node, For: 5 * time.Second, Why: "inv"}
	case 4:
		return policy.Partition{Heal: "n1"}
	}
	return policy.Partition{}
}

// TestSessionObservePartition: observations are recorded; a partition an
// Observer starts is an injection at the observation point with its
// reason and occurrence, its heal shortens it to its real length and
// empties the node's plan.
func TestSessionObservePartition(t *testing.T) {
	cat := partitionCatalog()
	cat.ObservePoints = []catalog.ObservePoint{{Index: 0, ID: "observe:p.Step", When: catalog.ObserveHandled, Vars: []catalog.ObserveVar{{Name: "msg.Term"}}}}
	pol := &observer{}
	s := newSession(cat, TrialSpec{ID: "t1", Nodes: []string{"n1"}}, policy.Plan{Observe: true}, pol.Decide)
	s.observer = pol.Observe
	s.attach(1, "n1", wire.RoleAgent, true)
	var seq uint64 = 1
	plans(t, s.arm(), &seq)
	ev := func(at time.Duration) wire.Event {
		return wire.Event{Kind: wire.EvObserve, Time: t0.Add(at).UnixNano(), A: 0, B: 8, C: 1, D: 2, Data: wire.AppendValues(nil, []int64{3})}
	}
	s.events(1, []wire.Event{ev(0)})
	effs := s.events(1, []wire.Event{ev(time.Second)})
	if ps := plans(t, effs, &seq); !slices.Equal(ps[1].Sites, []uint32{1, 2, 3}) || ps[1].Flags&wire.FlagObserve == 0 {
		t.Fatalf("plan at the start %+v", ps[1])
	}
	if resp, _ := s.request(1, &wire.Request{ID: 1, Site: 2}, t0.Add(2*time.Second)); resp.Action != wire.ActStall {
		t.Fatalf("read while cut: %+v", resp)
	}
	s.events(1, []wire.Event{ev(2 * time.Second)})
	effs = s.events(1, []wire.Event{ev(3 * time.Second)})
	if ps := plans(t, effs, &seq); len(ps[1].Sites) != 0 {
		t.Fatalf("plan after the heal %+v", ps[1])
	}
	res, _ := s.end()
	if len(res.Observations) != 4 || res.Observations[0].Values[0] != 3 || res.Observations[0].Type != 8 {
		t.Fatalf("observations %+v", res.Observations)
	}
	in := res.Injections
	if len(in) != 1 || in[0].Kind != catalog.KindPartition || in[0].SiteID != "observe:p.Step" || in[0].Error != "inv" || in[0].Delay != 2*time.Second || in[0].Occurrence != 2 {
		t.Fatalf("injections %+v", in)
	}
}

// TestObservationCutsItsOwnNode: an observation that makes the policy cut
// off the observing node itself reaches that node's agent as a new plan
// with its peer sites live — no response carries it (events have none).
func TestObservationCutsItsOwnNode(t *testing.T) {
	cat := partitionCatalog()
	cat.ObservePoints = []catalog.ObservePoint{{Index: 0, ID: "observe:p.Step", When: catalog.ObserveHandled, Vars: []catalog.ObserveVar{{Name: "msg.Term"}}}}
	cat.Hash = cat.ComputeHash()
	pol := &observer{scripted: scripted{plan: policy.Plan{Observe: true}}}
	c, err := Listen("unix", sockPath(t), Options{Catalog: cat, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tr, err := c.BeginTrial(TrialSpec{ID: "t1", Nodes: []string{"n1"}})
	if err != nil {
		t.Fatal(err)
	}
	nc := dialRaw(t, c)
	r := wire.NewReader(nc)
	if _, err := nc.Write(wire.AppendHello(nil, &wire.Hello{Version: wire.Version, Role: wire.RoleAgent, Node: "n1", Trial: "t1", CatalogHash: cat.Hash})); err != nil {
		t.Fatal(err)
	}
	if typ, _, err := r.ReadFrame(); err != nil || typ != wire.TWelcome {
		t.Fatalf("welcome: %v %v", typ, err)
	}
	tr.Arm()
	ev := wire.Event{Kind: wire.EvObserve, Time: time.Now().UnixNano(), A: 0, B: 8, C: 1, D: 2, Data: wire.AppendValues(nil, []int64{3})}
	// The observer cuts n1 at its second observation.
	if _, err := nc.Write(wire.AppendEvents(nil, &wire.Events{Events: []wire.Event{ev, ev}})); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		typ, payload, err := r.ReadFrame()
		if err != nil {
			t.Fatalf("no plan with the peer sites: %v", err)
		}
		if typ != wire.TPlan {
			continue
		}
		var p wire.Plan
		if err := wire.DecodePlan(payload, &p); err != nil {
			t.Fatal(err)
		}
		if slices.Equal(p.Sites, []uint32{1, 2, 3}) {
			return
		}
	}
}
