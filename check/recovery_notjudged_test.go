package check

import (
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// TestRecoveryNotJudged: a workload that says it could not judge a trial
// (record.EvNotJudged: the system refused its setup after a fault, as the
// NATS workload says when its streams could not be created even with the
// recovery bound to retry) does not hide a cluster that never recovered:
// its setup's tries are requests, and a member that served none within the
// bound after the fault ended still fails Recovery. A refusal the fault
// itself explains — it lasted until too late to tell — passes.
func TestRecoveryNotJudged(t *testing.T) {
	const why = "the cluster refused the workload's streams or consumers: create stream S1 through n1: gave up after 40 attempts in 10s"
	// setup: every client connected at 0; the setup's first pass and its
	// retry through every server gave up (reported errors) until 25.5 s.
	setup := func() *trialB {
		b := newTrial("n1", "n2", "n3")
		for _, c := range []string{"n1/0", "n2/0", "n3/0"} {
			b.ev(0, c, record.EvProgress, "connect")
			b.ev(10500, c, record.EvError, "create stream S1: gave up after 40 attempts in 10s: nats: timeout")
			b.ev(25500, c, record.EvError, "create stream S1: gave up after 60 attempts in 15s: nats: timeout")
		}
		return b
	}
	notJudged := func(b *trialB) *trialB { return b.ev(25600, workloadClient, record.EvNotJudged, why) }
	delay := func(d time.Duration) func(*record.Injection) {
		return func(in *record.Injection) { in.Delay = d }
	}
	symptom := "a member did not serve again within 12s after the last fault"
	for _, tc := range []struct {
		name string
		b    *trialB
		want verdictWant
	}{
		{"never recovered after an error in the setup", notJudged(setup().inject(500, "n2", catalog.KindError, nil)),
			verdictWant{failed: true, symptom: symptom, nodes: []string{"n1", "n2", "n3"}, ev: "member n1 served no request since the last fault ended"}},
		{"one member never recovered, the others created the streams", notJudged(setup().inject(500, "n2", catalog.KindError, nil).
			ev(3000, "n1/0", record.EvProgress, "create stream S1").ev(3100, "n3/0", record.EvProgress, "create stream S1")),
			verdictWant{failed: true, symptom: symptom, nodes: []string{"n2"}, ev: "member n2 served no request since the last fault ended"}},
		{"the fault held the setup until too late to tell", notJudged(setup().inject(500, "n2", catalog.KindDelay, delay(20*time.Second))),
			verdictWant{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkVerdict(t, runOne(t, NameRecovery, &Input{Trial: &tc.b.tr, RecoveryBound: 12 * time.Second}), tc.want)
		})
	}
}
