package controller

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// The session is tested as etcd-io/raft tests RawNode: calls in, responses
// and effects out, no sockets, no goroutines, no sleeps.

var t0 = time.Unix(1000, 0)

func newTestSession(pol *scripted, spec TrialSpec) *session {
	return newSession(testCatalog(), spec, pol.plan, pol.Decide)
}

// plans returns the plan effects by peer, checking that their sequence
// numbers only grow.
func plans(t *testing.T, effs []Effect, last *uint64) map[PeerID]wire.Plan {
	t.Helper()
	out := map[PeerID]wire.Plan{}
	for _, e := range effs {
		if e.Peer == 0 {
			continue
		}
		if e.Seq <= *last {
			t.Fatalf("plan seq %d after %d", e.Seq, *last)
		}
		*last = e.Seq
		out[e.Peer] = e.Plan
	}
	return out
}

func TestSessionLifecycle(t *testing.T) {
	pol := &scripted{
		plan:   policy.Plan{Sites: []uint32{0}, States: true},
		script: []policy.Fault{{Kind: catalog.KindError, Error: 2}},
		done:   true,
	}
	s := newTestSession(pol, TrialSpec{ID: "t1", Index: 4, Nodes: []string{"n1", "n2"}})
	var seq uint64
	const n1, n2, wl = PeerID(1), PeerID(2), PeerID(3)

	welcome := s.attach(n1, "n1", wire.RoleAgent, true)
	if welcome.Plan.Flags&wire.FlagStates == 0 || len(welcome.Plan.Sites) != 0 {
		t.Fatalf("welcome before Arm %+v: want states, no live site", welcome.Plan)
	}
	seq = welcome.Seq
	s.attach(n2, "n2", wire.RoleAgent, true)
	if w := s.attach(wl, "", wire.RoleWorkload, true); len(w.Plan.Sites) != 0 || w.Plan.Flags != 0 {
		t.Fatalf("workload plan %+v", w.Plan)
	}
	seq += 2

	// Arm gives both agents (not the workload) their live sites.
	ps := plans(t, s.arm(), &seq)
	if len(ps) != 2 || len(ps[n1].Sites) != 1 || len(ps[n2].Sites) != 1 {
		t.Fatalf("Arm plans %+v", ps)
	}
	if effs := s.arm(); effs != nil {
		t.Fatalf("second Arm: %+v", effs)
	}

	// The scripted error, then Done: every agent's plan is emptied, the
	// asker's among the effects (its shell sends it before the response).
	resp, effs := s.request(n2, &wire.Request{ID: 8, Site: 0, State: 2, Stack: []wire.Frame{{Func: "f", File: "x.go", Line: 3}}}, t0)
	if resp.ID != 8 || resp.Action != wire.ActError || resp.Arg != 2 {
		t.Fatalf("response %+v, want error 2", resp)
	}
	ps = plans(t, effs, &seq)
	if len(ps) != 2 || len(ps[n1].Sites) != 0 || len(ps[n2].Sites) != 0 || ps[n2].Flags&wire.FlagStates == 0 {
		t.Fatalf("plans after Done %+v", ps)
	}
	if resp, effs := s.request(n1, &wire.Request{ID: 9, Site: 0}, t0); resp.Action != wire.ActNone || effs != nil || pol.requests() != 1 {
		t.Fatalf("after Done: %+v %+v, %d policy requests", resp, effs, pol.requests())
	}

	res, effs := s.end()
	if len(plans(t, effs, &seq)) != 3 {
		t.Fatalf("End plans %+v, want one per connection", effs)
	}
	if res.Requests != 1 || len(res.Injections) != 1 {
		t.Fatalf("result %+v", res)
	}
	inj := res.Injections[0]
	want := record.Injection{Time: t0, Node: "n2", Site: 0, SiteID: "p.f#os.WriteFile.0", Kind: catalog.KindError, Error: "ENOSPC",
		Stack: []record.Frame{{Func: "f", File: "x.go", Line: 3}}, Occurrence: 1, State: 2, StateID: "p.(*node).run#1"}
	if fmt.Sprint(inj) != fmt.Sprint(want) {
		t.Errorf("injection\n got %+v\nwant %+v", inj, want)
	}
	if res2, effs := s.end(); effs != nil || fmt.Sprint(res2) != fmt.Sprint(res) {
		t.Errorf("second End: %+v, %+v", res2, effs)
	}
	if seen := pol.seen[0]; seen.Trial != 4 || seen.Node != "n2" || seen.Occurrence != 1 || seen.Seq != 0 {
		t.Errorf("policy requests %+v", pol.seen)
	}
}

