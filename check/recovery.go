package check

import (
	"context"
	"fmt"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// restartAfter is how long after a crash fault the runner restarts the
// node (campaign's restartDelay): the crash fault ends then, unless the
// node's record says when it was restarted.
const restartAfter = time.Second

// Recovery checks that the cluster comes back: once the trial's last fault
// has ended (an error when injected, a delay when it ran out, a crash when
// the runner restarted the node), every member that is alive at the end
// must serve the workload again — a request of a client of that member
// succeeds — within Input.RecoveryBound. A stall that outlives its fault (a
// wedged stream, a leader that never steps down, a member that never
// catches up) fails the trial even when the workload's last requests
// happened to go elsewhere.
//
// A trial without faults passes; so does one whose workload stopped
// before the bound ran out (it cannot tell), and a member that is down at
// the end is the crash checker's.
type Recovery struct{}

// Name implements Checker.
func (Recovery) Name() string { return NameRecovery }

// Check implements Checker.
func (Recovery) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameRecovery)
	tr := in.Trial
	end, ok := FaultsEnd(tr)
	if !ok {
		return v
	}
	bound := in.RecoveryBound
	if bound <= 0 {
		bound = DefaultRecoveryBound
	}
	first, last := workloadSpan(tr)
	// A fault over while the cluster was still forming is judged from when
	// fault-free trials had every member serving (the log baseline's
	// longest start-up), not from its end.
	from, forming := end, ""
	if b := in.Baseline; b != nil && b.Startup > 0 && first.Add(b.Startup).After(end) {
		from = first.Add(b.Startup)
		forming = fmt.Sprintf("; the cluster was still forming: fault-free trials had every member serving %s after the workload began, at %s here, judged from then", b.Startup.Round(time.Millisecond), clock(from))
	}
	if last.Before(from.Add(bound)) {
		return v // the workload stopped too early to tell
	}
	served := ServedSince(tr.Client, end)
	var excused []string // late after the fault, in time after the start-up
	for _, n := range tr.Nodes {
		if n.Exited {
			continue // down at the end: the crash checker's
		}
		t, ok := served[n.Name]
		if ok && t.Sub(from) <= bound {
			if t.Sub(end) > bound {
				excused = append(excused, fmt.Sprintf("excused by the start-up: member %s served its first request %s after the last fault ended at %s, past the bound %s%s",
					n.Name, t.Sub(end).Round(time.Millisecond), clock(end), bound, forming))
			}
			continue
		}
		v.Failed = true
		v.Nodes = append(v.Nodes, n.Name)
		what := "served no request since"
		if ok {
			what = fmt.Sprintf("served its first request %s after", t.Sub(end).Round(time.Millisecond))
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("member %s %s the last fault ended at %s (bound %s%s; the workload ran until %s)",
			n.Name, what, clock(end), bound, forming, clock(last)))
	}
	switch {
	case v.Failed:
		v.Symptom = fmt.Sprintf("a member did not serve again within %s after the last fault", bound)
		v.Evidence = append(v.Evidence, excused...)
	case len(excused) > 0:
		v.Symptom = "informational: a member served late after a fault during the start-up, within the fault-free start-up"
		v.Evidence = excused
	}
	return v
}

// FaultsEnd returns when the trial's last fault ended (an error when
// injected, a delay, pause, partition or disconnect when it ran out, a fault that
// ended the node's process when the node was started again); ok is false
// without faults. The runner ends a workload early from it too
// (workload.adaptive_end), so the recovery checker and the runner agree on
// when the faults were over.
func FaultsEnd(tr *record.Trial) (time.Time, bool) {
	var end time.Time
	for _, in := range tr.Injections {
		t := in.Time
		switch in.Kind {
		case catalog.KindDelay, catalog.KindPause, catalog.KindPartition, catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit, catalog.KindLeaderCut:
			t = t.Add(in.Delay)
		case catalog.KindCrash, catalog.KindPowerLoss, catalog.KindReboot, catalog.KindTorn, catalog.KindCrashAfter, catalog.KindPowerLossAfter, catalog.KindStop, catalog.KindRot:
			// When the node was started again: a reboot's clean
			// shutdown may take seconds before the restart delay begins.
			t = restartOf(tr, in.Node, in.Time)
		}
		if t.After(end) {
			end = t
		}
	}
	return end, !end.IsZero()
}

// restartOf returns when node was first restarted after a fault at t that
// ended its process, or t + restartAfter when its record has no such time.
func restartOf(tr *record.Trial, node string, t time.Time) time.Time {
	for _, n := range tr.Nodes {
		if n.Name != node {
			continue
		}
		for _, r := range n.Restarted {
			if r.After(t) {
				return r
			}
		}
	}
	return t.Add(restartAfter)
}

// ServedSince returns, per member, when a request of one of its clients
// first succeeded at or after t: what the recovery checker asks of every
// live member after the last fault, and what the runner waits for before a
// fault trial's load may end (campaign's loadEnd).
func ServedSince(events []record.ClientEvent, t time.Time) map[string]time.Time {
	served := map[string]time.Time{}
	for _, e := range events {
		if e.Node == "" || e.Time.Before(t) || !success(e) {
			continue
		}
		if s, ok := served[e.Node]; !ok || e.Time.Before(s) {
			served[e.Node] = e.Time
		}
	}
	return served
}

// success reports whether a client event is a request that succeeded.
func success(e record.ClientEvent) bool {
	switch e.Kind {
	case record.EvProgress:
		return true
	case record.EvOp:
		return e.Op != nil && !e.Op.Unknown
	}
	return false
}
