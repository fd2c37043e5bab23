package policy

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// Memory is what the earlier campaigns of the same target and release
// line learned about each fault they injected: how often it was tried,
// how often its trial passed every checker (the fault's consequence was
// all there was: quiet) and how often its trial failed (a symptom). A
// fault is one variant (Fault.Key) at one site (its stable ID) in one
// role of the struck member, so "an EIO at the WAL's fsync on the
// leader" is one fault and the same error on a follower another.
//
// A policy that draws faults at random (random, the portfolio's random
// arm, spread) prefers, with a Memory, the faults the earlier campaigns
// tried least without a symptom (Weight): night 20 of a nightly campaign
// does not repeat night 1. The zero Memory and nil are empty: the policy
// draws as it does without one.
type Memory struct {
	// Campaigns are the earlier campaigns it comes from, ascending.
	Campaigns []int64
	// Trials counts their fault trials whose faults it knows (a trial
	// whose site or error the catalog no longer has is left out).
	Trials  int
	tallies map[string]Tally
}

// Tally is what the earlier campaigns saw of one fault.
type Tally struct {
	// Tried counts the trials that injected it.
	Tried int `json:"tried"`
	// Quiet counts those that passed every checker.
	Quiet int `json:"quiet"`
	// Symptom counts those a checker failed.
	Symptom int `json:"symptom"`
}

// Weight is how much a policy with memory prefers the fault: 1 for one
// never tried, or whose trials showed a symptom (worth another state),
// else 1/(1+Quiet): each quiet trial makes it less likely.
func (t Tally) Weight() float64 {
	if t.Symptom > 0 {
		return 1
	}
	return 1 / float64(1+t.Quiet)
}

// Past is one injection of an earlier campaign's fault trial, with how
// the trial ended (record.Trial.Status).
type Past struct {
	Trial     string // record.Trial.ID
	Injection record.Injection
	Status    record.Status
}

// NewMemory tallies the injections past of the fault trials of the
// earlier campaigns campaigns against cat: each injection whose site the
// catalog still has counts toward its fault (the recorded error by name,
// the recorded delay, cut length or hold, as a replay rebuilds them);
// others are skipped. A trial with several injections counts toward each.
func NewMemory(cat *catalog.Catalog, campaigns []int64, past []Past) *Memory {
	m := &Memory{Campaigns: slices.Clone(campaigns), tallies: map[string]Tally{}}
	byID := make(map[string]*catalog.Site, len(cat.Sites))
	for i := range cat.Sites {
		byID[cat.Sites[i].ID] = &cat.Sites[i]
	}
	trials := map[string]bool{}
	for _, p := range past {
		s := byID[p.Injection.SiteID]
		if s == nil {
			continue
		}
		f, err := faultOf(s, p.Injection)
		if err != nil {
			continue
		}
		k := memoryKey(s, f, p.Injection.Role)
		t := m.tallies[k]
		t.Tried++
		switch p.Status {
		case record.StatusOK:
			t.Quiet++
		case record.StatusFailed:
			t.Symptom++
		}
		m.tallies[k] = t
		trials[p.Trial] = true
	}
	m.Trials = len(trials)
	return m
}

// memoryKey names one fault of a Memory: the site, the variant
// (faultName) and the struck member's role.
func memoryKey(site *catalog.Site, f Fault, role string) string {
	return site.ID + " " + faultName(site, f) + " " + role
}

// faultName is f's Key, with an error named by its value ("error:EIO")
// rather than its index into the site's errors.
func faultName(site *catalog.Site, f Fault) string {
	if f.Kind == catalog.KindError && f.Error >= 1 && f.Error <= len(site.Errors) {
		return "error:" + site.Errors[f.Error-1].Name
	}
	return f.Key()
}

// Len is the number of faults m knows; 0 for nil.
func (m *Memory) Len() int {
	if m == nil {
		return 0
	}
	return len(m.tallies)
}

// Of is what m knows of fault f at site in role.
func (m *Memory) Of(site *catalog.Site, f Fault, role string) Tally {
	if m.Len() == 0 || site == nil {
		return Tally{}
	}
	return m.tallies[memoryKey(site, f, role)]
}

// Known is one fault a Memory knows, for the report.
type Known struct {
	SiteID string `json:"site"`
	Fault  string `json:"fault"` // Fault.Key, an error by its name: "error:EIO"
	Role   string `json:"role,omitempty"`
	Tally
}

// Known lists the faults m knows: those with a symptom first, then by
// quiet trials, most first, then by site and fault.
func (m *Memory) Known() []Known {
	if m.Len() == 0 {
		return nil
	}
	out := make([]Known, 0, len(m.tallies))
	for k, t := range m.tallies {
		site, rest, _ := strings.Cut(k, " ")
		fault, role, _ := strings.Cut(rest, " ")
		out = append(out, Known{SiteID: site, Fault: fault, Role: role, Tally: t})
	}
	slices.SortFunc(out, func(a, b Known) int {
		return cmp.Or(cmp.Compare(b.Symptom, a.Symptom), cmp.Compare(b.Quiet, a.Quiet), cmp.Compare(b.Tried, a.Tried),
			strings.Compare(a.SiteID, b.SiteID), strings.Compare(a.Fault, b.Fault), strings.Compare(a.Role, b.Role))
	})
	return out
}

// String says where m comes from, e.g. "1,000 fault trials of campaigns
// 1, 2 (412 faults)"; "" when empty.
func (m *Memory) String() string {
	if m.Len() == 0 {
		return ""
	}
	ids := make([]string, len(m.Campaigns))
	for i, c := range m.Campaigns {
		ids[i] = fmt.Sprint(c)
	}
	return fmt.Sprintf("%d fault trials of campaign %s (%d faults)", m.Trials, strings.Join(ids, ", "), m.Len())
}

// weigh returns the weight of each of the faults fs offered at req
// (Tally.Weight) and the largest, for a policy that draws among them.
func (m *Memory) weigh(req *Request, fs []Fault) (ws []float64, top float64) {
	ws = make([]float64, len(fs))
	for i, f := range fs {
		ws[i] = m.Of(req.Site, f, req.Role).Weight()
		top = max(top, ws[i])
	}
	return ws, top
}

// pickWeighted draws an index of ws with probability proportional to its
// weight (ws has a positive weight).
func pickWeighted(rng *rand.Rand, ws []float64) int {
	var sum float64
	for _, w := range ws {
		sum += w
	}
	x := rng.Float64() * sum
	for i, w := range ws {
		if x < w {
			return i
		}
		x -= w
	}
	return len(ws) - 1
}