func TestSessionWrongCatalogGetsNoSites(t *testing.T) {
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0, 1}, States: true}}
	s := newTestSession(pol, TrialSpec{ID: "t1"})
	if w := s.attach(1, "n1", wire.RoleAgent, false); w.Plan.Flags != 0 || len(w.Plan.Sites) != 0 {
		t.Fatalf("welcome %+v", w.Plan)
	}
	var seq uint64
	for _, p := range plans(t, s.arm(), &seq) {
		if len(p.Sites) != 0 || p.Flags != 0 {
			t.Fatalf("armed plan of a foreign build %+v", p)
		}
	}
}

func TestSessionFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   policy.Fault
		crash   bool
		site    uint32
		act     wire.Action
		arg     int64
		effect  string // "crash", "powerloss", "reboot", "warn" or ""
		injects bool
	}{
		{"error", policy.Fault{Kind: catalog.KindError, Error: 1}, false, 0, wire.ActError, 1, "", true},
		{"error the site lacks", policy.Fault{Kind: catalog.KindError, Error: 3}, false, 0, wire.ActNone, 0, "warn", false},
		{"delay", policy.Fault{Kind: catalog.KindDelay, Delay: 1500 * time.Millisecond}, false, 1, wire.ActDelay, int64(1500 * time.Millisecond), "", true},
		{"crash", policy.Fault{Kind: catalog.KindCrash}, true, 1, wire.ActCrash, 0, "crash", true},
		{"crash without a way to crash", policy.Fault{Kind: catalog.KindCrash}, false, 1, wire.ActNone, 0, "", false},
		{"power loss", policy.Fault{Kind: catalog.KindPowerLoss}, true, 1, wire.ActCrash, 0, "powerloss", true},
		{"power loss without a way to crash", policy.Fault{Kind: catalog.KindPowerLoss}, false, 1, wire.ActNone, 0, "", false},
		{"reboot: the call goes on", policy.Fault{Kind: catalog.KindReboot}, true, 1, wire.ActNone, 0, "reboot", true},
		{"reboot without a way to restart", policy.Fault{Kind: catalog.KindReboot}, false, 1, wire.ActNone, 0, "", false},
		{"unknown site", policy.Fault{Kind: catalog.KindError, Error: 1}, false, 9, wire.ActNone, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := &scripted{plan: policy.Plan{Sites: []uint32{0, 1}}, script: []policy.Fault{tc.fault}}
			spec := TrialSpec{ID: "t1"}
			if tc.crash {
				spec.Crash = func(string) {}
				spec.PowerLoss = func(string) {}
				spec.Reboot = func(string) {}
			}
			s := newTestSession(pol, spec)
			s.attach(1, "n1", wire.RoleAgent, true)
			s.arm()
			resp, effs := s.request(1, &wire.Request{ID: 1, Site: tc.site}, t0)
			if resp.Action != tc.act || resp.Arg != tc.arg {
				t.Errorf("response %+v, want %v %d", resp, tc.act, tc.arg)
			}
			got := ""
			for _, e := range effs {
				switch {
				case e.Crash == "n1" && e.PowerLoss:
					got = "powerloss"
				case e.Crash == "n1" && e.Reboot:
					got = "reboot"
				case e.Crash == "n1":
					got = "crash"
				case e.Warn != "":
					got = "warn"
				}
			}
			if got != tc.effect {
				t.Errorf("effects %+v, want %q", effs, tc.effect)
			}
			if res, _ := s.end(); (len(res.Injections) == 1) != tc.injects {
				t.Errorf("injections %+v, want recorded: %v", res.Injections, tc.injects)
			}
		})
	}
}

