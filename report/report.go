// Package report turns judged trials into findings: failing verdicts
// clustered by the fault that preceded them (kind, site and the call stack
// that reached it) and the symptom, so a user reads one finding per root
// cause, each with the trials that show it and a command that replays one.
package report

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// stackDepth is how many frames of the injection stack identify a finding.
const stackDepth = 8

// Fault is the fault behind a finding.
type Fault struct {
	Kind string `json:"kind"` // "error", "delay", "crash", "partition", "disconnect", "powerloss", "reboot" or "none"
	Site string `json:"site,omitempty"`
	Node string `json:"node,omitempty"`
	// Role is the node's role when the fault struck, e.g. "StateLeader".
	Role  string `json:"role,omitempty"`
	Error string `json:"error,omitempty"`
	Delay string `json:"delay,omitempty"`
	// Peer is, for a disconnect, the member cut apart from Node.
	Peer  string   `json:"peer,omitempty"`
	State string   `json:"state,omitempty"`
	Stack []string `json:"stack,omitempty"` // "func file:line", innermost first
	// Then are the later faults of the trial's fault sequence, in order,
	// each "kind at site on node (occurrence n)" (the fuzz policy).
	Then []string `json:"then,omitempty"`
}

// Site is one of the faults that led to a finding's symptom: a fault kind
// at a site, reached by similar call stacks, with the trials it struck in.
type Site struct {
	Fault  Fault    `json:"fault"`
	Trials []string `json:"trials"`
	// Replay re-runs this site's first trial.
	Replay string `json:"replay"`
}

