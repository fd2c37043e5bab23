package check

import (
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

// delayDuring returns the total injected delay whose effect overlaps
// [from, to]: a delay of d injected at t slows requests in [t, t+d], so a
// stall may be that much longer before it counts. A partition of length d
// counts the same: a member cut off from its peers cannot serve what needs
// a quorum until the heal, its expected unavailability, and the others may
// need an election meanwhile; what is left of a stall after it is judged.
func delayDuring(tr *record.Trial, from, to time.Time) time.Duration {
	var sum time.Duration
	for _, in := range tr.Injections {
		if (in.Kind != catalog.KindDelay && in.Kind != catalog.KindPartition && in.Kind != catalog.KindDisconnect) || in.Delay <= 0 {
			continue
		}
		if !in.Time.After(to) && !in.Time.Add(in.Delay).Before(from) {
			sum += in.Delay
		}
	}
	return sum
}

// stalls finds every client's stalls in tr. A client's activity spans from
// its first to its last event — or to the end of the workload when the
// workload timed out, since a request that never returns leaves no event.
func stalls(in *Input) []stall {
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
		end := evs[len(evs)-1].Time
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
			if to.Sub(from) > threshold+delayDuring(tr, from, to)+killsAllowance(tr, from, to, threshold) {
				out = append(out, stall{client: tl.name, node: tl.node, from: from, to: to, errors: errs, lastErr: lastErr, open: open})
			}
		}
		for _, e := range evs {
			if e.Kind == record.EvError {
				errs++
				lastErr = e.Msg
			}
			if isProgress(e) {
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

// workloadTimedOut reports whether the workload said its deadline passed.
func workloadTimedOut(tr *record.Trial) bool {
	for _, e := range tr.Client {
		if e.Client == workloadClient && e.Kind == record.EvError && strings.HasPrefix(e.Msg, "timeout") {
			return true
		}
	}
	return false
}