// TestSessionOccurrences checks that occurrences count per node and site,
// which is what a replay matches.
func TestSessionOccurrences(t *testing.T) {
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0, 1}}}
	s := newTestSession(pol, TrialSpec{ID: "t1"})
	s.attach(1, "n1", wire.RoleAgent, true)
	s.attach(2, "n2", wire.RoleAgent, true)
	s.arm()
	for _, r := range []struct {
		id   PeerID
		site uint32
	}{{1, 0}, {1, 0}, {2, 0}, {1, 1}, {1, 0}} {
		s.request(r.id, &wire.Request{Site: r.site}, t0)
	}
	var got []int
	for _, r := range pol.seen {
		got = append(got, r.Occurrence)
	}
	if fmt.Sprint(got) != "[1 2 1 1 3]" {
		t.Errorf("occurrences %v, want [1 2 1 1 3]", got)
	}
}

// TestSessionStateVisits checks that a trial counts the entries into each
// state per node over all instances of a task, not repeated reports of a
// state an instance is already in.
func TestSessionStateVisits(t *testing.T) {
	s := newTestSession(&scripted{}, TrialSpec{ID: "t1", Nodes: []string{"n1", "n2"}})
	s.attach(1, "n1", wire.RoleAgent, true)
	s.attach(2, "n2", wire.RoleAgent, true)
	ev := func(at int64, task, state, inst uint64) wire.Event {
		return wire.Event{Kind: wire.EvState, Time: at, A: task, B: state, C: inst}
	}
	s.events(1, []wire.Event{
		ev(10, 1, 1, 0xa), ev(11, 1, 1, 0xa), // the same state again: one entry
		ev(12, 1, 2, 0xa), ev(13, 1, 1, 0xa), // left and entered again: two
		ev(14, 1, 1, 0xb), // another instance of the task
		ev(15, 2, 5, 0),
	})
	s.events(2, []wire.Event{ev(20, 1, 2, 0xa)})
	if st := s.current[instKey{"n1", 1, 0xa}]; st != 1 {
		t.Errorf("current state %d, want 1", st)
	}
	res, _ := s.end()
	got := fmt.Sprint(res.States)
	want := fmt.Sprint([]record.StateVisit{
		{Node: "n1", Task: 1, State: 1, Entries: 3, First: time.Unix(0, 10)},
		{Node: "n1", Task: 1, State: 2, Entries: 1, First: time.Unix(0, 12)},
		{Node: "n1", Task: 2, State: 5, Entries: 1, First: time.Unix(0, 15)},
		{Node: "n2", Task: 1, State: 2, Entries: 1, First: time.Unix(0, 20)},
	})
	if got != want {
		t.Errorf("visits\n got %s\nwant %s", got, want)
	}
}

func TestSessionClientEvents(t *testing.T) {
	s := newTestSession(&scripted{}, TrialSpec{ID: "t1"})
	s.attach(1, "", wire.RoleWorkload, true)
	wl := func(ce record.ClientEvent) wire.Event {
		data, _ := json.Marshal(ce)
		return wire.Event{Kind: wire.EvWorkload, Time: 77, Data: data}
	}
	effs := s.events(1, []wire.Event{
		wl(record.ClientEvent{Client: "n1/0", Kind: record.EvProgress, Time: t0}),
		wl(record.ClientEvent{Client: "n2/0", Kind: record.EvError}), // no time: the frame's
		{Kind: wire.EvWorkload, Data: []byte("{")},
		{Kind: wire.EvTimeout, A: 3, B: uint64(time.Second)},
	})
	if len(effs) != 1 || effs[0].Warn == "" {
		t.Errorf("effects %+v, want one warning for the bad event", effs)
	}
	if p := s.progress; len(p) != 1 || !p["n1/0"].Equal(t0) {
		t.Errorf("progress %v", p)
	}
	if s.events(9, []wire.Event{wl(record.ClientEvent{Client: "x"})}) != nil || len(s.client) != 2 {
		t.Errorf("events of an unknown connection were recorded: %+v", s.client)
	}
	if !s.client[1].Time.Equal(time.Unix(0, 77)) {
		t.Errorf("an event without a time got %v, want the frame's", s.client[1].Time)
	}
	s.client = make([]record.ClientEvent, maxClientEvents) // at the limit
	s.events(1, []wire.Event{wl(record.ClientEvent{Client: "n1/0"})})
	res, _ := s.end()
	if res.Dropped != 1 || len(res.Timeouts) != 1 || res.Timeouts[0].Duration != time.Second {
		t.Errorf("dropped %d, timeouts %+v", res.Dropped, res.Timeouts)
	}
	if s.events(1, []wire.Event{wl(record.ClientEvent{Client: "late"})}); len(s.client) != maxClientEvents {
		t.Error("an event after End was recorded")
	}
}