// Finding is one symptom and the faults that led to it.
type Finding struct {
	ID      string `json:"id"`
	Checker string `json:"checker"`
	Symptom string `json:"symptom"`
	// Fault is the first of Sites, the fault that led to the symptom most
	// often.
	Fault Fault `json:"fault"`
	// Sites are the faults that led to the symptom, most trials first,
	// then the earliest; a finding's sites share its symptom, so a user
	// triages the symptom once and sees every way to reach it.
	Sites []Site `json:"sites"`
	// Trials are every trial that shows the symptom, in index order.
	Trials []string `json:"trials"`
	// Nodes are the nodes involved in any of the trials: where the fault
	// struck and where the symptom showed.
	Nodes    []string `json:"nodes,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	// Dir is the first trial's directory, with node logs.
	Dir string `json:"dir,omitempty"`
	// Replay is the command that re-runs the first trial of the first
	// site.
	Replay string `json:"replay"`
	// Reruns are, for a fault-free failure, what re-running its trials
	// without faults showed, by trial ID.
	Reruns map[string]Rerun `json:"reruns,omitempty"`
	// CoOccurring are the other symptoms its trials showed beside the
	// finding's primary one (check.Rank): what followed from the same
	// fault, most trials first. They make no finding of their own.
	CoOccurring []CoSymptom `json:"co_occurring,omitempty"`
}

// CoSymptom is a symptom that co-occurred with a finding's primary
// symptom: its checker, its normalised symptom and the finding's trials
// that showed it.
type CoSymptom struct {
	Checker string   `json:"checker"`
	Symptom string   `json:"symptom"`
	Trials  []string `json:"trials"`
}

// similar is the stack similarity (Jaccard index of the functions on two
// injection stacks) at which two faults at different sites are related
// (point.related) and two at one site took one path (point.samePath).
const similar = 0.5

// point is where a fault struck: its site or observation point
// (record.Injection.SiteID) and the functions on its injection stack.
type point struct {
	site  string
	funcs map[string]bool
}

// pointOf is the point of a trial's first fault.
func pointOf(f Fault) point { return point{site: f.Site, funcs: funcSet(f.Stack)} }

// related reports whether two faults struck at one place: the same site or
// observation point whatever their stacks — a partition or a
// sieve-insensitive plan has no stack, and two of them at one observation
// point are one place, not two unrelated ones — or stacks that share at
// least half their functions (similar), wherever the sites.
func (p point) related(q point) bool {
	if p.site != "" && p.site == q.site {
		return true
	}
	return jaccard(p.funcs, q.funcs) >= similar
}

// samePath reports whether two faults at one place took one path there,
// so that they are one Site of a finding: the same site, and similar
// stacks — or no stack on either side (a partition, a sieve-insensitive
// plan), which says nothing against it. Two call paths into one site stay
// two sites, as the call-stack-sensitive policies explore them.
func (p point) samePath(q point) bool {
	if p.site != q.site {
		return false
	}
	return len(p.funcs) == 0 || len(q.funcs) == 0 || jaccard(p.funcs, q.funcs) >= similar
}

// nodeName matches node and client names ("n2", "n2/0") in symptoms, so the
// same failure on different nodes is one finding.
var nodeName = regexp.MustCompile(`\bn\d+(/\d+)?\b`)

// Symptom normalises a verdict's symptom for clustering.
func Symptom(s string) string { return nodeName.ReplaceAllString(s, "n*") }

// Recurrence compares a replayed trial with the original: the original's
// failures ("checker: symptom") whose checker fails again in replayed, and
// those whose checker does not. A fault that races with timers can show a
// different mix of secondary symptoms from run to run (a gray failure seen
// from one side or the other) while its main failure recurs.
func Recurrence(orig, replayed *record.Trial) (recurred, missing []string) {
	again := map[string]bool{}
	for _, v := range replayed.Verdicts {
		if v.Failed {
			again[v.Checker] = true
		}
	}
	for _, v := range orig.Verdicts {
		if !v.Failed {
			continue
		}
		f := v.Checker + ": " + Symptom(v.Symptom)
		if again[v.Checker] {
			recurred = append(recurred, f)
		} else {
			missing = append(missing, f)
		}
	}
	return recurred, missing
}

// NotInjected lists the original's injected faults that the replayed
// trial did not inject at the same site on the same node ("crash at SITE
// on n2, occurrence 195"). A replay injects at the recorded occurrence or
// the first matching request after it, so a replay whose workload ran
// slower may never get there, and then it says nothing about the bug.
func NotInjected(orig, replayed *record.Trial) []string {
	type key struct {
		site, node string
		kind       catalog.Kind
	}
	got := map[key]int{}
	for _, inj := range replayed.Injections {
		got[key{inj.SiteID, inj.Node, inj.Kind}]++
	}
	var missing []string
	for _, inj := range orig.Injections {
		k := key{inj.SiteID, inj.Node, inj.Kind}
		if got[k] > 0 {
			got[k]--
			continue
		}
		f := fmt.Sprintf("%s at %s on %s", inj.Kind, inj.SiteID, inj.Node)
		if inj.Occurrence > 0 {
			f += fmt.Sprintf(", occurrence %d", inj.Occurrence)
		}
		missing = append(missing, f)
	}
	return missing
}

// DefaultGenericSites is the number of unrelated fault sites after which a
// new log symptom counts as a generic consequence of faults (Options).
const DefaultGenericSites = 3

// Options tune how failing verdicts become findings.
type Options struct {
	// GenericSites: a new-log symptom that followed faults at this many
	// unrelated sites or more is a generic consequence of faults
	// (informational), not a finding. 0 means DefaultGenericSites; a
	// negative value turns the rule off.
	GenericSites int
}

// Report is what a campaign's trials amount to.
type Report struct {
	// Findings are the failures of trials with an injected fault, one per
	// symptom.
	Findings []Finding `json:"findings"`
	// FaultFree are the failures of trials in which nothing was injected.
	FaultFree []Finding `json:"fault_free"`
	// Generic are the new-log symptoms judged generic consequences of
	// faults: each followed faults at Options.GenericSites or more
	// unrelated sites. They are informational, never findings.
	Generic []Finding `json:"generic"`
	// NotJudged are the trials their workload could not judge
	// (record.StatusNotJudged), in index order; Trials counts every trial
	// the report was made from.
	NotJudged []Unjudged `json:"not_judged,omitempty"`
	Trials    int        `json:"trials"`
}

// New turns judged trials into a report. Failing verdicts of trials with
// an injected fault become findings, grouped by symptom first (checker and
// normalised symptom), with the faults that led to each symptom listed
// inside (Finding.Sites); failures of trials without a fault are reported
// apart (FaultFree), since what fails without a fault is noise of the
// setup or a bug found without faults, never a fault's consequence.
//
// One root cause is one finding: a trial's failing verdicts follow from
// its one fault, so only its primary symptom — the failure of least
// check.Rank (lost data, then wrong data, then order, then a crash, then
// progress, then log lines) — is grouped; its other symptoms are the
// finding's CoOccurring, counted over its trials. Trials whose primary
// symptom agrees are one finding whatever else they violated, and each
// fault path (kind, site, similar stack) that led there is one of its
// Sites.
//
// The generic-consequence rule: the log checker reports every new
// warning-or-worse log template of a trial (record.Verdict.Symptoms). A
// template that followed faults at opts.GenericSites or more unrelated
// sites (faults are related at the same site or observation point, whatever
// their stacks, or when their injection stacks share at least half their
// functions: point.related) is what the system logs after faults in general (a
// peer lost, a request retried), not a sign of a bug at any one site: it
// is moved to Generic. A log verdict keeps its failure, with its first
// remaining symptom, only if some of its templates followed few sites.
// A template that in some trial went on after every fault's window had
// closed (record.Verdict.Lasting) is never generic: a system that keeps
// logging an error once the faults are over and the recovery bound has
// passed is not reacting to a fault but stuck in a state — how a leak or a
// retry loop that any fault starts shows (minikv's restream bug).
func New(trials []*record.Trial, opts Options) Report {
	ts := append([]*record.Trial(nil), trials...)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Index < ts[j].Index })
	faulty, faultFree := withFaults(ts, true), withFaults(ts, false)
	generic := genericLogs(faulty, cmp.Or(opts.GenericSites, DefaultGenericSites))
	var r Report
	var gen, kept []failure
	for _, f := range failures(faulty) {
		if f.checker != check.NameLog || len(generic) == 0 {
			kept = append(kept, f)
			continue
		}
		var specific []string
		for _, s := range f.symptoms {
			if generic[s] {
				gen = append(gen, failure{trial: f.trial, checker: f.checker, symptom: s, nodes: f.nodes, evidence: f.evidence})
			} else {
				specific = append(specific, s)
			}
		}
		if len(specific) > 0 {
			f.symptom, f.symptoms = specific[0], specific
			kept = append(kept, f)
		}
	}
	r.Findings = group(primaries(kept))
	r.FaultFree = group(primaries(failures(faultFree)))
	r.Generic = group(gen)
	r.NotJudged, r.Trials = unjudged(ts), len(ts)
	return r
}

// ReplayCommand is the command that replays trial of the database db.
func ReplayCommand(db, trial string) string {
	return fmt.Sprintf("gofault replay --db %s %s", db, trial)
}

// Annotate adds to r what the store holds beside its trials: each
// fault-free failure's re-runs (reruns, by trial ID) and, for every finding
// and every site inside one, the command that replays its first trial
// from the database db.
func (r *Report) Annotate(db string, reruns map[string]Rerun) {
	for i, f := range r.FaultFree {
		for _, t := range f.Trials {
			if rr, ok := reruns[t]; ok {
				if r.FaultFree[i].Reruns == nil {
					r.FaultFree[i].Reruns = map[string]Rerun{}
				}
				r.FaultFree[i].Reruns[t] = rr
			}
		}
	}
	for _, fs := range [][]Finding{r.Findings, r.FaultFree, r.Generic} {
		for i := range fs {
			fs[i].Replay = ReplayCommand(db, fs[i].Trials[0])
			for j := range fs[i].Sites {
				fs[i].Sites[j].Replay = ReplayCommand(db, fs[i].Sites[j].Trials[0])
			}
		}
	}
}

// withFaults returns the trials with (injected) or without injections.
func withFaults(trials []*record.Trial, injected bool) []*record.Trial {
	var out []*record.Trial
	for _, t := range trials {
		if (len(t.Injections) > 0) == injected {
			out = append(out, t)
		}
	}
	return out
}

// failure is one failing verdict of one trial, its symptoms normalised.
type failure struct {
	trial    *record.Trial
	checker  string
	symptom  string
	symptoms []string // every failing symptom, symptom first
	nodes    []string
	evidence []string
	// also are the trial's other symptoms, set on its primary failure
	// (primaries).
	also []coKey
	// lasting are the symptoms whose lines outlasted every fault's
	// window (record.Verdict.Lasting), normalised.
	lasting map[string]bool
}

// coKey is a checker and a normalised symptom.
type coKey struct{ checker, symptom string }

// primaries keeps each trial's primary failure, the one of least
// check.Rank (the first of equals), with the trial's other symptoms — the
// rest of its own and every symptom of the others — in also. fails are in
// trial order, as failures lists them.
func primaries(fails []failure) []failure {
	var out []failure
	for i := 0; i < len(fails); {
		j := i
		for j < len(fails) && fails[j].trial == fails[i].trial {
			j++
		}
		trial := slices.Clone(fails[i:j])
		sort.SliceStable(trial, func(a, b int) bool {
			return check.Rank(trial[a].checker, trial[a].symptom) < check.Rank(trial[b].checker, trial[b].symptom)
		})
		p := trial[0]
		p.also = nil
		for k, f := range trial {
			syms := f.symptoms
			if k == 0 {
				syms = syms[1:]
			}
			for _, s := range syms {
				if c := (coKey{f.checker, s}); !slices.Contains(p.also, c) && c != (coKey{p.checker, p.symptom}) {
					p.also = append(p.also, c)
				}
			}
		}
		out = append(out, p)
		i = j
	}
	return out
}

// failures lists the failing verdicts of trials, in order.
func failures(trials []*record.Trial) []failure {
	var out []failure
	for _, t := range trials {
		for _, v := range t.Verdicts {
			if !v.Failed {
				continue
			}
			f := failure{trial: t, checker: v.Checker, symptom: Symptom(v.Symptom), nodes: v.Nodes, evidence: v.Evidence}
			for _, s := range v.Symptoms {
				f.symptoms = append(f.symptoms, Symptom(s))
			}
			for _, s := range v.Lasting {
				if f.lasting == nil {
					f.lasting = map[string]bool{}
				}
				f.lasting[Symptom(s)] = true
			}
			if gs := check.Guarantees(f.symptom); v.Checker == check.NameViolations && len(f.symptoms) == 0 && len(gs) > 1 {
				// A trial stored before the violations checker ranked its
				// guarantees names their set: rank it now.
				for _, g := range check.RankGuarantees(gs) {
					f.symptoms = append(f.symptoms, check.ViolationSymptom(g))
				}
				f.symptom = f.symptoms[0]
			}
			if len(f.symptoms) == 0 {
				f.symptoms = []string{f.symptom}
			}
			out = append(out, f)
		}
	}
	return out
}

// genericLogs returns the new-log symptoms of trials that followed faults
// at min or more unrelated sites (see New); none when min < 0.
func genericLogs(trials []*record.Trial, min int) map[string]bool {
	if min < 0 {
		return nil
	}
	sites := map[string][]point{} // symptom -> one point per unrelated site
	lasted := map[string]bool{}
	for _, f := range failures(trials) {
		if f.checker != check.NameLog {
			continue
		}
		p := pointOf(faultOf(f.trial))
		for _, s := range f.symptoms {
			if f.lasting[s] {
				lasted[s] = true
			}
			related := false
			for _, other := range sites[s] {
				if other.related(p) {
					related = true
					break
				}
			}
			if !related {
				sites[s] = append(sites[s], p)
			}
		}
	}
	out := map[string]bool{}
	for s, fs := range sites {
		if len(fs) >= min && !lasted[s] {
			out[s] = true
		}
	}
	return out
}

// group makes one finding per checker and symptom, with a Site per fault
// kind and site (and similar stacks) that led to it.
func group(fails []failure) []Finding {
	type siteGroup struct {
		site  *Site
		at    point
		first int // index of the site's first trial
	}
	type cluster struct {
		f     *Finding
		sites []*siteGroup
		nodes map[string]bool
		also  map[coKey][]string // co-occurring symptom -> trials
		order []coKey            // co-occurring symptoms, first seen first
	}
	byKey := map[string]*cluster{}
	var all []*cluster
	for _, fl := range fails {
		t := fl.trial
		key := fl.checker + "\x00" + fl.symptom
		c := byKey[key]
		if c == nil {
			sum := sha256.Sum256([]byte(key))
			c = &cluster{
				f:     &Finding{ID: hex.EncodeToString(sum[:])[:10], Checker: fl.checker, Symptom: fl.symptom, Evidence: fl.evidence, Dir: t.Dir},
				nodes: map[string]bool{},
				also:  map[coKey][]string{},
			}
			byKey[key] = c
			all = append(all, c)
		}
		if n := len(c.f.Trials); n == 0 || c.f.Trials[n-1] != t.ID {
			c.f.Trials = append(c.f.Trials, t.ID)
		}
		fault := faultOf(t)
		p := pointOf(fault)
		var sg *siteGroup
		for _, cand := range c.sites {
			if cand.site.Fault.Kind == fault.Kind && cand.at.samePath(p) {
				sg = cand
				break
			}
		}
		if sg == nil {
			sg = &siteGroup{site: &Site{Fault: fault, Replay: "gofault replay " + t.ID}, at: p, first: t.Index}
			c.sites = append(c.sites, sg)
		}
		if n := len(sg.site.Trials); n == 0 || sg.site.Trials[n-1] != t.ID {
			sg.site.Trials = append(sg.site.Trials, t.ID)
		}
		for _, k := range fl.also {
			ts, seen := c.also[k]
			if !seen {
				c.order = append(c.order, k)
			}
			if n := len(ts); n == 0 || ts[n-1] != t.ID {
				c.also[k] = append(ts, t.ID)
			}
		}
		for _, n := range fl.nodes {
			c.nodes[n] = true
		}
		if fault.Node != "" {
			c.nodes[fault.Node] = true
		}
	}
	out := make([]Finding, 0, len(all))
	for _, c := range all {
		sort.SliceStable(c.sites, func(i, j int) bool {
			a, b := c.sites[i], c.sites[j]
			if len(a.site.Trials) != len(b.site.Trials) {
				return len(a.site.Trials) > len(b.site.Trials)
			}
			return a.first < b.first
		})
		for _, sg := range c.sites {
			c.f.Sites = append(c.f.Sites, *sg.site)
		}
		c.f.Fault = c.f.Sites[0].Fault
		c.f.Replay = c.f.Sites[0].Replay
		for n := range c.nodes {
			c.f.Nodes = append(c.f.Nodes, n)
		}
		sort.Strings(c.f.Nodes)
		for _, k := range c.order {
			c.f.CoOccurring = append(c.f.CoOccurring, CoSymptom{Checker: k.checker, Symptom: k.symptom, Trials: c.also[k]})
		}
		sort.SliceStable(c.f.CoOccurring, func(i, j int) bool {
			return len(c.f.CoOccurring[i].Trials) > len(c.f.CoOccurring[j].Trials)
		})
		out = append(out, *c.f)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].Trials) != len(out[j].Trials) {
			return len(out[i].Trials) > len(out[j].Trials)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// funcSet is the set of functions on a rendered stack.
func funcSet(stack []string) map[string]bool {
	m := make(map[string]bool, len(stack))
	for _, s := range stack {
		fn, _, _ := strings.Cut(s, " ")
		m[fn] = true
	}
	return m
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// faultOf describes the first fault of a trial (most trials have one),
// with the later faults of a sequence in Then.
func faultOf(t *record.Trial) Fault {
	if len(t.Injections) == 0 {
		return Fault{Kind: "none"}
	}
	inj := t.Injections[0]
	f := Fault{Kind: inj.Kind.String(), Site: inj.SiteID, Node: inj.Node, Role: inj.Role, Error: inj.Error, State: inj.StateID, Peer: inj.Peer}
	for _, in := range t.Injections[1:] {
		f.Then = append(f.Then, fmt.Sprintf("%s at %s on %s (occurrence %d)", in.Kind, in.SiteID, record.NodeRole(in.Node, in.Role), in.Occurrence))
	}
	if inj.Delay > 0 {
		f.Delay = inj.Delay.String()
	}
	for i, fr := range inj.Stack {
		if i == stackDepth {
			break
		}
		f.Stack = append(f.Stack, fmt.Sprintf("%s %s:%d", fr.Func, fr.File, fr.Line))
	}
	return f
}

// Rerun is how a fault-free failure fared when its trial was run again
// without faults: in how many of Runs re-runs some of its failures
// recurred.
type Rerun struct {
	Runs     int `json:"runs"`
	Recurred int `json:"recurred"`
}

// Kind says what the re-runs make of the failure: "reproducible" (it
// recurred every time), "flaky" (sometimes) or "one-off" (never).
func (r Rerun) Kind() string {
	switch {
	case r.Recurred == 0:
		return "one-off"
	case r.Recurred == r.Runs:
		return "reproducible"
	}
	return "flaky"
}

// RerunChecked reports whether failure f of orig can be judged by a
// fault-free re-run: the log checker's cannot, since every fault-free
// trial teaches the log baseline what it logged.
func RerunChecked(v record.Verdict) bool { return v.Failed && v.Checker != check.NameLog }

// Recurs reports whether some failure of orig that a re-run can judge
// (RerunChecked) failed again in rerun.
func Recurs(orig, rerun *record.Trial) bool {
	again := map[string]bool{}
	for _, v := range rerun.Verdicts {
		if v.Failed {
			again[v.Checker] = true
		}
	}
	for _, v := range orig.Verdicts {
		if RerunChecked(v) && again[v.Checker] {
			return true
		}
	}
	return false
}

// WriteFaultFree writes the fault-free failures for humans, after the
// findings, with what their re-runs showed (Finding.Reruns); nothing when
// there are none.
func WriteFaultFree(w io.Writer, failures []Finding) error {
	if len(failures) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nfault-free failures: %d (no fault was injected in these trials: noise of the setup, or a bug found without faults)\n", len(failures))
	for i, f := range failures {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := WriteText(w, failures[i:i+1]); err != nil {
			return err
		}
		var rs []string
		for _, t := range f.Trials {
			if r, ok := f.Reruns[t]; ok {
				rs = append(rs, fmt.Sprintf("%s recurred in %d of %d re-runs (%s)", t, r.Recurred, r.Runs, r.Kind()))
			}
		}
		if len(rs) > 0 {
			fmt.Fprintf(w, "  re-runs  %s\n", strings.Join(rs, "; "))
		}
	}
	return nil
}

// WriteGeneric writes the generic consequences of faults for humans,
// after the findings; nothing when there are none.
func WriteGeneric(w io.Writer, generic []Finding) error {
	if len(generic) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\ngeneric consequences of faults: %d (informational: new log lines that followed faults at many unrelated sites)\n", len(generic))
	for _, g := range generic {
		fmt.Fprintf(w, "  [%s] %s — after %d faults in %d trials (%s)\n", g.Checker, g.Symptom, len(g.Sites), len(g.Trials), faultLine(g.Sites[0].Fault))
	}
	return nil
}

// faultLine describes a fault in one line.
func faultLine(f Fault) string {
	if f.Kind == "none" {
		return "no fault"
	}
	detail := f.Error
	if f.Delay != "" {
		detail = f.Delay
	}
	if d := partitionDetail(f); d != "" {
		detail = d
	}
	if detail != "" {
		detail += " "
	}
	if f.Peer != "" {
		return fmt.Sprintf("%s %sat %s of %s from %s", f.Kind, detail, f.Site, record.NodeRole(f.Node, f.Role), f.Peer)
	}
	return fmt.Sprintf("%s %sat %s on %s", f.Kind, detail, f.Site, record.NodeRole(f.Node, f.Role))
}

// WriteText writes findings for humans: per finding its symptom, the
// faults that led to it (the first with its state and stack), evidence,
// trials and the replay command.
func WriteText(w io.Writer, findings []Finding) error {
	if len(findings) == 0 {
		_, err := fmt.Fprintln(w, "no findings")
		return err
	}
	for i, f := range findings {
		fmt.Fprintf(w, "finding %s  [%s] %s\n", f.ID, f.Checker, f.Symptom)
		if f.Fault.Kind == "none" {
			fmt.Fprintf(w, "  fault    none (fails without injected faults)\n")
		} else {
			fmt.Fprintf(w, "  sites    %d (the faults that led to this symptom, most trials first; gofault replay %s/K replays the K-th)\n", len(f.Sites), f.ID)
			for j, s := range f.Sites {
				fmt.Fprintf(w, "  %-8s %s (%d trials; %s)\n", fmt.Sprintf("fault %d", j+1), faultLine(s.Fault), len(s.Trials), s.Replay)
				for _, t := range s.Fault.Then {
					fmt.Fprintf(w, "           then %s\n", t)
				}
				if j > 0 {
					continue
				}
				if s.Fault.State != "" {
					fmt.Fprintf(w, "  state    %s\n", s.Fault.State)
				}
				for _, fr := range s.Fault.Stack {
					fmt.Fprintf(w, "           %s\n", fr)
				}
			}
		}
		for _, co := range f.CoOccurring {
			fmt.Fprintf(w, "  also     [%s] %s (in %d of %d trials)\n", co.Checker, co.Symptom, len(co.Trials), len(f.Trials))
		}
		for j, e := range f.Evidence {
			if j == 5 {
				fmt.Fprintf(w, "           ... %d more\n", len(f.Evidence)-5)
				break
			}
			fmt.Fprintf(w, "  evidence %s\n", e)
		}
		fmt.Fprintf(w, "  trials   %s\n", strings.Join(f.Trials, " "))
		if f.Dir != "" {
			fmt.Fprintf(w, "  logs     %s\n", f.Dir)
		}
		fmt.Fprintf(w, "  replay   %s\n", f.Replay)
		if i < len(findings)-1 {
			fmt.Fprintln(w)
		}
	}
	return nil
}

// logTail is how many lines of each node's log WriteTrials shows.
const logTail = 10

// WriteTrials writes one line per trial: its status, duration, faults and
// the checkers that failed it; with full, a trial's whole error and, for
// a trial that failed or could not run, the last lines of each node's log.
func WriteTrials(w io.Writer, trials []*record.Trial, full bool) error {
	for _, t := range trials {
		var faults []string
		for _, inj := range t.Injections {
			detail := inj.Error
			if inj.Delay > 0 {
				detail = inj.Delay.String()
			}
			if inj.Kind == catalog.KindPartition || inj.Kind == catalog.KindDisconnect {
				faults = append(faults, partitionLine(inj, t))
				continue
			}
			faults = append(faults, fmt.Sprintf("%s %s at %s on %s", inj.Kind, detail, inj.SiteID, record.NodeRole(inj.Node, inj.Role)))
		}
		if len(faults) == 0 {
			faults = []string{"no fault"}
		}
		var failed []string
		for _, v := range t.Verdicts {
			if v.Failed {
				failed = append(failed, v.Checker+": "+v.Symptom)
			}
		}
		cov := ""
		if t.Blocks > 0 {
			cov = fmt.Sprintf("  [%d blocks, +%d new]", t.Blocks, t.NewBlocks)
		}
		fmt.Fprintf(w, "%-8s %-6s %5.1fs %-9s %s%s\n", t.ID, t.Status, t.End.Sub(t.Start).Seconds(), t.Policy, strings.Join(faults, "; "), cov)
		for _, f := range failed {
			fmt.Fprintf(w, "%25s %s\n", "", f)
		}
		switch {
		case t.Err != "" && full:
			for _, l := range strings.Split(strings.TrimRight(t.Err, "\n"), "\n") {
				fmt.Fprintf(w, "%25s | %s\n", "", l)
			}
		case t.Err != "":
			fmt.Fprintf(w, "%25s (%s)\n", "", firstLine(t.Err))
		}
		if full && len(t.Roles) > 0 {
			var changes []string
			for _, c := range t.Roles {
				changes = append(changes, fmt.Sprintf("%s %s at %.1fs", c.Node, c.Role, c.Time.Sub(t.Start).Seconds()))
			}
			fmt.Fprintf(w, "%25s roles: %s\n", "", strings.Join(changes, ", "))
		}
		if full {
			for _, v := range t.Verdicts {
				writeVerdictDismissed(w, v)
			}
		}
		if full && t.Status != record.StatusOK {
			for _, n := range t.Nodes {
				lines, err := tail(n.Log, logTail)
				if err != nil {
					fmt.Fprintf(w, "%25s %s log: %v\n", "", n.Name, err)
					continue
				}
				fmt.Fprintf(w, "%25s %s log (last %d lines of %s):\n", "", n.Name, len(lines), n.Log)
				for _, l := range lines {
					fmt.Fprintf(w, "%25s | %s\n", "", l)
				}
			}
		}
	}
	return nil
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("not recorded")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return lines[max(0, len(lines)-n):], nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// SiteReach is where the requests at one fault site arrived over a
// campaign: the node roles and abstract states in which a fault there could
// strike.
type SiteReach struct {
	Site     string  `json:"site"`
	Requests int     `json:"requests"`
	Reached  []Reach `json:"reached"`
}

// Reach is one (role, state) in which a site was reached: its requests and
// the trials they came in.
type Reach struct {
	Role     string `json:"role,omitempty"`  // "" when unknown
	State    string `json:"state,omitempty"` // "" when none
	Requests int    `json:"requests"`
	Trials   int    `json:"trials"`
}

// Reached sums the trials' request counts (record.Trial.Reached) by site,
// role and state: sites by requests, most first, and within a site its
// (role, state) pairs the same way.
func Reached(trials []*record.Trial) []SiteReach {
	type key struct{ site, role, state string }
	per := map[key]*Reach{}
	sites := map[string]*SiteReach{}
	for _, t := range trials {
		for _, r := range t.Reached {
			k := key{r.SiteID, r.Role, r.State}
			x := per[k]
			if x == nil {
				x = &Reach{Role: r.Role, State: r.State}
				per[k] = x
			}
			x.Requests += r.Requests
			x.Trials++
			s := sites[r.SiteID]
			if s == nil {
				s = &SiteReach{Site: r.SiteID}
				sites[r.SiteID] = s
			}
			s.Requests += r.Requests
		}
	}
	for k, x := range per {
		sites[k.site].Reached = append(sites[k.site].Reached, *x)
	}
	out := make([]SiteReach, 0, len(sites))
	for _, s := range sites {
		sort.Slice(s.Reached, func(i, j int) bool {
			a, b := s.Reached[i], s.Reached[j]
			if a.Requests != b.Requests {
				return a.Requests > b.Requests
			}
			return a.Role+"\x00"+a.State < b.Role+"\x00"+b.State
		})
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Requests != out[j].Requests {
			return out[i].Requests > out[j].Requests
		}
		return out[i].Site < out[j].Site
	})
	return out
}

// WriteReached writes, per site, the roles and states its requests arrived
// in, with their request and trial counts.
func WriteReached(w io.Writer, sites []SiteReach) error {
	if len(sites) == 0 {
		_, err := fmt.Fprintln(w, "no requests recorded by site (campaigns before gofault recorded them, or no live site was reached)")
		return err
	}
	for _, s := range sites {
		if _, err := fmt.Fprintf(w, "%s  (%d requests)\n", s.Site, s.Requests); err != nil {
			return err
		}
		rw, sw := 0, 0
		for _, r := range s.Reached {
			rw, sw = max(rw, len(cmp.Or(r.Role, "role unknown"))), max(sw, len(cmp.Or(r.State, "no state")))
		}
		for _, r := range s.Reached {
			role, state := cmp.Or(r.Role, "role unknown"), cmp.Or(r.State, "no state")
			if _, err := fmt.Fprintf(w, "  %-*s  %-*s  %7d requests in %d trials\n", rw, role, sw, state, r.Requests, r.Trials); err != nil {
				return err
			}
		}
	}
	return nil
}
