package check

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// Slow is the fail-slow checker (Sieve's oracle, made precise): when a
// fault slows or cuts one member — a delay, a partition, a disconnect (both
// of whose ends it hits) — the clients of the other members must make
// progress again within the progress bound (Input.Progress, calibrated from
// a measured leader failover): a healthy cluster routes around one slow
// member as it does around a dead one. A stall of such a client that lasts
// longer than the bound after the fault struck fails the trial, with the
// slow member and its role when the fault struck, whether leadership moved
// meanwhile and what the members said about their health.
//
// The slowed member's own clients keep the fault's allowance (the hang
// checker judges them), clients of a node gofault killed are excluded, a
// stall while half the members or more are slowed is no one member's, and
// a fault the profile says the design waits for (Input.SlowWaits) is
// excused and shown in the evidence.
type Slow struct{}

// Name implements Checker.
func (Slow) Name() string { return NameSlow }

// Check implements Checker.
func (Slow) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameSlow)
	tr := in.Trial
	nodes := map[string]bool{}
	var first *record.Injection
	for _, s := range stalls(in) {
		f, after := slowedElsewhere(in, s)
		if f == nil {
			continue // no fault elsewhere explains it: the hang checker's
		}
		if first == nil {
			first = f
		}
		nodes[s.node] = true
		v.Evidence = append(v.Evidence, describeSlowStall(tr, in.progress(), s, f, after)...)
	}
	excused := excusedStalls(in)
	if first == nil {
		if len(excused) > 0 {
			v.Symptom = "informational: a stall the profile excuses (checkers.waits_for_slow)"
			v.Evidence = capEvidence(excused)
		}
		return v
	}
	v.Failed = true
	v.Symptom = fmt.Sprintf("one slow member stalled the other members' clients (%s of a %s)", first.Kind, roleOr(first.Role))
	v.Nodes = sortedSet(nodes)
	v.Evidence = capEvidence(append(v.Evidence, excused...))
	return v
}

// slowedElsewhere returns the slowing fault on another member than the
// stalled client's that explains stall s: it overlaps the stall, and the
// stall went on for longer than the bound (with the client's own
// allowances) after it struck; after is how long. Nil when none does.
func slowedElsewhere(in *Input, s stall) (f *record.Injection, after time.Duration) {
	tr := in.Trial
	for i := range tr.Injections {
		inj := &tr.Injections[i]
		if !slowing(*inj) || hits(tr, *inj, s.node) || !overlaps(*inj, s.from, s.to) {
			continue
		}
		from := s.from
		if inj.Time.After(from) {
			from = inj.Time
		}
		limit := in.progress() + allowance(tr, in.SlowWaits, s.node, from, s.to) + killsAllowance(tr, from, s.to, in.progress())
		if d := s.to.Sub(from); d > limit {
			return inj, d
		}
	}
	return nil, 0
}

// describeSlowStall is the evidence of one stall of another member's
// client during slowing fault f.
func describeSlowStall(tr *record.Trial, bound time.Duration, s stall, f *record.Injection, after time.Duration) []string {
	how := "requests hanging"
	if s.failing() {
		how = fmt.Sprintf("%d failed requests, last: %s", s.errors, s.lastErr)
	}
	end := "until its next progress"
	if s.open {
		end = "until its last event"
	}
	out := []string{
		fmt.Sprintf("client %s (node %s): no progress from %s to %s (%s, %s after the fault struck; bound %s), %s, %s",
			s.client, s.node, clock(s.from), clock(s.to), s.to.Sub(s.from).Round(time.Millisecond), after.Round(time.Millisecond), bound, end, how),
		"  slow member: " + describeSlowFault(f),
	}
	from := f.Time
	if s.from.After(from) {
		from = s.from
	}
	out = append(out, "  leadership: "+leadership(tr, from, s.to))
	out = append(out, "  health meanwhile: "+healthDuring(tr, from, s.to))
	return out
}

// describeSlowFault names fault f: its kind, member(s) and role, site and
// how long it slowed them.
func describeSlowFault(f *record.Injection) string {
	who := record.NodeRole(f.Node, f.Role)
	switch f.Kind {
	case catalog.KindDisconnect:
		who += " cut from " + f.Peer
	case catalog.KindOneWay:
		who += " cut from reaching " + f.Peer + " (" + f.Peer + " still reached it)"
	case catalog.KindSplit:
		who = "side " + strings.Join(append([]string{who}, f.Side...), ", ") + " cut from the other members"
	case catalog.KindDelay:
		if f.Peer != "" {
			who += " on its call with " + f.Peer
		}
	}
	return fmt.Sprintf("%s %s at site %s from %s to %s (%s)", f.Kind, who, f.SiteID, clock(f.Time), clock(f.Time.Add(f.Delay)), f.Delay)
}

// leadership says whether leadership moved in [from, to]: a member taking
// a leader's role (Trial.Roles), and the members whose clients heard them
// say they lead (record.HealthLeader).
func leadership(tr *record.Trial, from, to time.Time) string {
	var moves []string
	for _, r := range tr.Roles {
		if isLeaderRole(r.Role) && !r.Time.Before(from) && !r.Time.After(to) {
			moves = append(moves, fmt.Sprintf("%s became %s at %s", r.Node, r.Role, clock(r.Time)))
		}
	}
	said := map[string]bool{}
	for _, e := range tr.Client {
		if e.Kind == record.EvHealthy && e.Msg == record.HealthLeader && !e.Time.Before(from) && !e.Time.After(to) {
			said[e.Node] = true
		}
	}
	out := "did not move"
	if len(moves) > 0 {
		out = "moved: " + strings.Join(moves, ", ")
	}
	if len(said) > 0 {
		out += fmt.Sprintf("; said to lead meanwhile: %v", sortedSet(said))
	}
	return out
}