// TestSessionRoles checks that a request's role value reaches the policy
// and the injection by its catalog name, that the trial counts requests by
// site, role and state, and that role events make the trial's timeline.
func TestSessionRoles(t *testing.T) {
	cat := testCatalog()
	cat.Role = &catalog.Role{Pkg: "p", Type: "raft", Field: "state", RoleType: "StateType",
		Values: []catalog.RoleValue{{Value: 0, Name: "StateFollower"}, {Value: 2, Name: "StateLeader"}}}
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{{}, {Kind: catalog.KindDelay, Delay: time.Second}}}
	s := newSession(cat, TrialSpec{ID: "t1", Nodes: []string{"n1", "n2"}}, pol.plan, pol.Decide)
	const n1, n2 = PeerID(1), PeerID(2)
	s.attach(n1, "n1", wire.RoleAgent, true)
	s.attach(n2, "n2", wire.RoleAgent, true)
	s.arm()
	s.events(n2, []wire.Event{{Kind: wire.EvRole, Time: t0.UnixNano(), A: 0}, {Kind: wire.EvRole, Time: t0.UnixNano() + 1, A: 2}, {Kind: wire.EvRole, Time: t0.UnixNano() + 2, A: 2}})
	s.request(n1, &wire.Request{ID: 1, Site: 0, State: 1, HasRole: true, Role: 0}, t0)
	resp, _ := s.request(n2, &wire.Request{ID: 2, Site: 0, State: 1, HasRole: true, Role: 2}, t0)
	if resp.Action != wire.ActDelay {
		t.Fatalf("response %+v, want the scripted delay", resp)
	}
	s.request(n2, &wire.Request{ID: 3, Site: 0, State: 1, HasRole: true, Role: 2}, t0)
	s.request(n1, &wire.Request{ID: 4, Site: 0, HasRole: true, Role: 7}, t0)
	s.request(n1, &wire.Request{ID: 5, Site: 0}, t0)
	var roles []string
	for _, r := range pol.seen {
		roles = append(roles, r.Role)
	}
	if fmt.Sprint(roles) != "[StateFollower StateLeader StateLeader role=7 ]" {
		t.Errorf("policy saw roles %q", roles)
	}
	res, _ := s.end()
	if len(res.Injections) != 1 || res.Injections[0].Role != "StateLeader" || res.Injections[0].Node != "n2" {
		t.Errorf("injections %+v, want one on n2 as StateLeader", res.Injections)
	}
	want := []record.Reach{
		{Site: 0, SiteID: "p.f#os.WriteFile.0", Requests: 1},
		{Site: 0, SiteID: "p.f#os.WriteFile.0", Role: "StateFollower", State: "p.(*node).run#0", Requests: 1},
		{Site: 0, SiteID: "p.f#os.WriteFile.0", Role: "StateLeader", State: "p.(*node).run#0", Requests: 2},
		{Site: 0, SiteID: "p.f#os.WriteFile.0", Role: "role=7", Requests: 1},
	}
	if got, _ := json.Marshal(res.Reached); string(got) != mustJSON(want) {
		t.Errorf("reached %s\nwant    %s", got, mustJSON(want))
	}
	if len(res.Roles) != 2 || res.Roles[0].Role != "StateFollower" || res.Roles[1].Role != "StateLeader" || res.Roles[1].Node != "n2" {
		t.Errorf("role changes %+v, want n2 follower then leader", res.Roles)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestSessionProcess: a request carries its node's process number in the
// trial, counted by the node's agent connections (one per process), not
// by other roles' connections.
func TestSessionProcess(t *testing.T) {
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}}
	s := newTestSession(pol, TrialSpec{ID: "t1", Nodes: []string{"n1", "n2"}})
	s.attach(1, "n1", wire.RoleAgent, true)
	s.attach(2, "n2", wire.RoleAgent, true)
	s.attach(3, "", wire.RoleWorkload, true)
	s.arm()
	s.request(1, &wire.Request{Site: 0}, t0)
	s.detach(1)
	s.attach(4, "n1", wire.RoleAgent, true) // n1 restarted
	s.request(4, &wire.Request{Site: 0}, t0)
	s.request(2, &wire.Request{Site: 0}, t0)
	s.attach(5, "n1", wire.RoleAgent, true) // and again
	s.request(5, &wire.Request{Site: 0}, t0)
	var got []string
	for _, r := range pol.seen {
		got = append(got, fmt.Sprintf("%s:%d", r.Node, r.Process))
	}
	if want := []string{"n1:1", "n1:2", "n2:1", "n1:3"}; !slices.Equal(got, want) {
		t.Errorf("requests' processes %v, want %v", got, want)
	}
}

