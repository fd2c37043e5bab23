package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// cofiCatalog has a send point and a handled point whose variables are the
// message's term and the receiver's term.
func cofiCatalog() *catalog.Catalog {
	c := &catalog.Catalog{ObservePoints: []catalog.ObservePoint{
		{Index: 0, ID: "observe:raft.(*raft).Step", When: catalog.ObserveHandled,
			Vars: []catalog.ObserveVar{{Name: "msg.Term"}, {Name: "node.Term"}}},
		{Index: 1, ID: "observe:rafthttp.(*Transport).Send", When: catalog.ObserveSend,
			Vars: []catalog.ObserveVar{{Name: "msg.Term"}}},
	}}
	return c
}

// clock gives observations times a second apart.
var clock = time.Unix(1000, 0)

func tick() time.Time {
	clock = clock.Add(time.Second)
	return clock
}

func handled(trial int, node string, typ int64, from uint64, msgTerm, term int64) *Observation {
	cat := cofiCatalog()
	return &Observation{Trial: trial, Point: &cat.ObservePoints[0],
		Observation: record.Observation{Time: tick(), Node: node, Point: 0, Type: typ, From: from, Values: []int64{msgTerm, term}}}
}

func sent(trial int, node string, typ int64, from, to uint64) *Observation {
	cat := cofiCatalog()
	return &Observation{Trial: trial, Point: &cat.ObservePoints[1],
		Observation: record.Observation{Time: tick(), Node: node, Point: 1, Type: typ, From: from, To: to, Values: []int64{1}}}
}

// TestCofi replays event streams through Algorithm 1: invariants mined
// from fault-free observations; a violation cuts the member off; the first
// new message type to or from it heals it, the next trial heals at the
// next new type; a partition that meets no new type finishes the
// invariant; the memory survives a snapshot.
func TestCofi(t *testing.T) {
	cat := cofiCatalog()
	p := newCofi(Env{Catalog: cat, Seed: 1, Partition: 5 * time.Second})
	var clean []record.Observation
	for i := 0; i < 30; i++ {
		clean = append(clean, handled(0, "n2", 3, 1, 2, 2).Observation)
	}
	p.Learn([][]record.Observation{clean})
	if got := p.Invariants(); len(got) != 1 || got[0].A != "msg.Term" || got[0].B != "node.Term" || got[0].Type != 3 {
		t.Fatalf("invariants %+v, want msg.Term == node.Term at type 3", got)
	}
	if pl := p.Begin(TrialInfo{Index: 1}); !pl.Observe || len(pl.Sites) != 0 {
		t.Fatalf("plan %+v", pl)
	}
	p.Observe(sent(1, "n3", 3, 30, 10))
	if a := p.Observe(handled(1, "n3", 3, 1, 2, 2)); a != (Partition{}) {
		t.Fatalf("consistent message: %+v", a)
	}
	a := p.Observe(handled(1, "n3", 3, 1, 2, 5)) // n3 ahead of the sender's term
	if a.Start != "n3" || a.For != 5*time.Second || a.Why == "" {
		t.Fatalf("violation: %+v, want n3 cut off", a)
	}
	early := sent(1, "n3", 4, 30, 10)
	early.Time = early.Time.Add(-time.Second) // at the start: too early to heal
	if a := p.Observe(early); a != (Partition{}) {
		t.Fatalf("a message right at the start: %+v", a)
	}
	if a := p.Observe(sent(1, "n1", 3, 10, 20)); a != (Partition{}) {
		t.Fatalf("a message between others: %+v", a)
	}
	if a := p.Observe(sent(1, "n3", 4, 30, 10)); a.Heal != "n3" {
		t.Fatalf("first new type from the cut member: %+v, want the heal", a)
	}
	if a := p.Observe(handled(1, "n3", 3, 1, 2, 5)); a != (Partition{}) {
		t.Fatalf("second violation in the trial: %+v, want none", a)
	}
	p.End(Outcome{Index: 1})

	// Trial 2: the type that healed trial 1 is known; the next new one heals.
	p.Begin(TrialInfo{Index: 2})
	p.Observe(sent(2, "n3", 3, 31, 11))
	if a := p.Observe(handled(2, "n3", 3, 1, 2, 5)); a.Start != "n3" {
		t.Fatalf("trial 2 violation: %+v", a)
	}
	if a := p.Observe(sent(2, "n3", 4, 31, 11)); a != (Partition{}) {
		t.Fatalf("known type: %+v, want the partition kept", a)
	}
	if a := p.Observe(sent(2, "n1", 4, 11, 31)); a.Heal != "n3" {
		t.Fatalf("new type to the cut member: %+v, want the heal", a)
	}
	p.End(Outcome{Index: 2})

	// Trial 3 meets no new type: the invariant is done.
	data, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	p.Begin(TrialInfo{Index: 3})
	p.Observe(sent(3, "n3", 3, 32, 12))
	if a := p.Observe(handled(3, "n3", 3, 1, 2, 5)); a.Start != "n3" {
		t.Fatalf("trial 3 violation: %+v", a)
	}
	p.Observe(sent(3, "n3", 4, 32, 12))
	p.End(Outcome{Index: 3})
	p.Begin(TrialInfo{Index: 4})
	if a := p.Observe(handled(4, "n3", 3, 1, 2, 5)); a.Start != "" {
		t.Fatalf("done invariant started a partition: %+v", a)
	}

	// Resume from the snapshot taken after trial 2.
	q := newCofi(Env{Catalog: cat, Seed: 1})
	if err := q.Restore(data); err != nil {
		t.Fatal(err)
	}
	q.Learn(nil) // learned already: keeps the restored invariants
	if len(q.Invariants()) != 1 || len(q.mem.Types) != 1 || len(q.mem.Types[q.mem.Invariants[0].ID]) != 2 {
		t.Fatalf("restored memory %+v", q.mem)
	}
}