// isLeaderRole reports whether a recorded role is a leader's ("Leader",
// "StateLeader", minikv's "roleLeader").
func isLeaderRole(role string) bool {
	return leaderRole(role) || strings.HasSuffix(strings.ToLower(role), "leader")
}

// healthDuring counts, per member, what it said about its health in
// [from, to] (record.EvHealthy, EvUnhealthy).
func healthDuring(tr *record.Trial, from, to time.Time) string {
	type count struct{ healthy, unhealthy int }
	by := map[string]*count{}
	for _, e := range tr.Client {
		if (e.Kind != record.EvHealthy && e.Kind != record.EvUnhealthy) || e.Time.Before(from) || e.Time.After(to) {
			continue
		}
		c := by[e.Node]
		if c == nil {
			c = &count{}
			by[e.Node] = c
		}
		if e.Kind == record.EvHealthy {
			c.healthy++
		} else {
			c.unhealthy++
		}
	}
	if len(by) == 0 {
		return "nothing reported"
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s healthy %d, unhealthy %d", n, by[n].healthy, by[n].unhealthy))
	}
	return strings.Join(parts, "; ")
}

func roleOr(role string) string {
	if role == "" {
		return "member"
	}
	return role
}

// SlowWait is a profile's statement (config checkers.waits_for_slow) that
// the target's documented design waits for a slowed member — a quorum that
// needs it, a static leader — so the other members' clients may stall as
// long as such a fault lasts. The hang, gray and slow checkers then count
// the fault in every client's allowance, and show what it excused.
type SlowWait struct {
	// Kind is the fault kind: catalog.KindDelay, KindPause, KindStop,
	// or a cut (catalog.Kind.Cuts: KindPartition, KindDisconnect, KindOneWay,
	// KindSplit, KindLeaderCut).
	Kind catalog.Kind
	// Role limits it to faults that struck a member in this role
	// (record.Injection.Role, e.g. "StateLeader"); "" any.
	Role string
	// Site limits it to faults at this site (stable site ID); "" any.
	Site string
	// Node limits it to faults that struck this member (Injection.Node, a
	// static leader); "" any.
	Node string
	// Reason is why the design waits, shown with what it excused.
	Reason string
}

// matches reports whether w covers fault in.
func (w SlowWait) matches(in record.Injection) bool {
	return in.Kind == w.Kind && (w.Role == "" || w.Role == in.Role) && (w.Site == "" || w.Site == in.SiteID) && (w.Node == "" || w.Node == in.Node)
}

// excuseFor returns the first of excuses that covers fault in, or nil.
func excuseFor(excuses []SlowWait, in record.Injection) *SlowWait {
	for i := range excuses {
		if excuses[i].matches(in) {
			return &excuses[i]
		}
	}
	return nil
}

// excusedStalls returns an evidence line for every stall that the
// profile's excuses (Input.SlowWaits) dismissed: it is a stall without
// them and none with them.
func excusedStalls(in *Input) []string {
	if len(in.SlowWaits) == 0 {
		return nil
	}
	type key struct {
		client string
		from   time.Time
	}
	kept := map[key]bool{}
	for _, s := range stalls(in) {
		kept[key{s.client, s.from}] = true
	}
	var out []string
	for _, s := range stallsExcusing(in, nil, true) {
		if kept[key{s.client, s.from}] {
			continue
		}
		for _, f := range in.Trial.Injections {
			w := excuseFor(in.SlowWaits, f)
			if w == nil || !holding(f) || hits(in.Trial, f, s.node) || !overlaps(f, s.from, s.to) {
				continue
			}
			out = append(out, fmt.Sprintf("excused by the profile: client %s (node %s) made no progress from %s to %s (%s) during %s: %s",
				s.client, s.node, clock(s.from), clock(s.to), s.to.Sub(s.from).Round(time.Millisecond), describeSlowFault(&f), w.Reason))
			break
		}
	}
	return out
}

// allowanceExcused returns an evidence line for every stall that an
// allowance dismissed: the profile's excuses (excusedStalls), then the
// quorum rule (quorumExcused). The hang and gray checkers, which judge the
// same stalls, show them beside their verdicts, so what either excused is
// in its report.
func allowanceExcused(in *Input) []string {
	return append(excusedStalls(in), quorumExcused(in)...)
}

// quorumExcused returns an evidence line for every stall that the quorum
// rule (allowance, noQuorum) dismissed: it is a stall without the rule and
// none with it (allowanceExcused).
func quorumExcused(in *Input) []string {
	kept := map[string]bool{}
	for _, s := range stalls(in) {
		kept[s.client+"|"+s.from.String()] = true
	}
	var out []string
	for _, s := range stallsExcusing(in, in.SlowWaits, false) {
		if kept[s.client+"|"+s.from.String()] {
			continue
		}
		out = append(out, fmt.Sprintf("excused by quorum loss: client %s (node %s) made no progress from %s to %s (%s) while the faults had half the members or more out for %s: %s",
			s.client, s.node, clock(s.from), clock(s.to), s.to.Sub(s.from).Round(time.Millisecond),
			noQuorum(in.Trial, s.from, s.to).Round(time.Millisecond), describeOutages(in.Trial, s.from, s.to)))
	}
	return out
}

// describeOutages lists the outages (outages) that overlap [from, to].
func describeOutages(tr *record.Trial, from, to time.Time) string {
	var parts []string
	for _, o := range outages(tr) {
		if !o.from.After(to) && !o.to.Before(from) {
			parts = append(parts, fmt.Sprintf("%s out from %s to %s", o.node, clock(o.from), clock(o.to)))
		}
	}
	return strings.Join(parts, ", ")
}
