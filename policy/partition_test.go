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
