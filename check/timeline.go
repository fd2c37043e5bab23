package check

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// workloadClient is the client name of workload-level events (see
// workload.ClientWorkload; check does not import workload).
const workloadClient = "workload"

// stall is a period in which one client made no progress for longer than
// the threshold, and which no injected fault excuses.
type stall struct {
	client, node string
	from, to     time.Time
	errors       int
	lastErr      string
	// open is set when the period lasts until the client's last event
	// rather than ending with progress.
	open bool
}

func (s stall) failing() bool { return s.errors > 0 }

// clientTimeline is one client's events in time order.
type clientTimeline struct {
	name, node string
	events     []record.ClientEvent
}

// timelines groups the trial's client events by client, leaving out
// workload-level events, in name order.
func timelines(tr *record.Trial) []clientTimeline {
	by := map[string]*clientTimeline{}
	for _, e := range tr.Client {
		if e.Client == workloadClient || e.Client == "" {
			continue
		}
		tl := by[e.Client]
		if tl == nil {
			tl = &clientTimeline{name: e.Client, node: e.Node}
			by[e.Client] = tl
		}
		tl.events = append(tl.events, e)
	}
	out := make([]clientTimeline, 0, len(by))
	for _, tl := range by {
		sort.SliceStable(tl.events, func(i, j int) bool { return tl.events[i].Time.Before(tl.events[j].Time) })
		out = append(out, *tl)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func isProgress(e record.ClientEvent) bool {
	return e.Kind == record.EvProgress || (e.Kind == record.EvOp && e.Op != nil && !e.Op.Unknown)
}

// workloadSpan returns the first and last event times of the trial's
// workload.
func workloadSpan(tr *record.Trial) (first, last time.Time) {
	for _, e := range tr.Client {
		if first.IsZero() || e.Time.Before(first) {
			first = e.Time
		}
		if e.Time.After(last) {
			last = e.Time
		}
	}
	return first, last
}

// killedSince returns, per node, the earliest time gofault killed it or it
// exited, if it did. A node that was killed (crash fault, restart) or died
// makes its clients fail from then on, which is not a stall to report: the
// crash checker judges an exit, and the kill was ours.
func killedSince(tr *record.Trial) map[string]time.Time {
	out := map[string]time.Time{}
	note := func(node string, t time.Time) {
		if old, ok := out[node]; !ok || t.Before(old) {
			out[node] = t
		}
	}
	for _, in := range tr.Injections {
		if in.Kind.Kills() {
			note(in.Node, in.Time)
		}
	}
	for _, n := range tr.Nodes {
		switch {
		case n.Exited && !n.ExitTime.IsZero():
			note(n.Name, n.ExitTime)
		case n.Killed || n.Exited:
			// When is unknown: the whole trial.
			note(n.Name, tr.Start)
		}
	}
	return out
}

// slowing reports whether fault in slows or cuts members for a while
// (in.Delay): a delay, a pause (the whole member stalls), or a cut
// (catalog.Kind.Cuts: a partition, disconnect, one-way cut, split or
// leader cut).
func slowing(in record.Injection) bool {
	return (in.Kind == catalog.KindDelay || in.Kind == catalog.KindPause || in.Kind.Cuts()) && in.Delay > 0
}

// holding reports whether fault in takes a member out for a while, its
// length known (in.Delay): a slowing fault, or a stop (the member is down
// that long). The allowances count it; the slow checker judges only the
// slowing ones (a stopped member is down, not slow).
func holding(in record.Injection) bool {
	return slowing(in) || in.Kind == catalog.KindStop && in.Delay > 0
}

// hits reports whether fault in slows or cuts node: the node it struck;
// for a disconnect or a one-way cut either end (a one-way cut's callee
// stops hearing from the node on the node's connections); for a split a
// member of a side out of the quorum (splitOut: the minority, not the
// majority that must route around it).
func hits(tr *record.Trial, in record.Injection, node string) bool {
	switch in.Kind {
	case catalog.KindDisconnect, catalog.KindOneWay:
		return in.Node == node || in.Peer == node
	case catalog.KindDelay:
		// A slowed call with a peer (the leader's append stream to a
		// follower) holds up that peer as well: its clients wait for
		// what the call carries.
		return in.Node == node || in.Peer != "" && in.Peer == node
	case catalog.KindSplit:
		return slices.Contains(splitOut(tr, in), node)
	}
	return in.Node == node
}

// splitOut returns the members a split took out of the quorum: each side
// that is no majority of the trial's members (the struck minority; both
// sides of an even split).
func splitOut(tr *record.Trial, in record.Injection) []string {
	names := make([]string, 0, len(tr.Nodes))
	for _, n := range tr.Nodes {
		names = append(names, n.Name)
	}
	var out []string
	struck, rest := in.SplitSides(names)
	for _, side := range [][]string{struck, rest} {
		if 2*len(side) <= len(names) {
			out = append(out, side...)
		}
	}
	return out
}

// overlaps reports whether the effect of slowing fault in, [in.Time,
// in.Time+in.Delay], overlaps [from, to].
func overlaps(in record.Injection, from, to time.Time) bool {
	return !in.Time.After(to) && !in.Time.Add(in.Delay).Before(from)
}

// outage is a member out of the cluster for a while: slowed or cut off
// by a fault, or down after a kill or a fail-stop until it restarted.
type outage struct {
	node     string
	from, to time.Time
}

// outages are the members the trial's faults took out, and when: the
// span of a delay, a partition or a leader cut; for a split, the span of
// each member of a side with no majority (splitOut); a disconnect or a
// one-way cut takes out no member (it cuts one link or one direction of
// it: both ends still reach the others, and through them a quorum); a
// member killed by a crash or power-loss fault
// until it restarted, and a member that exited after a fault struck it
// (it stopped on an injected error) until it restarted. Without a restart
// the outage lasts to the trial's end.
func outages(tr *record.Trial) []outage {
	var out []outage
	restart := func(node string, after time.Time) time.Time {
		for _, n := range tr.Nodes {
			if n.Name != node {
				continue
			}
			for _, r := range n.Restarted {
				if r.After(after) {
					return r
				}
			}
		}
		return tr.End
	}
	struck := map[string]time.Time{} // the first fault on each node
	for _, in := range tr.Injections {
		switch {
		case slowing(in) && in.Kind == catalog.KindSplit:
			for _, n := range splitOut(tr, in) {
				out = append(out, outage{n, in.Time, in.Time.Add(in.Delay)})
			}
		case slowing(in) && in.Kind != catalog.KindDisconnect && in.Kind != catalog.KindOneWay:
			out = append(out, outage{in.Node, in.Time, in.Time.Add(in.Delay)})
		case in.Kind.Kills():
			out = append(out, outage{in.Node, in.Time, restart(in.Node, in.Time)})
		}
		if t, ok := struck[in.Node]; !ok || in.Time.Before(t) {
			struck[in.Node] = in.Time
		}
	}
	for _, n := range tr.Nodes {
		if t, ok := struck[n.Name]; ok && n.Exited && !n.Killed && !n.ExitTime.IsZero() && !n.ExitTime.Before(t) {
			out = append(out, outage{n.Name, n.ExitTime, restart(n.Name, n.ExitTime)})
		}
	}
	return out
}

// noQuorum returns how long within [from, to] the faults had half the
// members or more out at once (outages): then no majority was left to
// route around them, and the cluster could not serve what needs one.
func noQuorum(tr *record.Trial, from, to time.Time) time.Duration {
	outs := outages(tr)
	if len(outs) == 0 || len(tr.Nodes) == 0 {
		return 0
	}
	// The instants where the set of members out can change.
	cuts := []time.Time{from, to}
	for _, o := range outs {
		for _, t := range []time.Time{o.from, o.to} {
			if t.After(from) && t.Before(to) {
				cuts = append(cuts, t)
			}
		}
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].Before(cuts[j]) })
	var lost time.Duration
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		if !b.After(a) {
			continue
		}
		out := map[string]bool{}
		for _, o := range outs {
			if !o.from.After(a) && !o.to.Before(b) {
				out[o.node] = true
			}
		}
		if 2*len(out) >= len(tr.Nodes) {
			lost += b.Sub(a)
		}
	}
	return lost
}

