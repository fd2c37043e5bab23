package policy

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// TestPauseStopFaults: a pause and a stop are offered, where listed, at the
// sites that can crash, once for each length — ½ ×, 1 × and 2 × each of
// the target's timers, named so — or for the delay without timers; never
// by default.
func TestPauseStopFaults(t *testing.T) {
	cat := shapeCatalog()
	req := &Request{Node: "n1", Site: &cat.Sites[0]} // a disk call that can crash
	timers := map[string]time.Duration{"election": time.Second, "heartbeat": 100 * time.Millisecond}
	type got struct {
		kind  catalog.Kind
		d     time.Duration
		timer string
	}
	for _, tc := range []struct {
		name   string
		env    Env
		req    *Request
		want   []got
		wantKs []string
	}{
		{"pause with timers", Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindPause}, Timers: timers}, req, []got{
			{catalog.KindPause, 500 * time.Millisecond, "½ × election"}, {catalog.KindPause, time.Second, "1 × election"}, {catalog.KindPause, 2 * time.Second, "2 × election"},
			{catalog.KindPause, 50 * time.Millisecond, "½ × heartbeat"}, {catalog.KindPause, 100 * time.Millisecond, "1 × heartbeat"}, {catalog.KindPause, 200 * time.Millisecond, "2 × heartbeat"},
		}, []string{"pause:500ms", "pause:1s", "pause:2s", "pause:50ms", "pause:100ms", "pause:200ms"}},
		{"stop without timers: the delay", Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindStop}, Delay: 3 * time.Second}, req, []got{{catalog.KindStop, 3 * time.Second, ""}}, []string{"stop:3s"}},
		{"not by default", Env{Catalog: cat, Timers: timers}, req, nil, nil},
		{"not at a site that cannot crash", Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindPause, catalog.KindStop}, Timers: timers}, &Request{Node: "n1", Site: &cat.Sites[2]}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gs []got
			var keys []string
			for _, f := range tc.env.faultsAt(tc.req) {
				if f.Kind == catalog.KindPause || f.Kind == catalog.KindStop {
					gs = append(gs, got{f.Kind, f.Delay, f.Timer})
					keys = append(keys, f.Key())
				}
			}
			if len(gs) != len(tc.want) {
				t.Fatalf("faults %+v, want %+v", gs, tc.want)
			}
			for i := range gs {
				if gs[i] != tc.want[i] || keys[i] != tc.wantKs[i] {
					t.Errorf("fault %d: %+v key %s, want %+v key %s", i, gs[i], keys[i], tc.want[i], tc.wantKs[i])
				}
			}
		})
	}
}

// TestPauseStopReplay: a replay makes the recorded pause or stop again,
// of the recorded length and named as before.
func TestPauseStopReplay(t *testing.T) {
	cat := shapeCatalog()
	for _, k := range []catalog.Kind{catalog.KindPause, catalog.KindStop} {
		inj := record.Injection{Node: "n1", SiteID: "append", Kind: k, Delay: 2 * time.Second, Error: "2 × election", Occurrence: 1}
		r := NewReplay(cat, []record.Injection{inj})
		if m := r.Missing(); len(m) != 0 {
			t.Fatalf("%s: missing %v", k, m)
		}
		r.Begin(TrialInfo{})
		d := r.Decide(&Request{Node: "n1", Site: &cat.Sites[0], Occurrence: 1})
		if d.Fault.Kind != k || d.Fault.Delay != 2*time.Second || d.Fault.Timer != "2 × election" {
			t.Errorf("%s: replayed %+v", k, d.Fault)
		}
	}
}

