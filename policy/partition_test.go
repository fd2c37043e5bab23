package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// TestPartitionFaults: with partition allowed, the peer-network sites are
// where a partition can start, with the configured length; random and
// bsrr grant one, and a replay rebuilds it.
func TestPartitionFaults(t *testing.T) {
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "disk", Kind: catalog.KindError | catalog.KindDelay, IO: "disk", Errors: []catalog.ErrorValue{{Name: "EIO"}}},
		{Index: 1, ID: "peer", Kind: catalog.KindDelay | catalog.KindPartition, IO: "net", Peer: catalog.PeerRead},
	}}
	env := Env{Catalog: cat, Seed: 1, Kinds: []catalog.Kind{catalog.KindPartition}, Partition: 4 * time.Second}
	if got := env.candidateSites(); !slices.Equal(got, []uint32{1}) {
		t.Fatalf("candidate sites %v, want the peer site", got)
	}
	if fs := env.faults(&cat.Sites[1]); len(fs) != 1 || fs[0].Kind != catalog.KindPartition || fs[0].Delay != 4*time.Second || fs[0].Key() != "partition:4s" {
		t.Fatalf("faults %+v", fs)
	}
	for _, name := range []string{"random", "bsrr"} {
		p, err := New(name, env)
		if err != nil {
			t.Fatal(err)
		}
		granted := false
		for trial := 0; trial < 5 && !granted; trial++ {
			p.Begin(TrialInfo{Index: trial, Nodes: []string{"n1", "n2"}})
			for i := 0; i < 200 && !granted; i++ {
				d := p.Decide(&Request{Trial: trial, Seq: i, Node: "n1", Site: &cat.Sites[1], Occurrence: i + 1})
				if d.Fault.Kind != catalog.KindNone {
					if d.Fault.Kind != catalog.KindPartition || d.Fault.Delay != 4*time.Second {
						t.Fatalf("%s granted %+v", name, d.Fault)
					}
					granted = true
				}
			}
			p.End(Outcome{Index: trial, Requests: 200})
		}
		if !granted {
			t.Errorf("%s granted no partition", name)
		}
	}
	f, err := faultOf(&cat.Sites[1], record.Injection{Kind: catalog.KindPartition, Delay: 4 * time.Second})
	if err != nil || f.Kind != catalog.KindPartition || f.Delay != 4*time.Second {
		t.Errorf("replayed fault %+v, %v", f, err)
	}
}

// TestDisconnectFaults: a disconnect can start at a peer dial, read or
// write (not at an accept), only where the request names a peer other
// than the node; random grants one there and never elsewhere, and a
// replay waits for a call to the recorded peer.
func TestDisconnectFaults(t *testing.T) {
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "dial", Kind: catalog.KindError | catalog.KindPartition, IO: "net", Peer: catalog.PeerDial, Errors: []catalog.ErrorValue{{Name: "ECONNREFUSED"}}},
		{Index: 1, ID: "accept", Kind: catalog.KindPartition, IO: "net", Peer: catalog.PeerAccept},
	}}
	env := Env{Catalog: cat, Seed: 1, Kinds: []catalog.Kind{catalog.KindDisconnect}}
	if got := env.candidateSites(); !slices.Equal(got, []uint32{0}) {
		t.Fatalf("candidate sites %v, want the dial", got)
	}
	for _, tc := range []struct {
		node, peer string
		want       int
	}{{"n1", "n2", 1}, {"n1", "", 0}, {"n1", "n1", 0}} {
		if fs := env.faultsAt(&Request{Node: tc.node, Peer: tc.peer, Site: &cat.Sites[0]}); len(fs) != tc.want {
			t.Errorf("faults at a dial of %s to %q: %+v, want %d", tc.node, tc.peer, fs, tc.want)
		}
	}
	p, err := New("random", env)
	if err != nil {
		t.Fatal(err)
	}
	p.Begin(TrialInfo{Index: 0, Nodes: []string{"n1", "n2"}})
	for i := 0; i < 200; i++ {
		if d := p.Decide(&Request{Seq: i, Node: "n1", Site: &cat.Sites[0], Occurrence: i + 1}); d.Fault.Kind != catalog.KindNone {
			t.Fatalf("random granted %+v where the peer is unknown", d.Fault)
		}
	}
	granted := false
	for i := 200; i < 400 && !granted; i++ {
		d := p.Decide(&Request{Seq: i, Node: "n1", Peer: "n2", Site: &cat.Sites[0], Occurrence: i + 1})
		granted = d.Fault.Kind == catalog.KindDisconnect && d.Fault.Delay == 3*time.Second
	}
	if !granted {
		t.Errorf("random granted no disconnect of 3s where the peer is known")
	}

	r := NewReplay(cat, []record.Injection{{Node: "n1", SiteID: "dial", Kind: catalog.KindDisconnect, Delay: time.Second, Peer: "n3", Occurrence: 1}})
	r.Begin(TrialInfo{})
	if d := r.Decide(&Request{Node: "n1", Peer: "n2", Site: &cat.Sites[0], Occurrence: 1}); d.Fault.Kind != catalog.KindNone {
		t.Errorf("replay granted %+v at a call to n2, want none (the original cut n3)", d.Fault)
	}
	if d := r.Decide(&Request{Node: "n1", Peer: "n3", Site: &cat.Sites[0], Occurrence: 2}); d.Fault.Kind != catalog.KindDisconnect || d.Fault.Delay != time.Second {
		t.Errorf("replay at a call to n3: %+v, want the disconnect", d.Fault)
	}
}
