// Package report turns judged trials into findings: failing verdicts
// clustered by the fault that preceded them (kind, site and the call stack
// that reached it) and the symptom, so a user reads one finding per root
// cause, each with the trials that show it and a command that replays one.
package report

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// Fault is the fault behind a finding.
type Fault struct {
	Kind string `json:"kind"` // "none" or a catalog.Kind's name: "error", "delay", "crash", "partition", …, "pause", "stop"
	Site string `json:"site,omitempty"`
	Node string `json:"node,omitempty"`
	// Role is the node's role when the fault struck, e.g. "StateLeader".
	Role  string `json:"role,omitempty"`
	Error string `json:"error,omitempty"`
	Delay string `json:"delay,omitempty"`
	// Peer is, for a disconnect, the member cut apart from Node; for a
	// one-way cut, the member Node could not reach; for a split, the
	// member on the other side that Node's call talked to.
	Peer string `json:"peer,omitempty"`
	// Side is, for a split, the other members on Node's side.
	Side []string `json:"side,omitempty"`
	// Held is, for a cut held until a condition, what it was held until
	// and how it ended (record.Injection.Held).
	Held  string   `json:"held,omitempty"`
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
	Reruns map[string]record.Rerun `json:"reruns,omitempty"`
	// CoOccurring are the other symptoms its trials showed beside the
	// finding's primary one (check.Rank): what followed from the same
	// fault, most trials first. They make no finding of their own.
	CoOccurring []CoSymptom `json:"co_occurring,omitempty"`
	// WithoutFaults, when set, says that some of the finding's trials
	// failed their workload's setup the way trials without a fault did
	// (SameWithoutFaults).
	WithoutFaults *SameWithoutFaults `json:"without_faults,omitempty"`
	// BeforeFaults are the trials in which every line of the finding's
	// (log) symptom came before the trial's first fault
	// (record.Verdict.BeforeFaults): there no fault caused it; it was
	// found without one.
	BeforeFaults []string `json:"before_faults,omitempty"`
}

// CoSymptom is a symptom that co-occurred with a finding's primary
// symptom: its checker, its normalised symptom and the finding's trials
// that showed it.
type CoSymptom struct {
	Checker string   `json:"checker"`
	Symptom string   `json:"symptom"`
	Trials  []string `json:"trials"`
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
	markWithoutFaults(r.Findings, faulty, faultFree)
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
func (r *Report) Annotate(db string, reruns map[string]record.Rerun) {
	for i, f := range r.FaultFree {
		for _, t := range f.Trials {
			if rr, ok := reruns[t]; ok {
				if r.FaultFree[i].Reruns == nil {
					r.FaultFree[i].Reruns = map[string]record.Rerun{}
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

// Note is a remark on a finding that its reader must not miss: some of
// its trials show the symptom without a fault's help. Label is one word
// ("before", "setup"); Text says which trials and why.
type Note struct {
	Label string `json:"label"`
	Text  string `json:"text"`
}

// Notes are f's remarks, in the order the report prints them: the trials
// whose symptom came before their first fault (BeforeFaults), and those
// that failed the setup as trials without a fault did (WithoutFaults).
// The text report and the dashboard both show them.
func (f Finding) Notes() []Note {
	var notes []Note
	if len(f.BeforeFaults) > 0 {
		notes = append(notes, Note{"before", strings.Join(f.BeforeFaults, " ") + ": every line of this symptom came before the trial's first fault, so no fault caused it there (found without one)"})
	}
	if wf := f.WithoutFaults; wf != nil {
		notes = append(notes, Note{"setup", fmt.Sprintf("%s failed the workload's setup as trials without a fault did (%s): %s",
			strings.Join(wf.Trials, " "), strings.Join(wf.FaultFree, " "), firstLine(wf.Reason))})
	}
	return notes
}
