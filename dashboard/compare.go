package dashboard

import (
	"fmt"
	"html/template"
	"sort"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
)

// Comparison is campaigns side by side — the policies and seeds of a
// `gofault compare`, or any campaigns of one store: their counts, which
// findings each found and after how many fault trials, and the findings
// over trials.
type Comparison struct {
	Campaigns []*Campaign
	// Findings are every finding of any of the campaigns (a finding's ID
	// is its checker and symptom, the same in every campaign), the most
	// often found first.
	Findings []ComparedFinding
}

// ComparedFinding is one finding across the compared campaigns: At[i] is
// the number of fault trials campaign i ran up to its first trial of the
// finding, 0 when it did not find it.
type ComparedFinding struct {
	ID, Checker, Symptom string
	At                   []int
	Found                int
}

// Compare lines campaigns up.
func Compare(cs []*Campaign) *Comparison {
	cmp := &Comparison{Campaigns: cs}
	byID := map[string]*ComparedFinding{}
	var order []string
	for i, c := range cs {
		for _, f := range c.Report.Findings {
			cf := byID[f.ID]
			if cf == nil {
				cf = &ComparedFinding{ID: f.ID, Checker: f.Checker, Symptom: f.Symptom, At: make([]int, len(cs))}
				byID[f.ID] = cf
				order = append(order, f.ID)
			}
			cf.At[i] = trialsTo(c.Trials, f)
			cf.Found++
		}
	}
	for _, id := range order {
		cmp.Findings = append(cmp.Findings, *byID[id])
	}
	sort.SliceStable(cmp.Findings, func(i, j int) bool { return cmp.Findings[i].Found > cmp.Findings[j].Found })
	return cmp
}

// trialsTo is the number of fault trials, in index order, up to and with
// the first trial of finding f.
func trialsTo(trials []*record.Trial, f report.Finding) int {
	_, first, _ := record.ParseTrialID(f.Trials[0])
	n := 0
	for _, t := range trials {
		if t.Policy != record.BaselinePolicy && t.Index <= first {
			n++
		}
	}
	return max(n, 1)
}

// Plot is the number of distinct findings over fault trials, one line per
// campaign.
func (cmp *Comparison) Plot() template.HTML {
	var ss []series
	for _, c := range cmp.Campaigns {
		s := series{Name: fmt.Sprintf("campaign %d (%s)", c.ID, c.Policy)}
		var at []int
		for _, f := range c.Report.Findings {
			at = append(at, trialsTo(c.Trials, f))
		}
		sort.Ints(at)
		for i, n := range at {
			s.X, s.Y = append(s.X, float64(n)), append(s.Y, float64(i+1))
		}
		if c.Counts.Trials > 0 {
			s.X, s.Y = append(s.X, float64(c.Counts.Trials)), append(s.Y, float64(len(at)))
		}
		ss = append(ss, s)
	}
	return chart(wide, "findings over fault trials", ss, 0, "%.0f", func(x float64) string { return fmt.Sprintf("%.0f", x) })
}
