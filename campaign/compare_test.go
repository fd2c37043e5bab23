package campaign

import (
	"reflect"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
)

func TestFirstFindings(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	trial := func(i int, policy string, failed ...string) *record.Trial {
		tr := &record.Trial{ID: record.TrialID(1, i), Index: i, Policy: policy, Start: t0.Add(time.Duration(i) * time.Minute), End: t0.Add(time.Duration(i+1) * time.Minute)}
		if policy != baselinePolicy && i != 5 {
			tr.Injections = []record.Injection{{Kind: catalog.KindError, SiteID: "s"}}
		}
		for _, f := range failed {
			tr.Verdicts = append(tr.Verdicts, record.Verdict{Checker: "hang", Symptom: f, Failed: true})
		}
		tr.Verdicts = append(tr.Verdicts, record.Verdict{Checker: "crash"})
		return tr
	}
	ts := []*record.Trial{
		trial(3, "bsrr", "b"),
		trial(0, baselinePolicy, "x"), // baseline trials are not fault trials
		trial(1, "bsrr"),
		trial(2, "bsrr", "a"),
		trial(4, "bsrr", "a", "c"), // one fault, two symptoms: a is primary, c co-occurs and is no finding
		trial(5, "bsrr", "d"),      // no fault injected: a fault-free failure, no finding
	}
	got := firstFindings(ts, report.Options{})
	want := map[string]firstFind{
		"hang: a": {trials: 2, minutes: 3},
		"hang: b": {trials: 3, minutes: 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("firstFindings = %v, want %v", got, want)
	}
	if len(firstFindings(nil, report.Options{})) != 0 {
		t.Fatal("findings in no trials")
	}
}

func TestCensoredMedian(t *testing.T) {
	tests := []struct {
		xs      []float64
		n       int
		missing float64
		want    float64
	}{
		{[]float64{3, 1, 2}, 3, 99, 2},
		{[]float64{1}, 3, 11, 11},     // missed by most seeds
		{[]float64{1, 5}, 3, 11, 5},   // found by two of three
		{[]float64{4, 2}, 4, 11, 7.5}, // even count: mean of the middle two
		{nil, 0, 11, 11},
	}
	for _, tt := range tests {
		if got := censoredMedian(tt.xs, tt.n, tt.missing); got != tt.want {
			t.Errorf("censoredMedian(%v, %d, %v) = %v, want %v", tt.xs, tt.n, tt.missing, got, tt.want)
		}
	}
}
