package report

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

func dismissedTrial(id string, ds ...record.Dismissal) *record.Trial {
	return &record.Trial{ID: id, Status: record.StatusOK, Verdicts: []record.Verdict{
		{Checker: "crash"},
		{Checker: "log", Symptom: "informational: x", Dismissed: ds},
	}}
}

func TestDismissed(t *testing.T) {
	lost := func(node string, n int, ex string) record.Dismissal {
		return record.Dismissal{Rule: check.RuleConnectionWords, Node: node, Template: "warn  lost peer", Count: n, Example: ex, Why: "crash of n2 at +1s, on " + node}
	}
	slow := record.Dismissal{Rule: check.RuleMachine, Node: "n3", Template: "warn  disk slow", Count: 1, Example: "[WRN] disk slow"}
	trials := []*record.Trial{
		dismissedTrial("1-1", lost("n1", 2, "[WRN] lost peer n2"), lost("n3", 1, "[WRN] lost peer n2 (n3)")),
		dismissedTrial("1-2"),
		dismissedTrial("1-3", lost("n1", 4, "[WRN] lost peer n3"), slow,
			record.Dismissal{Rule: check.RuleConnectionWords, Node: "n2", Template: "error  stream closed", Count: 1, Example: "[ERR] stream closed"}),
	}
	got := Dismissed(trials)
	scope := func(name string) string {
		for _, r := range check.LogRules {
			if r.Name == name {
				return r.Scope
			}
		}
		t.Fatalf("no rule %s", name)
		return ""
	}
	want := []RuleDismissals{
		{Rule: check.RuleConnectionWords, Scope: scope(check.RuleConnectionWords), Lines: 8, Trials: 2, Templates: []DismissedTemplate{
			{Template: "warn  lost peer", Count: 7, Trials: []string{"1-1", "1-3"}, Nodes: []string{"n1", "n3"}, Example: "[WRN] lost peer n2", Trial: "1-1", Why: "crash of n2 at +1s, on n1"},
			{Template: "error  stream closed", Count: 1, Trials: []string{"1-3"}, Nodes: []string{"n2"}, Example: "[ERR] stream closed", Trial: "1-3"},
		}},
		{Rule: check.RuleMachine, Scope: scope(check.RuleMachine), Lines: 1, Trials: 1, Templates: []DismissedTemplate{
			{Template: "warn  disk slow", Count: 1, Trials: []string{"1-3"}, Nodes: []string{"n3"}, Example: "[WRN] disk slow", Trial: "1-3"},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Dismissed =\n%+v\nwant\n%+v", got, want)
	}
	var out bytes.Buffer
	if err := WriteDismissed(&out, got); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"connection-words: 8 lines in 2 trials, 2 templates",
		"7× in 2 trials on n1,n3: warn  lost peer",
		"trials 1-1 1-3",
		"e.g. 1-1: [WRN] lost peer n2",
		"tied to crash of n2 at +1s, on n1",
		"machine: 1 lines in 1 trials, 1 templates",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("no %q in:\n%s", s, out.String())
		}
	}
	out.Reset()
	if err := WriteDismissed(&out, Dismissed(trials[1:2])); err != nil || out.String() != "no log lines dismissed\n" {
		t.Errorf("no dismissals: %q, %v", out.String(), err)
	}
}

func TestWriteTrialsDismissed(t *testing.T) {
	tr := dismissedTrial("1-1", record.Dismissal{Rule: check.RuleDelayWords, Node: "n1", Template: "warn  timeout", Count: 3, Example: "[WRN] timeout", Why: "delay of n1 at +1s, on n1"})
	for _, full := range []bool{false, true} {
		var out bytes.Buffer
		if err := WriteTrials(&out, []*record.Trial{tr}, full); err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(out.String(), "log dismissed 3× on n1 by delay-words (delay of n1 at +1s, on n1): [WRN] timeout")
		if has != full {
			t.Errorf("full=%v: dismissed shown %v:\n%s", full, has, out.String())
		}
	}
}
