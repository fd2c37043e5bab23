package campaign

import (
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/record"
)

// loadEndPoll is how often the runner decides whether a trial's load may
// end early (workload.adaptive_end).
const loadEndPoll = 100 * time.Millisecond

// loadEndFile is the file, in a trial's dir, whose creation tells the
// workload that its load may end (workload.EnvLoadEnd).
const loadEndFile = "load.end"

// loadEnd is what decides whether a running trial's load may end early.
type loadEnd struct {
	// FullLength: the load runs its full length whatever struck: a
	// fault-free baseline trial, which teaches the log checker what the
	// target logs in a whole trial, the calibration trial, and a re-run of
	// a fault-free failure whose trial ran its full length (trialRun).
	FullLength bool
	// Faults are the trial's faults so far.
	Faults controller.FaultState
	// Restarting: a node ended by a fault is not yet started again.
	Restarting bool
	// Nodes are the members' records so far (their restart times).
	Nodes []record.Node
	// Calibrated: the calibration trial killed its node and every other
	// node's clients made progress since (resumed): the failover is
	// measured, and the load, which the trial asked to be long
	// (calibrateLoad), may end once the node is back.
	Calibrated bool
	// Bound is how long the cluster must serve on after the last fault
	// ended: the recovery bound, which closes the fault's window (the
	// recovery checker's, and the log rules' that dismiss the fault's
	// expected lines), then a progress bound past it, so a consequence
	// that outlasts the window shows: a stall the hang checker reports, a
	// line the log checker no longer dismisses (minikv's restream leak,
	// logged every second after a follower's restart).
	Bound time.Duration
	// Settle replaces Bound after faults that stopped no member (stoppedNone:
	// injected errors only, no member exited, was killed or restarted),
	// once every member has served since the last fault: half the
	// progress bound, which is at least one measured failover (boundFor
	// doubles it), so a member the error wedged would have had its peers
	// time out and elect past it.
	Settle time.Duration
	// Client returns the trial's client events so far: which members
	// served since the last fault (check.ServedSince). mayEnd calls it
	// only for a trial the settle may end, as the runner's copy of a
	// trial's events is not free at every poll; nil: no events.
	Client func() []record.ClientEvent
}

// mayEnd decides whether the load may end at now, and why (for the log):
//   - the calibration trial's may end once its failover is measured
//     (Calibrated) and the killed node is back;
//   - a baseline trial runs its full length (FullLength): the log checker
//     judges every fault trial against what baselines logged, and a
//     shorter baseline would see fewer of the target's routine lines;
//   - a trial no fault can strike (policy none, an exhausted policy) may
//     end at once: the workload still runs its minimum load, which is what
//     its checkers judge a fault-free trial on;
//   - a trial whose policy may still grant a fault runs on (a fault may
//     strike late), as does one whose ended node is not yet back;
//   - a trial whose faults stopped no member (stoppedNone: every fault an
//     injected error, and no member exited, was killed or restarted) may
//     end once every member has served since the last fault
//     (check.ServedSince: the recovery checker's verdict is then decided,
//     a pass) and Settle has passed since it, so an error that wedged a
//     member shows as a member that does not serve. The error's own
//     window (the recovery bound) is still open then: a line its rules
//     dismiss that would go on past the window is not seen. That is the
//     price, and it was near nothing before: with etcd's 5 s load, 1 of
//     96 error trials of main was judged 1 s or more past its error's
//     window (docs/performance.md). The lasting line the long bound is
//     for, minikv's restream leak, follows a restart, which keeps Bound;
//   - otherwise it may end once Bound has passed since the last fault
//     ended (check.FaultsEnd, the recovery checker's own reckoning): a
//     crash, a pause, a partition, a delay, a restart, an exit.
func (l loadEnd) mayEnd(now time.Time) (bool, string) {
	switch {
	case l.Calibrated && !l.Restarting:
		return true, "the calibration trial measured its failover"
	case l.FullLength:
		return false, ""
	case l.Faults.Faultless:
		return true, "no fault can strike the trial"
	case len(l.Faults.Injections) == 0 || !l.Faults.Last:
		return false, ""
	case l.Restarting:
		return false, ""
	}
	end, ok := check.FaultsEnd(&record.Trial{Injections: l.Faults.Injections, Nodes: l.Nodes})
	if !ok {
		return false, ""
	}
	ago := now.Sub(end).Round(time.Millisecond).String()
	if l.Settle > 0 && l.Settle < l.Bound && !now.Before(end.Add(l.Settle)) && stoppedNone(l.Faults.Injections, l.Nodes) && servedAll(l.Nodes, check.ServedSince(l.clientEvents(), end)) {
		return true, "the last fault ended " + ago + " ago, stopped no member, and every member served since (settle " + l.Settle.String() + ")"
	}
	if now.Before(end.Add(l.Bound)) {
		return false, ""
	}
	return true, "the last fault ended " + ago + " ago (bound " + l.Bound.String() + ")"
}

// stoppedNone reports whether faults stopped no member: every one is an
// injected error, and no member of nodes exited, was killed or restarted
// (an error that made its member exit is a stop like a crash).
func stoppedNone(faults []record.Injection, nodes []record.Node) bool {
	for _, in := range faults {
		if in.Kind != catalog.KindError {
			return false
		}
	}
	for _, n := range nodes {
		if n.Exited || n.Killed || n.Restarts > 0 || len(n.Restarted) > 0 {
			return false
		}
	}
	return true
}

// servedAll reports whether every member of nodes is in served (has
// served since the last fault); false without members.
func servedAll(nodes []record.Node, served map[string]time.Time) bool {
	for _, n := range nodes {
		if _, ok := served[n.Name]; !ok {
			return false
		}
	}
	return len(nodes) > 0
}

// clientEvents returns l.Client's events, none without it.
func (l loadEnd) clientEvents() []record.ClientEvent {
	if l.Client == nil {
		return nil
	}
	return l.Client()
}
