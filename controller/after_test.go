package controller

import (
	"testing"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
)

// TestSessionCrashAfter drives a crash after a call through the session:
// the request before the call is answered ActCrashAfter with no kill; the
// kill comes with the agent's second request, once the call returned
// (wire.Request.After), on that node and site only, once.
func TestSessionCrashAfter(t *testing.T) {
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "p.sync#(*os.File).Sync.0", Kind: catalog.KindError | catalog.KindCrash | catalog.KindCrashAfter, IO: "disk",
			Errors: []catalog.ErrorValue{{Name: "EIO"}}},
		{Index: 1, ID: "p.g#net.Conn.Read.0", Kind: catalog.KindDelay | catalog.KindCrash, IO: "net"},
	}}
	cat.Hash = cat.ComputeHash()
	for _, tc := range []struct {
		name      string
		kind      catalog.Kind
		site      uint32
		crash     bool
		first     wire.Action
		afterNode PeerID // the peer whose request says the call returned
		afterSite uint32
		effect    string // the second request's effect: "crash", "powerloss" or ""
		injects   bool
	}{
		{"crash after", catalog.KindCrashAfter, 0, true, wire.ActCrashAfter, 1, 0, "crash", true},
		{"power loss after", catalog.KindPowerLossAfter, 0, true, wire.ActCrashAfter, 1, 0, "powerloss", true},
		{"another member's return kills nothing", catalog.KindCrashAfter, 0, true, wire.ActCrashAfter, 2, 0, "", true},
		{"another site's return kills nothing", catalog.KindCrashAfter, 0, true, wire.ActCrashAfter, 1, 1, "", true},
		{"a site with no hook after its call", catalog.KindCrashAfter, 1, true, wire.ActNone, 1, 1, "", false},
		{"no way to crash", catalog.KindCrashAfter, 0, false, wire.ActNone, 1, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := &scripted{plan: policy.Plan{Sites: []uint32{0, 1}}, script: []policy.Fault{{Kind: tc.kind}}}
			spec := TrialSpec{ID: "t1"}
			if tc.crash {
				spec.Crash = func(string) {}
				spec.PowerLoss = func(string) {}
			}
			s := newSession(cat, spec, pol.plan, pol.Decide)
			s.attach(1, "n1", wire.RoleAgent, true)
			s.attach(2, "n2", wire.RoleAgent, true)
			s.arm()
			resp, effs := s.request(1, &wire.Request{ID: 1, Site: tc.site}, t0)
			if resp.Action != tc.first {
				t.Fatalf("first response %v, want %v", resp.Action, tc.first)
			}
			for _, e := range effs {
				if e.Crash != "" {
					t.Fatalf("a kill before the call returned: %+v", effs)
				}
			}
			for i := range 2 { // the second time: nothing armed any more
				resp, effs = s.request(tc.afterNode, &wire.Request{ID: 2, Site: tc.afterSite, After: true}, t0)
				got := ""
				for _, e := range effs {
					switch {
					case e.Crash == "n1" && e.PowerLoss:
						got = "powerloss"
					case e.Crash == "n1":
						got = "crash"
					case e.Crash != "":
						got = "kill of " + e.Crash
					}
				}
				want, act := tc.effect, wire.ActCrash
				if i == 1 || want == "" {
					want, act = "", wire.ActNone
				}
				if got != want || resp.Action != act {
					t.Errorf("return %d: response %v, effects %+v; want %v, %q", i+1, resp.Action, effs, act, want)
				}
			}
			res, _ := s.end()
			if (len(res.Injections) == 1) != tc.injects {
				t.Fatalf("injections %+v, want recorded: %v", res.Injections, tc.injects)
			}
			if tc.injects && res.Injections[0].Kind != tc.kind {
				t.Errorf("injection kind %v, want %v", res.Injections[0].Kind, tc.kind)
			}
			if pol.seen[len(pol.seen)-1].Seq != 0 {
				t.Errorf("the policy saw the return's request: %+v", pol.seen)
			}
		})
	}
}
