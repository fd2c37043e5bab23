package dashboard

import (
	"fmt"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
)

// TestRow is what the campaign page of a `gofault test` campaign shows of
// one Go test: its fault-free runs (the baseline trials that ran it),
// the sites they reached, the fault trials it got and how they ended.
type TestRow struct {
	Test string
	// Runs and Passed count its fault-free runs; Sites the distinct
	// fault sites they reached.
	Runs, Passed, Sites int
	// FaultTrials, Injected and Failed count its fault trials, those
	// that injected a fault and those whose test failed; Findings the
	// findings (report.Findings) with a trial of it.
	FaultTrials, Injected, Failed, Findings int
	// LeftOut says why a test measured fault-free got no fault trial,
	// as far as its runs tell: it failed some of them, or reached no
	// site; "" otherwise.
	LeftOut string
}

// testRows sums a campaign's trials per Go test, in the order the tests
// first ran; none for a campaign of `gofault run`, whose trials name no
// test (record.Trial.Test).
func testRows(trials []*record.Trial, rep report.Report) []TestRow {
	var rows []TestRow
	at := map[string]int{}
	sites := map[string]map[string]bool{}
	for _, t := range trials {
		name := t.Test()
		if name == "" {
			continue
		}
		i, ok := at[name]
		if !ok {
			i = len(rows)
			at[name] = i
			rows = append(rows, TestRow{Test: name})
			sites[name] = map[string]bool{}
		}
		r := &rows[i]
		if t.Policy == record.BaselinePolicy {
			r.Runs++
			if t.Status == record.StatusOK {
				r.Passed++
			}
			for _, re := range t.Reached {
				sites[name][re.SiteID] = true
			}
			continue
		}
		r.FaultTrials++
		if len(t.Injections) > 0 {
			r.Injected++
		}
		if t.Status == record.StatusFailed {
			r.Failed++
		}
	}
	byID := map[string]*record.Trial{}
	for _, t := range trials {
		byID[t.ID] = t
	}
	for _, f := range rep.Findings {
		seen := map[string]bool{}
		for _, id := range f.Trials {
			if t := byID[id]; t != nil && !seen[t.Test()] {
				seen[t.Test()] = true
				if i, ok := at[t.Test()]; ok {
					rows[i].Findings++
				}
			}
		}
	}
	for i := range rows {
		r := &rows[i]
		r.Sites = len(sites[r.Test])
		switch {
		case r.FaultTrials > 0 || r.Runs == 0:
		case r.Passed < r.Runs:
			r.LeftOut = fmt.Sprintf("failed %d of %d fault-free runs", r.Runs-r.Passed, r.Runs)
		case r.Sites == 0:
			r.LeftOut = "reached no fault site"
		}
	}
	return rows
}