// TestCofiFallback: a trial without violations still gets its partition.
func TestCofiFallback(t *testing.T) {
	p := newCofi(Env{Catalog: cofiCatalog()})
	p.Learn(nil)
	p.Begin(TrialInfo{Index: 0})
	var a Partition
	for i := 0; i < cofiFallback && a.Start == ""; i++ {
		a = p.Observe(handled(0, "n2", 3, 1, 2, 2))
	}
	if a.Start != "n2" {
		t.Fatalf("no partition after %d handled messages", cofiFallback)
	}
}

// TestReplayObservedPartition: a partition cofi started at an observation
// is replayed at the same node's same observation, for its real length.
func TestReplayObservedPartition(t *testing.T) {
	cat := cofiCatalog()
	r := NewReplay(cat, []record.Injection{{Node: "n3", SiteID: cat.ObservePoints[0].ID, Kind: catalog.KindPartition,
		Delay: 2 * time.Second, Error: "inv", Occurrence: 3}})
	if m := r.Missing(); len(m) != 0 {
		t.Fatalf("missing %v", m)
	}
	if pl := r.Begin(TrialInfo{Index: 0}); !pl.Observe {
		t.Fatalf("plan %+v", pl)
	}
	var got []Partition
	for i := 0; i < 5; i++ {
		got = append(got, r.Observe(handled(0, "n3", 3, 1, 2, 2)))
		r.Observe(handled(0, "n1", 3, 1, 2, 2))
	}
	if got[2].Start != "n3" || got[2].For != 2*time.Second || got[2].Why != "inv" || got[0].Start != "" || got[3].Start != "" {
		t.Fatalf("replayed %+v", got)
	}
}

