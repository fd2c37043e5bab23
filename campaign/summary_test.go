package campaign

import (
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
)

func TestSummarise(t *testing.T) {
	t0 := time.Unix(1000, 0)
	trial := func(policy string, status record.Status, secs int, injections int, states ...record.StateVisit) *record.Trial {
		tr := &record.Trial{Policy: policy, Status: status, Start: t0, End: t0.Add(time.Duration(secs) * time.Second), States: states}
		for range injections {
			tr.Injections = append(tr.Injections, record.Injection{Kind: catalog.KindError})
		}
		return tr
	}
	visit := func(node string, task, state uint32) record.StateVisit {
		return record.StateVisit{Node: node, Task: task, State: state, Entries: 1}
	}
	var sum Summary
	summarise(&sum, []*record.Trial{
		trial(baselinePolicy, record.StatusOK, 8, 0, visit("n1", 1, 1), visit("n2", 1, 1)),
		trial("bsrr", record.StatusOK, 10, 1, visit("n1", 1, 2)),
		trial("bsrr", record.StatusError, 9, 0),
		trial("bsrr", record.StatusOK, 11, 2, visit("n3", 2, 7), visit("n3", 1, 2)),
	}, report.Options{})
	if sum.Trials != 3 || sum.BaselineTrials != 1 || sum.InjectedTrials != 2 || sum.Injections != 3 ||
		sum.ErrorTrials != 1 || sum.FailedTrials != 0 || sum.MedianTrial != 10 {
		t.Errorf("summary %+v", sum)
	}
	// Two of the three fault trials injected; the baseline does not count.
	if want := 2.0 / 3; sum.InjectionRate != want {
		t.Errorf("injection rate %v, want %v", sum.InjectionRate, want)
	}
	// States (1,1), (1,2) and (2,7), whichever node entered them.
	if sum.StatesEntered != 3 {
		t.Errorf("%d states entered, want 3", sum.StatesEntered)
	}
}