// TestHeldCutFaults: each hold condition adds a held variant of every
// cut — the partition, the disconnect, the one-way cut, the split and
// the leader cut — capped at HoldCap, beside the cut of fixed length;
// "leader" only where the catalog names a leader; a replay holds until
// the recorded condition with the recorded cap (a split on the recorded
// sides).
func TestHeldCutFaults(t *testing.T) {
	cat := shapeCatalog()
	dial := &Request{Node: "n1", Role: "StateLeader", Peer: "n2", Members: members(3), Site: &cat.Sites[1]}
	cuts := []catalog.Kind{catalog.KindPartition, catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit, catalog.KindLeaderCut}
	env := Env{Catalog: cat, Kinds: cuts, Holds: []string{"leader", "requests=64"}, HoldCap: 12 * time.Second}
	var keys []string
	for _, f := range env.faultsAt(dial) {
		keys = append(keys, f.Key())
	}
	var want []string
	for _, k := range cuts {
		want = append(want, k.String()+":3s", k.String()+":until=leader:12s", k.String()+":until=requests=64:12s")
	}
	if got := fmt.Sprint(keys); got != fmt.Sprint(want) {
		t.Errorf("faults %s, want %s", got, want)
	}
	noRole := *cat
	noRole.Role = nil
	env.Catalog = &noRole
	keys, want = nil, nil
	for _, f := range env.faults(&noRole.Sites[1]) {
		keys = append(keys, f.Key())
	}
	for _, k := range cuts {
		want = append(want, k.String()+":3s", k.String()+":until=requests=64:12s")
	}
	if got := fmt.Sprint(keys); got != fmt.Sprint(want) {
		t.Errorf("without a leader role: %s, want no leader hold (%s)", got, want)
	}

	// A replay holds until the same condition, with the same cap.
	for _, k := range []catalog.Kind{catalog.KindPartition, catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit} {
		for _, held := range []struct{ until, met string }{
			{"leader", "n2 became StateLeader"},
			{"requests=64", ""},
			{"site=SaveSnap", "n2 reached etcdserver.(*raftNode).start:(*storage).SaveSnap#0"},
			{"behind=50", "n1 was 57 entries behind: commit 212 at the others, 155 at n1 when cut"},
		} {
			inj := record.Injection{Node: "n1", SiteID: "dial", Kind: k, Delay: 2 * time.Second, Until: held.until, Cap: 12 * time.Second, Met: held.met, Occurrence: 1}
			req := Request{Node: "n1", Site: &cat.Sites[1], Occurrence: 1}
			if k != catalog.KindPartition {
				inj.Peer, req.Peer, req.Members = "n3", "n3", members(5)
			}
			if k == catalog.KindSplit {
				inj.Side = []string{"n4"}
			}
			r := NewReplay(cat, []record.Injection{inj})
			r.Begin(TrialInfo{})
			d := r.Decide(&req)
			if d.Fault.Kind != k || d.Fault.Until != held.until || d.Fault.Delay != 12*time.Second || !slices.Equal(d.Fault.Side, inj.Side) {
				t.Errorf("replayed %+v, want a %s until %s, capped at 12s, side %v", d.Fault, k, held.until, inj.Side)
			}
		}
	}
}

