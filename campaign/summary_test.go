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
		trial("bsrr", record.StatusNotJudged, 1, 1),
	}, report.Options{})
	if sum.Trials != 4 || sum.BaselineTrials != 1 || sum.InjectedTrials != 3 || sum.Injections != 4 ||
		sum.ErrorTrials != 1 || sum.FailedTrials != 0 || sum.NotJudgedTrials != 1 || sum.MedianTrial != 9 {
		t.Errorf("summary %+v", sum)
	}
	// One of five trials not judged: no warning.
	if sum.NotJudgedWarning != "" {
		t.Errorf("warning %q with 1 of 5 trials not judged", sum.NotJudgedWarning)
	}
	// Three of the four fault trials injected; the baseline does not count.
	if want := 3.0 / 4; sum.InjectionRate != want {
		t.Errorf("injection rate %v, want %v", sum.InjectionRate, want)
	}
	// States (1,1), (1,2) and (2,7), whichever node entered them.
	if sum.StatesEntered != 3 {
		t.Errorf("%d states entered, want 3", sum.StatesEntered)
	}
}

func TestSummariseMostlyNotJudged(t *testing.T) {
	inj := []record.Injection{{Kind: catalog.KindError}}
	for _, tc := range []struct {
		name      string
		statuses  []record.Status
		notJudged int
		warn      bool
	}{
		{"none", []record.Status{record.StatusOK, record.StatusOK, record.StatusFailed}, 0, false},
		{"half is not most", []record.Status{record.StatusOK, record.StatusNotJudged}, 1, false},
		{"most", []record.Status{record.StatusNotJudged, record.StatusNotJudged, record.StatusOK}, 2, true},
		{"all", []record.Status{record.StatusNotJudged}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var trials []*record.Trial
			for _, st := range tc.statuses {
				trials = append(trials, &record.Trial{Policy: "random", Status: st, Injections: inj})
			}
			var sum Summary
			summarise(&sum, trials, report.Options{})
			if sum.NotJudgedTrials != tc.notJudged || (sum.NotJudgedWarning != "") != tc.warn {
				t.Errorf("%d not judged, warning %q; want %d, warning %v", sum.NotJudgedTrials, sum.NotJudgedWarning, tc.notJudged, tc.warn)
			}
			if sum.FailedTrials+sum.NotJudgedTrials > len(trials) {
				t.Errorf("a trial counted twice: %+v", sum)
			}
		})
	}
}
