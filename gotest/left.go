package gotest

// Goroutines a fault left running: a test that passes with a fault struck
// may still leave behind a goroutine the code's error path never stopped
// (a loop whose stop was skipped, a send nobody receives), which leaks in
// a long-lived process. A test build's TestMain passes m.Run's code
// through the agent (agent.Ran), which, when the tests passed, lists the
// goroutines the code under test left running (wire.LeftPrefix lines,
// keyed by the function each was in and the one that started it) and
// says it checked (wire.LeftDonePrefix). The fault-free runs' lists are
// the test's baseline (Measure.Left); a fault trial whose test passed and
// left a goroutine of a key no fault-free run left is a finding.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// Leftovers is what one test's fault-free runs left running: the
// baseline of its fault trials' leak check.
type Leftovers struct {
	// Checked is set when a fault-free run that passed reported what it
	// left (a build without agent.Ran, e.g. a campaign measured before
	// the check, reports nothing: its trials are not checked).
	Checked bool
	// Keys are the goroutines' keys (wire.LeftKey) any of them left.
	Keys []string
}

// leftOf returns the goroutines the test process that wrote output left
// running after its tests, by key, each with its detail, and whether the
// process checked (agent.Ran wrote its line).
func leftOf(output string) (left map[string]string, checked bool) {
	left = map[string]string{}
	for _, l := range strings.Split(output, "\n") {
		if rest, ok := strings.CutPrefix(l, wire.LeftPrefix); ok {
			key, detail, _ := strings.Cut(rest, "\t")
			left[key] = detail
		}
		if strings.HasPrefix(l, wire.LeftDonePrefix) {
			checked = true
		}
	}
	return left, checked
}

// leftBaseline folds the fault-free runs of one test into its Leftovers.
func leftBaseline(runs []Attempt) Leftovers {
	var b Leftovers
	for _, r := range runs {
		left, checked := leftOf(wholeOutput(r))
		if !checked {
			continue
		}
		b.Checked = true
		for k := range left {
			if !slices.Contains(b.Keys, k) {
				b.Keys = append(b.Keys, k)
			}
		}
	}
	slices.Sort(b.Keys)
	return b
}

// wholeOutput is r's process's output: its first run's and, when it ran
// the test twice, its second's (agent.Ran writes after the last run).
func wholeOutput(r Attempt) string {
	if r.Again != nil {
		return r.Output + r.Again.Output
	}
	return r.Output
}

// maxLeftBase bounds the baseline keys passed to the agent
// (wire.EnvLeftBase); a test with more gets the agent's shorter wait.
const maxLeftBase = 200

// LeftSymptom starts the symptom of a test that passed after a fault but
// left a goroutine running that no fault-free run left: LeftSymptom and
// the function that goroutine was in.
const LeftSymptom = " left a goroutine running after a fault: "

// LeftFileSymptom is LeftSymptom's for a file left open (no goroutine
// left): LeftFileSymptom and the file's key (its path, $TMPDIR and N for
// digits).
const LeftFileSymptom = " left a file open after a fault: "

// LeftUnjudgedSymptom is the symptom of a trial whose test passed and
// left goroutines or files no fault-free run left, while a fault may
// still have held them when the process ended (a delay not over, a cut):
// not judged, shown apart, never a finding.
const LeftUnjudgedSymptom = "informational: left running or open what no fault-free run left, not judged (a fault may still have held it when the process ended)"

// leftVerdict is v, the verdict of run r of a trial that injected inj
// and whose process ended at end, or a finding when r passed (every run
// of the process, v neither failed nor informational), base was checked,
// and r's process left running a goroutine of a key base does not hold.
// Not judged: a trial that injected nothing; and one whose delay still
// held a call when the process ended, or whose fault may outlast it (a
// cut), since the goroutine the fault holds is no leak: that one gets
// LeftUnjudgedSymptom, with what it left, instead.
func leftVerdict(r Attempt, inj []record.Injection, end time.Time, base Leftovers, v record.Verdict) record.Verdict {
	if !r.Passed || r.Again != nil && !r.Again.Passed || v.Failed || v.Symptom != "" || !base.Checked || len(inj) == 0 {
		return v
	}
	left, checked := leftOf(wholeOutput(r))
	if !checked {
		return v
	}
	var leaked []string
	for k := range left {
		if !slices.Contains(base.Keys, k) {
			leaked = append(leaked, k)
		}
	}
	if len(leaked) == 0 {
		return v
	}
	// Goroutines first (their keys never start with the files' prefix),
	// then files.
	slices.SortFunc(leaked, func(a, b string) int {
		fa, fb := strings.HasPrefix(a, wire.LeftFilePrefix), strings.HasPrefix(b, wire.LeftFilePrefix)
		if fa != fb {
			if fa {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	symptom := r.Test + LeftSymptom
	if path, ok := strings.CutPrefix(leaked[0], wire.LeftFilePrefix); ok {
		symptom = r.Test + LeftFileSymptom + path
	} else {
		symptom += wire.LeftTop(leaked[0])
	}
	var lines []string
	for _, k := range leaked {
		lines = append(lines, "left running: "+left[k])
	}
	if in, held := heldAt(inj, end); held {
		what := "a " + in.Kind.String() + " fault at " + in.SiteID
		if in.Kind == catalog.KindDelay {
			what = fmt.Sprintf("the %v delay at %s", in.Delay, in.SiteID)
		}
		why := fmt.Sprintf("%s passed and left %d goroutine(s) running or file(s) open, of kinds none of its fault-free runs left; not judged: %s may still have held them when the process ended", r.Test, len(leaked), what)
		return record.Verdict{Checker: Checker, Symptom: LeftUnjudgedSymptom, Evidence: append([]string{why}, lines...), Nodes: []string{Node}}
	}
	why := fmt.Sprintf("%s passed, struck by %s, and left %d goroutine(s) running or file(s) open, of kinds none of its fault-free runs left (%d kind(s) left there); they were still there after the tests ended and the goroutines stopped changing: the fault's path never stopped or closed them", r.Test, injected(inj), len(leaked), len(base.Keys))
	return record.Verdict{
		Checker:  Checker,
		Failed:   true,
		Symptom:  symptom,
		Evidence: append([]string{why}, lines...),
		Nodes:    []string{Node},
	}
}

// leftFinding reports whether symptom is a leak's (a goroutine left
// running or a file left open).
func leftFinding(symptom string) bool {
	return strings.Contains(symptom, LeftSymptom) || strings.Contains(symptom, LeftFileSymptom)
}
