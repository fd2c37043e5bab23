package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// stackDepth is how many frames of the injection stack identify a finding.
const stackDepth = 8

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
	// before are the symptoms whose every line came before the trial's
	// first fault (record.Verdict.BeforeFaults), normalised.
	before map[string]bool
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
			f := failure{trial: t, checker: v.Checker, symptom: check.SymptomKey(v.Symptom), nodes: v.Nodes, evidence: v.Evidence}
			for _, s := range v.Symptoms {
				f.symptoms = append(f.symptoms, check.SymptomKey(s))
			}
			for _, s := range v.Lasting {
				if f.lasting == nil {
					f.lasting = map[string]bool{}
				}
				f.lasting[check.SymptomKey(s)] = true
			}
			for _, s := range v.BeforeFaults {
				if f.before == nil {
					f.before = map[string]bool{}
				}
				f.before[check.SymptomKey(s)] = true
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
			if fl.before[fl.symptom] {
				c.f.BeforeFaults = append(c.f.BeforeFaults, t.ID)
			}
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
	f := Fault{Kind: inj.Kind.String(), Site: inj.SiteID, Node: inj.Node, Role: inj.Role, Error: inj.Error, State: inj.StateID, Peer: inj.Peer, Side: inj.Side, Held: inj.Held()}
	for _, in := range t.Injections[1:] {
		f.Then = append(f.Then, fmt.Sprintf("%s at %s on %s (occurrence %d)", in.Kind, in.SiteID, record.NodeRole(in.Node, in.Role), in.Occurrence))
	}
	if inj.Delay > 0 {
		f.Delay = inj.Delay.String()
	}
	for i, fr := range record.CallerStack(inj.Stack) {
		if i == stackDepth {
			break
		}
		f.Stack = append(f.Stack, fmt.Sprintf("%s %s:%d", fr.Func, fr.File, fr.Line))
	}
	return f
}