// quorumInDoubt reports whether the faults had half the members or more
// out at once at some time in [from, to] (noQuorum). A single instant
// counts: two faults that only touch still left no majority then.
func quorumInDoubt(tr *record.Trial, from, to time.Time) bool {
	if noQuorum(tr, from, to) > 0 {
		return true
	}
	// [from, to] of no length, or outages that only meet at an instant.
	outs := outages(tr)
	for _, o := range outs {
		out := map[string]bool{}
		for _, p := range outs {
			if !p.from.After(o.from) && !p.to.Before(o.from) {
				out[p.node] = true
			}
		}
		if !o.from.Before(from) && !o.from.After(to) && 2*len(out) >= len(tr.Nodes) {
			return true
		}
	}
	return false
}

// allowance returns how much longer than the progress bound a client of
// node may go without progress over [from, to]: the delay (or partition,
// or disconnect length) of every slowing fault that overlaps the period
// and hits node itself — a delay of d injected at t slows requests in
// [t, t+d], a member cut off cannot serve what needs a quorum until the
// heal. A fault on another member counts only when the profile excuses it
// (excuses, Input.SlowWaits: the target's design waits for that member) or
// when the faults take out half the members or more at once
// (quorumInDoubt); otherwise a healthy cluster routes around the slow
// member within the bound, and the slow checker judges the stall. With
// the quorum gone, the allowance is at least the time it was gone
// (noQuorum): a member partitioned while another was down after a kill, or
// two members stopped on injected errors.
func allowance(tr *record.Trial, excuses []SlowWait, node string, from, to time.Time) time.Duration {
	return allowanceFor(tr, excuses, true, node, from, to)
}