// TestHeldDelayFaults: each condition of DelayHolds adds a held variant
// of the delay, capped at DelayHoldCap, beside the delay of fixed length,
// wherever a delay is offered; Holds (the cuts') adds none, nor does
// DelayHolds add a held cut; "leader" only where the catalog names a
// leader; a replay holds until the recorded condition with the recorded
// cap, and a fixed delay stays one of its recorded length.
func TestHeldDelayFaults(t *testing.T) {
	cat := shapeCatalog()
	cat.Sites = append(cat.Sites, catalog.Site{Index: 3, ID: "sync", Kind: catalog.KindDelay | catalog.KindCrash, IO: "disk"})
	sync := &Request{Node: "n1", Site: &cat.Sites[3]}
	noRole := *cat
	noRole.Role = nil
	for _, tc := range []struct {
		name string
		env  Env
		want []string
	}{
		{"held beside the fixed delay", Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindDelay}, Delay: 2 * time.Second, DelayHolds: []string{"leader", "requests=20"}, DelayHoldCap: 8 * time.Second},
			[]string{"delay:2s", "delay:until=leader:8s", "delay:until=requests=20:8s"}},
		{"the cap's default", Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindDelay}, Delay: 2 * time.Second, DelayHolds: []string{"site=SaveSnap"}},
			[]string{"delay:2s", "delay:until=site=SaveSnap:15s"}},
		{"the cuts' holds hold no delay", Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindDelay, catalog.KindPartition}, Delay: 2 * time.Second, Holds: []string{"leader"}},
			[]string{"delay:2s"}},
		{"no leader hold without a leader role", Env{Catalog: &noRole, Kinds: []catalog.Kind{catalog.KindDelay}, Delay: 2 * time.Second, DelayHolds: []string{"leader", "requests=20"}, DelayHoldCap: 8 * time.Second},
			[]string{"delay:2s", "delay:until=requests=20:8s"}},
		{"not where delays are not allowed", Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindCrash}, DelayHolds: []string{"leader"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var keys []string
			for _, f := range tc.env.faultsAt(sync) {
				if f.Kind == catalog.KindDelay {
					keys = append(keys, f.Key())
				}
			}
			if !slices.Equal(keys, tc.want) {
				t.Errorf("delays %v, want %v", keys, tc.want)
			}
		})
	}
	// The cuts get no held variant from DelayHolds.
	env := Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindPartition}, DelayHolds: []string{"leader"}}
	for _, f := range env.faults(&cat.Sites[1]) {
		if f.Until != "" {
			t.Errorf("DelayHolds held a cut: %s", f.Key())
		}
	}

	// A replay holds until the same condition, with the same cap.
	for _, held := range []struct {
		until, met string
		want       time.Duration
	}{
		{"leader", "n2 became StateLeader", 12 * time.Second},
		{"requests=64", "", 12 * time.Second},
		{"behind=20", "n1 was 23 entries behind: commit 178 at the others, 155 at n1 when its call was held", 12 * time.Second},
		{"", "", 2 * time.Second}, // a fixed delay
	} {
		inj := record.Injection{Node: "n1", SiteID: "sync", Kind: catalog.KindDelay, Delay: 2 * time.Second, Until: held.until, Met: held.met, Occurrence: 1}
		if held.until != "" {
			inj.Cap = 12 * time.Second
		}
		r := NewReplay(cat, []record.Injection{inj})
		r.Begin(TrialInfo{})
		d := r.Decide(&Request{Node: "n1", Site: &cat.Sites[3], Occurrence: 1})
		if d.Fault.Kind != catalog.KindDelay || d.Fault.Until != held.until || d.Fault.Delay != held.want {
			t.Errorf("replayed %+v, want a delay until %q of %s", d.Fault, held.until, held.want)
		}
	}
}

// TestHeldBehindFaults: a hold until the cut or delayed members fell N
// entries behind ("behind=N") is a variant of every cut and of the delay
// where an observation point of the catalog observes a commit index, and
// none where none does (gofault could not count the entries).
func TestHeldBehindFaults(t *testing.T) {
	observing := shapeCatalog()
	observing.Sites = append(observing.Sites, catalog.Site{Index: 3, ID: "sync", Kind: catalog.KindDelay, IO: "disk"})
	blind := *observing
	observing.ObservePoints = []catalog.ObservePoint{{ID: "observe:m/raft.(*raft).Step", Vars: []catalog.ObserveVar{{Name: "msg.Term"}, {Name: "msg.Commit"}}}}
	blind.ObservePoints = []catalog.ObservePoint{{ID: "observe:m/raft.(*raft).Step", Vars: []catalog.ObserveVar{{Name: "msg.Term"}}}}
	for _, tc := range []struct {
		name string
		cat  *catalog.Catalog
		want []string
	}{
		{"a commit index observed", observing, []string{"partition:3s", "partition:until=behind=50:12s", "oneway:3s", "oneway:until=behind=50:12s", "delay:2s", "delay:until=behind=20:8s"}},
		{"no commit index observed", &blind, []string{"partition:3s", "oneway:3s", "delay:2s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{Catalog: tc.cat, Kinds: []catalog.Kind{catalog.KindPartition, catalog.KindOneWay, catalog.KindDelay}, Delay: 2 * time.Second,
				Holds: []string{"behind=50"}, HoldCap: 12 * time.Second, DelayHolds: []string{"behind=20"}, DelayHoldCap: 8 * time.Second}
			var keys []string
			for _, f := range env.faultsAt(&Request{Node: "n1", Peer: "n2", Members: members(3), Site: &tc.cat.Sites[1]}) {
				keys = append(keys, f.Key())
			}
			for _, f := range env.faultsAt(&Request{Node: "n1", Site: &tc.cat.Sites[3]}) {
				keys = append(keys, f.Key())
			}
			if !slices.Equal(keys, tc.want) {
				t.Errorf("faults %v, want %v", keys, tc.want)
			}
		})
	}
}
