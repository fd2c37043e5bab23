package controller

import (
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
)

// TestSessionPauseStop: a pause lets the call go on and asks for the node's
// pause of the fault's length; a stop kills the node at the call and asks
// for its restart that much later; both record the length and how it was
// chosen, and are refused where the trial cannot make them.
func TestSessionPauseStop(t *testing.T) {
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "p.tick#(*raft).Step.0", Kind: catalog.KindError | catalog.KindCrash, IO: "disk", Errors: []catalog.ErrorValue{{Name: "EIO"}}},
	}}
	cat.Hash = cat.ComputeHash()
	for _, tc := range []struct {
		name    string
		kind    catalog.Kind
		able    bool
		act     wire.Action
		want    Effect
		injects bool
	}{
		{"pause", catalog.KindPause, true, wire.ActNone, Effect{Pause: "n1", For: 2 * time.Second}, true},
		{"stop", catalog.KindStop, true, wire.ActCrash, Effect{Crash: "n1", Down: 2 * time.Second}, true},
		{"pause, no way to pause", catalog.KindPause, false, wire.ActNone, Effect{}, false},
		{"stop, no way to stop", catalog.KindStop, false, wire.ActNone, Effect{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{{Kind: tc.kind, Delay: 2 * time.Second, Timer: "2 × election"}}}
			spec := TrialSpec{ID: "t1"}
			if tc.able {
				spec.Pause = func(string, time.Duration) {}
				spec.Stop = func(string, time.Duration) {}
			}
			s := newSession(cat, spec, pol.plan, pol.Decide)
			s.attach(1, "n1", wire.RoleAgent, true)
			s.arm()
			resp, effs := s.request(1, &wire.Request{ID: 1, Site: 0}, t0)
			if resp.Action != tc.act {
				t.Errorf("response %v, want %v", resp.Action, tc.act)
			}
			var got Effect
			for _, e := range effs {
				if e.Pause != "" || e.Crash != "" {
					got = e
				}
			}
			if got.Pause != tc.want.Pause || got.For != tc.want.For || got.Crash != tc.want.Crash || got.Down != tc.want.Down {
				t.Errorf("effects %+v, want %+v", effs, tc.want)
			}
			res, _ := s.end()
			if (len(res.Injections) == 1) != tc.injects {
				t.Fatalf("injections %+v, want recorded: %v", res.Injections, tc.injects)
			}
			if tc.injects {
				in := res.Injections[0]
				if in.Kind != tc.kind || in.Delay != 2*time.Second || in.Error != "2 × election" {
					t.Errorf("injection %+v, want %s for 2s, \"2 × election\"", in, tc.kind)
				}
			}
		})
	}
}
