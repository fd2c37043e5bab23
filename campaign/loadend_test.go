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
	const bound = 3 * time.Second
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.l.Bound = bound
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