// TestSessionFaultState checks what a runner reads to end a trial's workload
// early: whether any fault can strike, and whether the policy's last fault
// has struck.
func TestSessionFaultState(t *testing.T) {
	errFault := policy.Fault{Kind: catalog.KindError, Error: 1}
	tests := []struct {
		name          string
		pol           *scripted
		spec          TrialSpec
		requests      int
		wantFaultless bool
		wantLast      bool
		wantInj       int
	}{
		{"no live site: faultless", &scripted{plan: policy.Plan{States: true}}, TrialSpec{ID: "t"}, 0, true, false, 0},
		{"baseline: faultless", &scripted{plan: policy.Plan{Sites: []uint32{0}}}, TrialSpec{ID: "t", NoFaults: true}, 0, true, false, 0},
		{"nothing struck yet", &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{errFault}, last: true}, TrialSpec{ID: "t"}, 0, false, false, 0},
		{"struck, marked last", &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{errFault}, last: true}, TrialSpec{ID: "t"}, 1, false, true, 1},
		{"struck, more may come", &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{errFault, errFault}, last: true}, TrialSpec{ID: "t"}, 1, false, false, 1},
		{"struck, then done", &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{errFault}, done: true}, TrialSpec{ID: "t"}, 1, false, true, 1},
		{"sequence, last struck", &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{errFault, errFault}, last: true}, TrialSpec{ID: "t"}, 2, false, true, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSession(tc.pol, tc.spec)
			s.attach(1, "n1", wire.RoleAgent, true)
			s.arm()
			for i := range tc.requests {
				s.request(1, &wire.Request{ID: uint64(i + 1), Site: 0}, t0)
			}
			f := s.faults()
			if f.Faultless != tc.wantFaultless || f.Last != tc.wantLast || len(f.Injections) != tc.wantInj {
				t.Fatalf("faults = {Faultless:%v Last:%v Injections:%d}, want {%v %v %d}", f.Faultless, f.Last, len(f.Injections), tc.wantFaultless, tc.wantLast, tc.wantInj)
			}
		})
	}
}

// TestSessionDisarm: disarm empties every agent's plan once, and the
// policy is asked nothing after it, though it would grant more.
func TestSessionDisarm(t *testing.T) {
	pol := &scripted{
		plan:   policy.Plan{Sites: []uint32{0}},
		script: []policy.Fault{{Kind: catalog.KindError, Error: 2}, {Kind: catalog.KindError, Error: 2}},
	}
	s := newTestSession(pol, TrialSpec{ID: "t1", Index: 1, Nodes: []string{"n1"}})
	const n1 = PeerID(1)
	seq := s.attach(n1, "n1", wire.RoleAgent, true).Seq
	s.arm()
	seq++
	if resp, _ := s.request(n1, &wire.Request{ID: 1, Site: 0}, t0); resp.Action != wire.ActError {
		t.Fatalf("before disarm: %+v, want the scripted error", resp)
	}
	ps := plans(t, s.disarm(), &seq)
	if len(ps) != 1 || len(ps[n1].Sites) != 0 {
		t.Fatalf("disarm plans %+v, want n1's emptied", ps)
	}
	if effs := s.disarm(); effs != nil {
		t.Fatalf("second disarm: %+v", effs)
	}
	if resp, _ := s.request(n1, &wire.Request{ID: 2, Site: 0}, t0); resp.Action != wire.ActNone || pol.requests() != 1 {
		t.Fatalf("after disarm: %+v, %d policy requests, want none more", resp, pol.requests())
	}
}
