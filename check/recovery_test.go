package check

import (
	"testing"
	"testing/fstest"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// clients makes three clients progress from..to, n3 only until n3Until.
func clients(from, to, n3Until int) *trialB {
	return newTrial("n1", "n2", "n3").
		progress("n1/0", from, to, 100).progress("n2/0", from, to, 100).progress("n3/0", from, n3Until, 100)
}

func TestRecovery(t *testing.T) {
	delay := func(d time.Duration) func(*record.Injection) {
		return func(in *record.Injection) { in.Delay = d }
	}
	tests := []struct {
		name string
		b    *trialB
		want verdictWant
	}{
		{"no fault", clients(0, 12000, 1000), verdictWant{}},
		{"every member serves after the delay", clients(0, 12000, 12000).inject(1000, "n3", catalog.KindDelay, delay(2*time.Second)), verdictWant{}},
		{"a member stays wedged after the delay", clients(0, 12000, 2500).inject(1000, "n3", catalog.KindDelay, delay(2*time.Second)),
			verdictWant{failed: true, symptom: "a member did not serve again within 5s after the last fault", nodes: []string{"n3"}, ev: "member n3 served no request since the last fault ended"}},
		{"the member comes back, but late", clients(0, 12000, 2500).progress("n3/0", 9500, 12000, 100).inject(1000, "n3", catalog.KindDelay, delay(2*time.Second)),
			verdictWant{failed: true, symptom: "a member did not serve again within 5s after the last fault", nodes: []string{"n3"}, ev: "served its first request 6.5s after"}},
		{"the workload stopped too early to tell", clients(0, 5000, 2500).inject(1000, "n3", catalog.KindDelay, delay(2*time.Second)), verdictWant{}},
		{"a crashed member back within the bound after its restart", clients(0, 12000, 2000).progress("n3/0", 6500, 12000, 100).inject(2000, "n3", catalog.KindCrash, nil), verdictWant{}},
		{"a rebooted member back within the bound after its restart, which came late (a slow clean shutdown)",
			clients(0, 12000, 1000).progress("n3/0", 9500, 12000, 100).inject(1000, "n3", catalog.KindReboot, nil).
				node("n3", func(n *record.Node) { n.Restarted = []time.Time{at(5000)} }), verdictWant{}},
		{"a rebooted member late after its restart",
			clients(0, 12000, 1000).progress("n3/0", 9500, 12000, 100).inject(1000, "n3", catalog.KindReboot, nil).
				node("n3", func(n *record.Node) { n.Restarted = []time.Time{at(3000)} }),
			verdictWant{failed: true, symptom: "a member did not serve again within 5s after the last fault", nodes: []string{"n3"}, ev: "served its first request 6.5s after"}},
		{"a restart before the fault is not its restart",
			clients(0, 12000, 1000).progress("n3/0", 9500, 12000, 100).inject(1000, "n3", catalog.KindReboot, nil).
				node("n3", func(n *record.Node) { n.Restarted = []time.Time{at(500)} }),
			verdictWant{failed: true, symptom: "a member did not serve again within 5s after the last fault", nodes: []string{"n3"}, ev: "served its first request 7.5s after"}},
		{"a paused member back within the bound after its pause", clients(0, 12000, 2000).progress("n3/0", 7500, 12000, 100).inject(2000, "n3", catalog.KindPause, delay(4*time.Second)), verdictWant{}},
		{"a paused member that stays wedged after it went on", clients(0, 12000, 2000).inject(2000, "n3", catalog.KindPause, delay(2*time.Second)),
			verdictWant{failed: true, symptom: "a member did not serve again within 5s after the last fault", nodes: []string{"n3"}, ev: "member n3 served no request since the last fault ended"}},
		{"a stopped member judged from its late restart",
			clients(0, 14000, 1000).progress("n3/0", 10000, 14000, 100).inject(1000, "n3", catalog.KindStop, delay(6*time.Second)).
				node("n3", func(n *record.Node) { n.Restarted = []time.Time{at(7000)} }), verdictWant{}},
		{"a member down at the end is the crash checker's", clients(0, 12000, 2000).inject(2000, "n2", catalog.KindError, nil).node("n3", func(n *record.Node) { n.Exited = true }), verdictWant{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkVerdict(t, runOne(t, NameRecovery, &Input{Trial: &tt.b.tr}), tt.want)
		})
	}
}

// TestRecoveryDuringStartup: a fault over while the cluster was still
// forming is judged from when fault-free trials had every member serving
// (the baseline's start-up), not from its end: a member that serves late
// but within start-up plus the bound passes; one that never serves, or
// serves later than that, still fails (planted), and the evidence says
// how it was judged.
func TestRecoveryDuringStartup(t *testing.T) {
	slowStart := func(n3From int) *trialB {
		// n3's client serves first at n3From ms; an error struck n3 at 300 ms.
		b := newTrial("n1", "n2", "n3").progress("n1/0", 0, 20000, 100).progress("n2/0", 0, 20000, 100)
		if n3From >= 0 {
			b.progress("n3/0", n3From, 20000, 100)
		} else {
			b.errors("n3/0", 0, 20000, 500)
		}
		return b.inject(300, "n3", catalog.KindError, nil)
	}
	startup := &record.LogBaseline{Trials: 2, Startup: 9 * time.Second}
	for _, tc := range []struct {
		name     string
		b        *trialB
		baseline *record.LogBaseline
		want     verdictWant
	}{
		{"without a start-up measured: 9.7s after the fault", slowStart(10000), nil,
			verdictWant{failed: true, symptom: "a member did not serve again within 5s after the last fault", nodes: []string{"n3"}}},
		{"a slow start-up, as fault-free trials show: excused, and shown", slowStart(10000), startup,
			verdictWant{symptom: "informational: a member served late after a fault during the start-up, within the fault-free start-up",
				ev: "excused by the start-up: member n3 served its first request 9.7s after the last fault ended"}},
		{"later than start-up and the bound", slowStart(14500), startup,
			verdictWant{failed: true, symptom: "a member did not serve again within 5s after the last fault", nodes: []string{"n3"},
				ev: "the cluster was still forming: fault-free trials had every member serving 9s after the workload began"}},
		{"never (planted)", slowStart(-1), startup,
			verdictWant{failed: true, symptom: "a member did not serve again within 5s after the last fault", nodes: []string{"n3"}, ev: "member n3 served no request since"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkVerdict(t, runOne(t, NameRecovery, &Input{Trial: &tc.b.tr, Baseline: tc.baseline}), tc.want)
		})
	}
}

// TestLearnStartup: a fault-free trial teaches the baseline its start-up,
// the longest kept; one in which a member never served teaches none.
func TestLearnStartup(t *testing.T) {
	b := &record.LogBaseline{}
	for _, tr := range []*trialB{
		newTrial("n1", "n2").progress("n1/0", 0, 5000, 100).progress("n2/0", 2500, 5000, 100),
		newTrial("n1", "n2").progress("n1/0", 0, 5000, 100).progress("n2/0", 1000, 5000, 100),
		newTrial("n1", "n2").progress("n1/0", 0, 5000, 100).errors("n2/0", 0, 5000, 500),
	} {
		if err := Learn(b, &tr.tr, fstest.MapFS{}, LogAuto); err != nil {
			t.Fatal(err)
		}
	}
	if b.Startup != 2500*time.Millisecond || b.Trials != 3 {
		t.Errorf("baseline start-up %s after %d trials, want 2.5s after 3", b.Startup, b.Trials)
	}
}