// TestCofiPending: a message whose value its receiver lacks cuts the
// receiver off before it gets it; the partition heals first at a type the
// fault-free trials never sent (a recovery protocol), then, once a
// partition met none, at the normal traffic, and the invariant is done
// when a partition meets no new type at all.
func TestCofiPending(t *testing.T) {
	cat := &catalog.Catalog{ObservePoints: []catalog.ObservePoint{
		{Index: 0, ID: "observe:server.(*Node).Step", When: catalog.ObserveHandled,
			Vars: []catalog.ObserveVar{{Name: "msg.Index"}, {Name: "node.lastIndex()"}}},
		{Index: 1, ID: "observe:transport.(*Transport).Send", When: catalog.ObserveSend,
			Vars: []catalog.ObserveVar{{Name: "msg.Index"}}},
	}}
	step := func(trial int, node string, to uint64, msgIndex, last int64) *Observation {
		return &Observation{Trial: trial, Point: &cat.ObservePoints[0],
			Observation: record.Observation{Time: tick(), Node: node, Point: 0, Type: 1, From: 1, To: to, Values: []int64{msgIndex, last}}}
	}
	send := func(trial int, node string, typ int64, from, to uint64, index int64) *Observation {
		return &Observation{Trial: trial, Point: &cat.ObservePoints[1],
			Observation: record.Observation{Time: tick(), Node: node, Point: 1, Type: typ, From: from, To: to, Values: []int64{index}}}
	}
	p := newCofi(Env{Catalog: cat, Seed: 1, Partition: 5 * time.Second})
	var clean []record.Observation
	for i := range int64(30) {
		clean = append(clean, send(0, "n1", 1, 1, 2, i).Observation, step(0, "n2", 2, i, i).Observation)
	}
	p.Learn([][]record.Observation{clean})
	if len(p.Invariants()) != 1 {
		t.Fatalf("invariants %+v", p.Invariants())
	}
	const snap = 4 // a type the fault-free trials never sent
	for _, tt := range []struct {
		name string
		sent []int64 // types sent to the cut member, in order
		heal int64   // the type that heals (0: none)
	}{
		{"the recovery protocol's type heals first", []int64{1, snap}, snap},
		{"no rarer type: the partition lasts", []int64{1, 1}, 0},
		{"then the normal traffic heals", []int64{1}, 1},
		{"no new type: the invariant is done", []int64{1, snap}, 0},
	} {
		trial := int(clock.Unix())
		p.Begin(TrialInfo{Index: trial})
		p.Observe(step(trial, "n2", 2, 3, 3))
		a := p.Observe(send(trial, "n1", 1, 1, 2, 4))
		if a.Start != "n2" || a.Why == "" {
			t.Fatalf("%s: entry 4 sent to n2 at 3: %+v, want n2 cut off", tt.name, a)
		}
		var healed int64
		for _, typ := range tt.sent {
			if a := p.Observe(send(trial, "n1", typ, 1, 2, 4)); a.Heal == "n2" {
				healed = typ
				break
			}
		}
		if healed != tt.heal {
			t.Errorf("%s: healed at type %d, want %d", tt.name, healed, tt.heal)
		}
		p.End(Outcome{Index: trial})
	}
	trial := int(clock.Unix())
	p.Begin(TrialInfo{Index: trial})
	p.Observe(step(trial, "n2", 2, 3, 3))
	if a := p.Observe(send(trial, "n1", 1, 1, 2, 4)); a.Start != "" {
		t.Errorf("a done invariant cut again: %+v", a)
	}
}

// TestCofiRefusesWhatItCannotCut: a catalog without observation points or
// without peer-network sites gets an error that says what is missing,
// rather than a campaign of trials without a fault.
func TestCofiRefusesWhatItCannotCut(t *testing.T) {
	obs := []catalog.ObservePoint{{ID: "raft.Send", When: catalog.ObserveSend}, {ID: "raft.Step", When: catalog.ObserveHandled}}
	peer := []catalog.Site{{ID: "rafthttp.dial", Peer: catalog.PeerDial}}
	for _, tc := range []struct {
		name string
		cat  *catalog.Catalog
		want string
	}{
		{"no observation points", &catalog.Catalog{Sites: peer}, "no observation points"},
		{"sends only", &catalog.Catalog{ObservePoints: obs[:1], Sites: peer}, "none where one is handled"},
		{"no peer calls", &catalog.Catalog{ObservePoints: obs, Sites: []catalog.Site{{ID: "wal.write"}}}, "no peer-network calls"},
		{"both", &catalog.Catalog{ObservePoints: obs, Sites: peer}, ""},
	} {
		_, err := New("cofi", Env{Catalog: tc.cat})
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: New(cofi) = %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
