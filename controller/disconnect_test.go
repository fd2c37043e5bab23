package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
)

// TestSessionDisconnect: a disconnect granted at n1's dial to n2 cuts
// that pair only: both members' peer sites become live, their calls to
// each other fail (dials) or stall (reads, on a goroutine that dialled
// the other), their calls to n3 and calls whose peer is unknown run, n3
// is untouched, and the first peer call of either after the end heals
// both.
func TestSessionDisconnect(t *testing.T) {
	pol := &scripted{
		plan:   policy.Plan{Sites: []uint32{1}},
		script: []policy.Fault{{Kind: catalog.KindDisconnect, Delay: 3 * time.Second}},
		done:   true,
	}
	s := newSession(partitionCatalog(), TrialSpec{ID: "t1", Nodes: []string{"n1", "n2", "n3"}}, pol.plan, pol.Decide)
	s.setAddresses(map[string]string{"127.0.0.1:4001": "n1", "127.0.0.1:4002": "n2", "127.0.0.1:4003": "n3", "127.0.0.1:5002": "n2"})
	s.tagPeers = true
	const n1, n2, n3 = PeerID(1), PeerID(2), PeerID(3)
	if e := s.attach(n1, "n1", wire.RoleAgent, true); e.Plan.Flags&wire.FlagPeers == 0 {
		t.Fatalf("welcome plan %+v, want FlagPeers (the campaign allows disconnects)", e.Plan)
	}
	s.attach(n2, "n2", wire.RoleAgent, true)
	s.attach(n3, "n3", wire.RoleAgent, true)
	var seq uint64 = 3
	plans(t, s.arm(), &seq)

	resp, effs := s.request(n1, &wire.Request{ID: 1, Site: 1, Peer: "localhost:4002"}, t0)
	if resp.Action != wire.ActError || resp.Arg != 2 {
		t.Fatalf("the asking dial: %+v, want ECONNREFUSED (error 2)", resp)
	}
	ps := plans(t, effs, &seq)
	for _, id := range []PeerID{n1, n2} {
		if got := ps[id].Sites; !slices.Equal(got, []uint32{1, 2, 3}) {
			t.Fatalf("plan of %d: %v, want the peer sites", id, got)
		}
	}
	if inj := s.inj; len(inj) != 1 || inj[0].Kind != catalog.KindDisconnect || inj[0].Node != "n1" || inj[0].Peer != "n2" || inj[0].Delay != 3*time.Second {
		t.Fatalf("injections %+v", inj)
	}

	at := t0.Add(time.Second)
	for _, tc := range []struct {
		name string
		id   PeerID
		req  wire.Request
		act  wire.Action
	}{
		{"n2's dial to n1", n2, wire.Request{Site: 1, Peer: "127.0.0.1:4001"}, wire.ActError},
		{"n2's read from n1", n2, wire.Request{Site: 2, Peer: "127.0.0.1:4001"}, wire.ActStall},
		{"n1's read from n2's other port", n1, wire.Request{Site: 2, Peer: "127.0.0.1:5002"}, wire.ActStall},
		{"n1's dial to n3", n1, wire.Request{Site: 1, Peer: "127.0.0.1:4003"}, wire.ActNone},
		{"n1's read from n3", n1, wire.Request{Site: 2, Peer: "127.0.0.1:4003"}, wire.ActNone},
		{"n1's accept (peer unknown)", n1, wire.Request{Site: 3}, wire.ActNone},
		{"n3's dial to n1", n3, wire.Request{Site: 1, Peer: "127.0.0.1:4001"}, wire.ActNone},
		{"n1's disk call", n1, wire.Request{Site: 0}, wire.ActNone},
	} {
		if resp, _ := s.request(tc.id, &tc.req, at); resp.Action != tc.act {
			t.Errorf("%s: %+v, want action %v", tc.name, resp, tc.act)
		}
	}

	resp, effs = s.request(n2, &wire.Request{Site: 2, Peer: "127.0.0.1:4003"}, t0.Add(3*time.Second))
	if resp.Action != wire.ActNone {
		t.Fatalf("n2's read after the end: %+v, want none", resp)
	}
	ps = plans(t, effs, &seq)
	for _, id := range []PeerID{n1, n2} {
		if got, ok := ps[id]; !ok || len(got.Sites) != 0 {
			t.Fatalf("plan of %d after the heal: %+v (sent %v), want none live", id, got, ok)
		}
	}
	if resp, _ := s.request(n1, &wire.Request{Site: 1, Peer: "127.0.0.1:4002"}, t0.Add(4*time.Second)); resp.Action != wire.ActNone {
		t.Errorf("n1's dial to n2 after the heal: %+v, want none", resp)
	}
}

// TestSessionDisconnectNeedsPeer: a disconnect where the call's peer is
// unknown (or is the node itself) is refused with a warning and injects
// nothing.
func TestSessionDisconnectNeedsPeer(t *testing.T) {
	for _, peer := range []string{"", "127.0.0.1:9", "127.0.0.1:4001"} {
		pol := &scripted{
			plan:   policy.Plan{Sites: []uint32{1}},
			script: []policy.Fault{{Kind: catalog.KindDisconnect, Delay: time.Second}},
		}
		s := newSession(partitionCatalog(), TrialSpec{ID: "t1", Nodes: []string{"n1", "n2"}}, pol.plan, pol.Decide)
		s.setAddresses(map[string]string{"127.0.0.1:4001": "n1", "127.0.0.1:4002": "n2"})
		s.attach(1, "n1", wire.RoleAgent, true)
		s.arm()
		resp, effs := s.request(1, &wire.Request{Site: 1, Peer: peer}, t0)
		if resp.Action != wire.ActNone || len(s.inj) != 0 || len(effs) != 1 || effs[0].Warn == "" {
			t.Errorf("peer %q: %+v, injections %v, effects %+v; want none and a warning", peer, resp, s.inj, effs)
		}
	}
}
