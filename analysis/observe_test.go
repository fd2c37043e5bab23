package analysis

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

func TestObservePass(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "observe"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/observe/..."}, Passes: []*Pass{ObservePass}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]catalog.ObservePoint{}
	for _, p := range res.Catalog.ObservePoints {
		got[p.Func] = p
	}
	if len(got) != 3 || res.Stats.Totals[CountObservationPoints] != 3 {
		t.Fatalf("points %+v", res.Catalog.ObservePoints)
	}
	names := func(p catalog.ObservePoint) string {
		var ns []string
		for _, v := range p.Vars {
			ns = append(ns, v.Name+"="+v.Expr)
		}
		return strings.Join(ns, " ")
	}
	step := got["(*raft).Step"]
	if step.When != catalog.ObserveHandled || step.Msg != "m" || step.Ptr || names(step) != "msg.Term=m.Term msg.Index=m.Index node.Term=r.Term node.lead=r.lead node.getLead()=r.getLead()" {
		t.Errorf("(*raft).Step: %+v (%s)", step, names(step))
	}
	if step.ID != "observe:example.com/observe/node.(*raft).Step" || step.Line == 0 {
		t.Errorf("ID/position %s %d", step.ID, step.Line)
	}
	send := got["(*Transport).Send"]
	if send.When != catalog.ObserveSend || !send.Slice || send.Msg != "msgs" || names(send) != "msg.Term=gofaultmsg.Term msg.Index=gofaultmsg.Index" {
		t.Errorf("(*Transport).Send: %+v (%s)", send, names(send))
	}
	if relay := got["(relay).Step"]; !relay.Ptr || relay.Msg != "m" || len(relay.Vars) != 2 {
		t.Errorf("(relay).Step: %+v", relay)
	}
}

// TestObservePassConfigured: functions named in the options are points
// too, in each spelling of their names.
func TestObservePassConfigured(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "observe"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name          string
		send, handled []string
		want          map[string]string // Func → When
	}{
		{"none named", nil, nil, map[string]string{}},
		{"method, short name", nil, []string{"(*raft).deliver"}, map[string]string{"(*raft).deliver": catalog.ObserveHandled}},
		{"full and package names", []string{"example.com/observe/node.broadcast"}, []string{"node.(*raft).deliver"},
			map[string]string{"(*raft).deliver": catalog.ObserveHandled, "broadcast": catalog.ObserveSend}},
	} {
		res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/observe/..."}, Passes: []*Pass{ObservePass},
			ObserveSend: tt.send, ObserveHandled: tt.handled})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range res.Catalog.ObservePoints {
			got[p.Func] = p.When
		}
		for fn, when := range tt.want {
			if got[fn] != when {
				t.Errorf("%s: %s is %q, want %q (points %v)", tt.name, fn, got[fn], when, got)
			}
		}
		if len(got) != 3+len(tt.want) {
			t.Errorf("%s: %d points %v, want %d", tt.name, len(got), got, 3+len(tt.want))
		}
	}
}
