package campaign

import (
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/record"
)

func TestLoadEndMayEnd(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	errAt := func(d time.Duration) record.Injection {
		return record.Injection{Time: at(d), Node: "n1", Kind: catalog.KindError}
	}
	const bound, settle = 3 * time.Second, time.Second
	members := []record.Node{{Name: "n1"}, {Name: "n2"}, {Name: "n3"}}
	// served: a success of a client of each of nodes at d.
	served := func(d time.Duration, nodes ...string) []record.ClientEvent {
		var out []record.ClientEvent
		for _, n := range nodes {
			out = append(out, record.ClientEvent{Time: at(d), Client: n + "/0", Node: n, Kind: record.EvProgress})
		}
		return out
	}
	// events hands mayEnd the events as the runner does, on demand.
	events := func(evs []record.ClientEvent) func() []record.ClientEvent {
		return func() []record.ClientEvent { return evs }
	}
	last := func(ins ...record.Injection) controller.FaultState {
		return controller.FaultState{Last: true, Injections: ins}
	}
	exited := []record.Node{{Name: "n1", Exited: true, ExitTime: at(1500 * time.Millisecond)}, {Name: "n2"}, {Name: "n3"}}
	restarted := []record.Node{{Name: "n1", Restarts: 1, Restarted: []time.Time{at(2 * time.Second)}}, {Name: "n2"}, {Name: "n3"}}
	tests := []struct {
		name string
		l    loadEnd
		now  time.Duration // since t0
		want bool
	}{
		{"calibration measured, node back: end", loadEnd{FullLength: true, Calibrated: true, Faults: controller.FaultState{Faultless: true}}, 0, true},
		{"calibration measured, node not back: run on", loadEnd{FullLength: true, Calibrated: true, Restarting: true, Faults: controller.FaultState{Faultless: true}}, time.Hour, false},
		{"baseline runs its full length", loadEnd{FullLength: true, Faults: controller.FaultState{Faultless: true}}, time.Hour, false},
		{"no fault can strike: end", loadEnd{Faults: controller.FaultState{Faultless: true}}, 0, true},
		{"nothing struck yet: run on", loadEnd{Faults: controller.FaultState{Last: true}}, time.Hour, false},
		{"more faults may strike: run on", loadEnd{Faults: controller.FaultState{Injections: []record.Injection{errAt(0)}}}, time.Hour, false},
		{"error, within the bound: run on", loadEnd{Faults: controller.FaultState{Last: true, Injections: []record.Injection{errAt(time.Second)}}}, time.Second + bound - time.Millisecond, false},
		{"error, bound passed: end", loadEnd{Faults: controller.FaultState{Last: true, Injections: []record.Injection{errAt(time.Second)}}}, time.Second + bound, true},
		{"delay counts from when it ran out", loadEnd{Faults: controller.FaultState{Last: true, Injections: []record.Injection{
			{Time: at(0), Node: "n1", Kind: catalog.KindDelay, Delay: 5 * time.Second}}}}, 5*time.Second + bound - time.Millisecond, false},
		{"partition counts from its heal", loadEnd{Faults: controller.FaultState{Last: true, Injections: []record.Injection{
			{Time: at(0), Node: "n1", Kind: catalog.KindPartition, Delay: 3 * time.Second}}}}, 3*time.Second + bound, true},
		{"crashed node not back: run on", loadEnd{Restarting: true, Faults: controller.FaultState{Last: true, Injections: []record.Injection{
			{Time: at(0), Node: "n1", Kind: catalog.KindCrash}}}}, time.Hour, false},
		{"crash counts from the restart", loadEnd{Faults: controller.FaultState{Last: true, Injections: []record.Injection{
			{Time: at(0), Node: "n1", Kind: catalog.KindCrash}}},
			Nodes: []record.Node{{Name: "n1", Restarted: []time.Time{at(4 * time.Second)}}}}, 4*time.Second + bound - time.Millisecond, false},
		{"crash, bound passed since the restart: end", loadEnd{Faults: controller.FaultState{Last: true, Injections: []record.Injection{
			{Time: at(0), Node: "n1", Kind: catalog.KindCrash}}},
			Nodes: []record.Node{{Name: "n1", Restarted: []time.Time{at(4 * time.Second)}}}}, 4*time.Second + bound, true},
		{"a sequence counts from its last fault", loadEnd{Faults: controller.FaultState{Last: true, Injections: []record.Injection{
			errAt(0), errAt(10 * time.Second)}}}, 10*time.Second + bound - time.Millisecond, false},

		// Settle: an error that stopped no member, every member served
		// since.
		{"error, every member served since, settle passed: end", loadEnd{Faults: last(errAt(time.Second)), Nodes: members,
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + settle, true},
		{"error, every member served since, within the settle: run on", loadEnd{Faults: last(errAt(time.Second)), Nodes: members,
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + settle - time.Millisecond, false},
		{"error, a member served only before it: run on", loadEnd{Faults: last(errAt(time.Second)), Nodes: members,
			Client: events(append(served(1500*time.Millisecond, "n2", "n3"), served(900*time.Millisecond, "n1")...))}, time.Second + bound - time.Millisecond, false},
		{"error, a member never served again: the bound still ends it", loadEnd{Faults: last(errAt(time.Second)), Nodes: members,
			Client: events(served(1500*time.Millisecond, "n2", "n3"))}, time.Second + bound, true},
		{"error, a failed request is no service", loadEnd{Faults: last(errAt(time.Second)), Nodes: members,
			Client: events(append(served(1500*time.Millisecond, "n2", "n3"), record.ClientEvent{Time: at(2 * time.Second), Client: "n1/0", Node: "n1", Kind: record.EvError}))}, time.Second + bound - time.Millisecond, false},
		{"error, an unknown outcome is no service", loadEnd{Faults: last(errAt(time.Second)), Nodes: members,
			Client: events(append(served(1500*time.Millisecond, "n2", "n3"), record.ClientEvent{Time: at(2 * time.Second), Client: "n1/0", Node: "n1", Kind: record.EvOp, Op: &record.Op{Unknown: true}}))}, time.Second + bound - time.Millisecond, false},
		{"a sequence of errors: service before its last is not since", loadEnd{Faults: last(errAt(0), errAt(5*time.Second)), Nodes: members,
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, 5*time.Second + settle, false},
		{"a sequence of errors settles from its last", loadEnd{Faults: last(errAt(0), errAt(5*time.Second)), Nodes: members,
			Client: events(served(5500*time.Millisecond, "n1", "n2", "n3"))}, 5*time.Second + settle, true},
		{"no members known: the bound", loadEnd{Faults: last(errAt(time.Second)),
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + bound - time.Millisecond, false},
		{"no settle (zero): the bound", loadEnd{Faults: last(errAt(time.Second)), Nodes: members, Settle: -1,
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + bound - time.Millisecond, false},

		// The planted cases the settle must not hide: a fault that
		// stopped a member keeps the bound, whoever served since.
		{"error that made its member exit keeps the bound", loadEnd{Faults: last(errAt(time.Second)), Nodes: exited,
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + bound - time.Millisecond, false},
		{"error, a member restarted keeps the bound", loadEnd{Faults: last(errAt(time.Second)), Nodes: restarted,
			Client: events(served(2500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + bound - time.Millisecond, false},
		{"error, a member killed keeps the bound", loadEnd{Faults: last(errAt(time.Second)), Nodes: []record.Node{{Name: "n1", Killed: true}, {Name: "n2"}, {Name: "n3"}},
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + bound - time.Millisecond, false},
		{"a follower's crash and restart (minikv's restream leak) keeps the bound", loadEnd{Faults: last(record.Injection{Time: at(time.Second), Node: "n1", Kind: catalog.KindCrash}),
			Nodes: restarted, Client: events(served(2500*time.Millisecond, "n1", "n2", "n3"))}, 2*time.Second + bound - time.Millisecond, false},
		{"a delay keeps the bound", loadEnd{Faults: last(record.Injection{Time: at(0), Node: "n1", Kind: catalog.KindDelay, Delay: time.Second}), Nodes: members,
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + bound - time.Millisecond, false},
		{"a pause keeps the bound", loadEnd{Faults: last(record.Injection{Time: at(0), Node: "n1", Kind: catalog.KindPause, Delay: time.Second}), Nodes: members,
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + bound - time.Millisecond, false},
		{"a partition keeps the bound", loadEnd{Faults: last(record.Injection{Time: at(0), Node: "n1", Kind: catalog.KindPartition, Delay: time.Second}), Nodes: members,
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + bound - time.Millisecond, false},
		{"an error and a crash keep the bound", loadEnd{Faults: last(record.Injection{Time: at(0), Node: "n2", Kind: catalog.KindCrashAfter}, errAt(time.Second)),
			Nodes:  []record.Node{{Name: "n1"}, {Name: "n2", Killed: true, Restarts: 1, Restarted: []time.Time{at(500 * time.Millisecond)}}, {Name: "n3"}},
			Client: events(served(1500*time.Millisecond, "n1", "n2", "n3"))}, time.Second + bound - time.Millisecond, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.l.Bound = bound
			if tc.l.Settle == 0 {
				tc.l.Settle = settle
			} else if tc.l.Settle < 0 {
				tc.l.Settle = 0
			}
			got, why := tc.l.mayEnd(at(tc.now))
			if got != tc.want {
				t.Errorf("mayEnd = %v (%q), want %v", got, why, tc.want)
			}
			if got && why == "" {
				t.Errorf("mayEnd gives no reason")
			}
		})
	}
}