// allowanceFor is allowance, with the quorum rule applied when quorum is
// set (without it: what the rule excuses, see excusedStalls).
func allowanceFor(tr *record.Trial, excuses []SlowWait, quorum bool, node string, from, to time.Time) time.Duration {
	doubt := quorum && quorumInDoubt(tr, from, to)
	var sum time.Duration
	for _, in := range tr.Injections {
		if !holding(in) || !overlaps(in, from, to) {
			continue
		}
		if doubt || hits(tr, in, node) || excuseFor(excuses, in) != nil {
			sum += in.Delay
		}
	}
	if doubt {
		sum = max(sum, noQuorum(tr, from, to))
	}
	return sum
}

// stalls finds every client's stalls in tr. A client's activity spans from
// its first event to its last request (lastRequest) — or to the end of the
// workload when the workload timed out, since a request that never returns
// leaves no event.
func stalls(in *Input) []stall { return stallsExcusing(in, in.SlowWaits, true) }

// stallsExcusing is stalls with the profile's excuses given and the quorum
// rule on or off: nil, or false, finds the stalls that they excuse too
// (see excusedStalls).
func stallsExcusing(in *Input, excuses []SlowWait, quorum bool) []stall {
	tr := in.Trial
	threshold := in.progress()
	_, wlEnd := workloadSpan(tr)
	timedOut := in.WorkloadTimedOut || workloadTimedOut(tr)
	killed := killedSince(tr)
	var out []stall
	for _, tl := range timelines(tr) {
		evs := tl.events
		if len(evs) == 0 {
			continue
		}
		end := lastRequest(evs)
		if timedOut && wlEnd.After(end) {
			end = wlEnd
		}
		from := evs[0].Time
		errs, lastErr := 0, ""
		check := func(to time.Time, open bool) {
			if k, ok := killed[tl.node]; ok && k.Before(to) {
				// Only the part before the node was killed or died counts.
				to, open = k, true
			}
			if to.Sub(from) > threshold+allowanceFor(tr, excuses, quorum, tl.node, from, to)+killsAllowance(tr, from, to, threshold) {
				out = append(out, stall{client: tl.name, node: tl.node, from: from, to: to, errors: errs, lastErr: lastErr, open: open})
			}
		}
		for _, e := range evs {
			if e.Kind == record.EvError {
				errs++
				lastErr = e.Msg
			}
			if isProgress(e) {
				if s := sentAt(e); errs == 0 && s.After(from) && s.Before(e.Time) {
					// Idle until it sent this request: not a stall.
					from = s
				}
				if e.Time.After(from) {
					check(e.Time, false)
				}
				from, errs, lastErr = e.Time, 0, ""
			}
		}
		check(end, true)
	}
	return out
}

// lastRequest is the time of the last of evs that reports a request's
// outcome (progress, an op, an error): a client's activity ends there. A
// digest, a health report or a violation after it is no request of the
// load: a client idle after its last request while the workload waits for
// a slowed member's client (its digest comes when all are done) is not
// stalled. A request that hangs shows as its error when the request's
// timeout ends it, or as the workload's timeout.
func lastRequest(evs []record.ClientEvent) time.Time {
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Kind {
		case record.EvProgress, record.EvOp, record.EvError:
			return evs[i].Time
		}
	}
	return evs[0].Time
}

// sentAt is when the client sent the request e reports (record.ClientEvent
// Sent, an op's Call), zero when unknown. The time from the client's
// previous progress to it, when no request failed in between, the client
// asked nothing: it waited at its workload's barrier (the setup's wait for
// every member, a phase's end) or was done. This assumes what the bundled
// workloads do: a client sends one request at a time (a request that hangs
// while the same client's later one succeeds would be hidden).
func sentAt(e record.ClientEvent) time.Time {
	if !e.Sent.IsZero() {
		return e.Sent
	}
	if e.Op != nil && e.Op.Call != 0 {
		return time.Unix(0, e.Op.Call)
	}
	return time.Time{}
}

// workloadTimedOut reports whether the workload said its deadline passed.
func workloadTimedOut(tr *record.Trial) bool {
	for _, e := range tr.Client {
		if e.Client == workloadClient && e.Kind == record.EvError && strings.HasPrefix(e.Msg, "timeout") {
			return true
		}
	}
	return false
}
