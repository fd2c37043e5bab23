package invariant

import (
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestMine(t *testing.T) {
	cat := &catalog.Catalog{ObservePoints: []catalog.ObservePoint{{Index: 0, ID: "p", When: catalog.ObserveHandled,
		Vars: []catalog.ObserveVar{{Name: "msg.Term"}, {Name: "node.Term"}, {Name: "node.lead"}}}}}
	obs := func(typ int64, from uint64, vals ...int64) record.Observation {
		return record.Observation{Point: 0, Type: typ, From: from, Values: vals}
	}
	var a, b []record.Observation
	for i := 0; i < 15; i++ {
		a = append(a, obs(8, 7, 2, 2, 7)) // heartbeat: same term, the sender leads
		b = append(b, obs(8, 7, 3, 3, 7))
		b = append(b, obs(3, 7, int64(i), 2, 7)) // app: term differs
	}
	got := Mine(cat, [][]record.Observation{a, b}, 0)
	if len(got) != 2 || got[0].A != "msg.From" || got[0].B != "node.lead" || got[1].A != "msg.Term" || got[1].B != "node.Term" || got[1].Trials != 2 || got[1].Count != 30 {
		t.Fatalf("mined %+v", got)
	}
	if few := Mine(cat, [][]record.Observation{a[:5]}, 0); len(few) != 0 {
		t.Errorf("invariants from 5 observations: %+v", few)
	}
	s := NewSet(cat, got)
	o := obs(8, 7, 4, 3, 7)
	if v := s.Violated(&o); len(v) != 1 || v[0].B != "node.Term" {
		t.Errorf("violated %+v", v)
	}
	o = obs(3, 7, 4, 3, 1)
	if v := s.Violated(&o); len(v) != 0 {
		t.Errorf("type without invariants: %+v", v)
	}
}

// TestPending: a message about to be sent breaks an invariant of its type
// for now when its value differs from the receiver's last observed one.
func TestPending(t *testing.T) {
	cat := &catalog.Catalog{ObservePoints: []catalog.ObservePoint{
		{Index: 0, ID: "step", When: catalog.ObserveHandled, Vars: []catalog.ObserveVar{{Name: "msg.Index"}, {Name: "node.lastIndex()"}}},
		{Index: 1, ID: "send", When: catalog.ObserveSend, Vars: []catalog.ObserveVar{{Name: "msg.Index"}}},
	}}
	s := NewSet(cat, []record.Invariant{{ID: "i", Point: "step", Type: 1, A: "msg.Index", B: "node.lastIndex()"}})
	send := &cat.ObservePoints[1]
	for _, tt := range []struct {
		name     string
		typ      int64
		index    int64
		receiver map[string]int64
		pending  bool
	}{
		{"the receiver lacks the entry", 1, 5, map[string]int64{"node.lastIndex()": 4}, true},
		{"the receiver has it", 1, 5, map[string]int64{"node.lastIndex()": 5}, false},
		{"receiver never observed", 1, 5, nil, false},
		{"another message type", 2, 5, map[string]int64{"node.lastIndex()": 4}, false},
	} {
		o := record.Observation{Point: 1, Type: tt.typ, Values: []int64{tt.index}}
		if got := s.Pending(&o, send, tt.receiver); (len(got) == 1) != tt.pending {
			t.Errorf("%s: pending %+v, want %v", tt.name, got, tt.pending)
		}
	}
}

// TestMembers: a receiver's variable equal on all members at a point and
// type is mined, one that differs between members is not, and an
// observation that differs from another member's latest value breaks it.
func TestMembers(t *testing.T) {
	cat := &catalog.Catalog{ObservePoints: []catalog.ObservePoint{{Index: 0, ID: "p", When: catalog.ObserveHandled,
		Vars: []catalog.ObserveVar{{Name: "msg.Index"}, {Name: "node.Term"}, {Name: "node.commit"}}}}}
	obs := func(node string, vals ...int64) record.Observation {
		return record.Observation{Node: node, Point: 0, Type: 8, From: 1, Values: vals}
	}
	var trial []record.Observation
	for i := range int64(15) {
		// Both followers agree on the term; their commit indices differ
		// while one lags.
		trial = append(trial, obs("n2", i, 3, i), obs("n3", i+1, 3, i-1))
	}
	var members []record.Invariant
	for _, v := range Mine(cat, [][]record.Observation{trial}, 0) {
		if v.A == record.AllMembers {
			members = append(members, v)
		}
	}
	if len(members) != 1 || members[0].B != "node.Term" || members[0].Count < 20 {
		t.Fatalf("all-members invariants %+v, want node.Term", members)
	}
	s := NewSet(cat, members)
	for _, tt := range []struct {
		name   string
		o      record.Observation
		others map[string]map[string]int64
		broken bool
	}{
		{"agrees", obs("n2", 0, 3, 0), map[string]map[string]int64{"n3": {"node.Term": 3}}, false},
		{"a newer term than n3's", obs("n2", 0, 4, 0), map[string]map[string]int64{"n3": {"node.Term": 3}}, true},
		{"only its own value", obs("n2", 0, 4, 0), map[string]map[string]int64{"n2": {"node.Term": 3}}, false},
		{"nothing known of others", obs("n2", 0, 4, 0), nil, false},
	} {
		if got := s.Diverged(&tt.o, &cat.ObservePoints[0], tt.others); (len(got) == 1) != tt.broken {
			t.Errorf("%s: diverged %+v, want broken %v", tt.name, got, tt.broken)
		}
		if v := s.Violated(&tt.o); len(v) != 0 {
			t.Errorf("%s: Violated reports an all-members invariant: %+v", tt.name, v)
		}
	}
}

// TestBrought: a handled message brought its receiver a value it lacked
// when the receiver now agrees with it and did not before.
func TestBrought(t *testing.T) {
	cat := &catalog.Catalog{ObservePoints: []catalog.ObservePoint{
		{Index: 0, ID: "step", When: catalog.ObserveHandled, Vars: []catalog.ObserveVar{{Name: "msg.Index"}, {Name: "node.lastIndex()"}}},
	}}
	s := NewSet(cat, []record.Invariant{{ID: "i", Point: "step", Type: 1, A: "msg.Index", B: "node.lastIndex()"}})
	for _, tt := range []struct {
		name    string
		vals    []int64 // msg.Index, node.lastIndex() after handling
		prev    map[string]int64
		brought bool
	}{
		{"caught up", []int64{5, 5}, map[string]int64{"node.lastIndex()": 4}, true},
		{"had it already", []int64{5, 5}, map[string]int64{"node.lastIndex()": 5}, false},
		{"still behind (a violation, not this)", []int64{5, 3}, map[string]int64{"node.lastIndex()": 3}, false},
		{"first observation of the receiver", []int64{5, 5}, nil, false},
	} {
		o := record.Observation{Point: 0, Type: 1, Values: tt.vals}
		if got := s.Brought(&o, &cat.ObservePoints[0], tt.prev); (len(got) == 1) != tt.brought {
			t.Errorf("%s: brought %+v, want %v", tt.name, got, tt.brought)
		}
	}
}
