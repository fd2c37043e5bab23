package gotest

// A second run of the test in the process a fault struck: state the fault
// left behind (a package variable, a goroutine, a lock, a file of the
// package's own) that breaks the next run, though the first run may have
// handled the fault as it should.
//
// A test that passed twice in one process fault-free (Measure.Again: the
// last fault-free run of each test runs it with -test.count=2) runs the
// same way in its fault trials. The first run ends at the test's top-level
// "--- PASS/FAIL/SKIP: TestX" line; gofault disarms the trial there
// (controller.Trial.Disarm), so the second run gets no fault of its own,
// and the agent marks every fault it carries out on stdout
// (wire.StrikeLine), so that a fault the disarm came too late for is seen
// in the second run's output. The process's output is split at the line
// that starts the second run ("=== RUN   TestX"); the first run is judged
// as a one-run process is (Verdict), and a second run that fails with no
// fault of its own is a finding when the first passed, or when the second
// reports the injected error again (againVerdict has the scope).

import (
	"fmt"
	"strings"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// DefaultTwiceMax is Options.TwiceMax's default: a test whose fault-free
// run takes longer runs once a process in its fault trials.
const DefaultTwiceMax = 10 * time.Second

// twice reports whether the fault trials of m's test run it twice in the
// process under o: it passed twice in one process fault-free, o allows
// a second run, and its slowest run is within o.TwiceMax.
func twice(m Measure, o Options) bool {
	return m.Again && !o.Once && m.Run <= o.TwiceMax
}

// AgainSuffix ends the symptom of a test whose second run in the process
// failed after a fault struck its first: "TestX failed" + AgainSuffix.
const AgainSuffix = " on its second run in the same process, after a fault in the first"

// runLine is the line the testing package writes (with -test.v) as a
// top-level test starts.
func runLine(test string) string { return "=== RUN   " + test }

// endLine reports whether line is the line the testing package writes as
// a top-level run of test ends: "--- PASS: TestX (0.01s)", FAIL or SKIP
// (a subtest's is indented).
func endLine(test, line string) bool {
	for _, s := range []string{"--- PASS: ", "--- FAIL: ", "--- SKIP: "} {
		if rest, ok := strings.CutPrefix(line, s+test+" ("); ok && rest != "" {
			return true
		}
	}
	return false
}

// splitRuns splits the output of a process that ran test twice
// (-test.count=2) at the line that starts its second run: first is what
// came before it, second the rest; ok is false when the second run never
// started (the first hung, panicked or exited, or the process ran once).
func splitRuns(test, output string) (first, second string, ok bool) {
	line := runLine(test) + "\n"
	seen := false // the first run's line
	for from := 0; ; {
		i := strings.Index(output[from:], line)
		if i < 0 {
			return output, "", false
		}
		i += from
		if i == 0 || output[i-1] == '\n' {
			if seen {
				return output[:i], output[i:], true
			}
			seen = true
		}
		from = i + len(line)
	}
}

// splitAttempt turns r, the attempt of a process started at start that
// ran its test twice, into its first run's attempt with the second's in
// Again: each with its part of the output, of the reports (those read
// before began, when the second run's start line was read, are the
// first's) and of the time; the first ends as the testing package ended
// it (status 0 when it passed or skipped itself, 1 when it failed; it
// neither hung nor was killed, since the second run started). r is
// returned as it is when the second run never started or began is
// unknown.
func splitAttempt(r Attempt, start, began time.Time) Attempt {
	first, second, ok := splitRuns(r.Test, r.Output)
	if !ok || began.IsZero() {
		return r
	}
	again := r
	again.Output, again.Began, again.Reports = second, began, nil
	reports := r.Reports
	r.Output, r.Reports = first, nil
	for _, rep := range reports {
		if rep.At.Before(began) {
			r.Reports = append(r.Reports, rep)
		} else {
			again.Reports = append(again.Reports, rep)
		}
	}
	r.TimedOut, r.Signal = false, ""
	r.Passed = strings.Contains(first, "--- PASS: "+r.Test+" ")
	r.Skipped = strings.Contains(first, "--- SKIP: "+r.Test+" ")
	r.ExitCode = 0
	if !r.Passed && !r.Skipped {
		r.ExitCode = 1
	}
	r.Elapsed = min(r.Elapsed, max(0, began.Sub(start)))
	again.Elapsed -= r.Elapsed
	// The process's status is the second run's when the first passed; a
	// first run that failed makes it 1 whatever the second did.
	ok2 := again.ExitCode == 0 || !r.Passed
	again.Passed = ok2 && strings.Contains(second, "--- PASS: "+r.Test+" ")
	again.Skipped = ok2 && strings.Contains(second, "--- SKIP: "+r.Test+" ")
	r.Again = &again
	return r
}

// struck reports whether output holds a line the agent wrote as it
// carried out a fault (wire.StrikeLine).
func struck(output string) bool {
	return strings.Contains(output, strings.TrimSuffix(wire.StrikeLine, "\n"))
}

// againVerdict is v, the verdict on r's first run in a trial that injected
// inj, with r's second run in the same process (r.Again) judged too:
//   - the second run passed, or never ran: v;
//   - v is a finding: v, its evidence saying how the second run ended;
//   - else, when the second run failed with no fault of its own — no
//     StrikeLine in its output, every injection an error or a delay that
//     ended before it began, at least one of them — a finding: the fault
//     left state in the process that broke the next run ("TestX failed" +
//     AgainSuffix). The first run must have passed, its test's cleanup
//     run whole; or, when it failed by its own report (a test assumption,
//     a timing assumption), the second run's own report must quote the
//     injected error, which no fault returned to it this time (an error
//     the code kept: a failed sync.Once). A first run that failed quoting
//     nothing more: t.Fatal skipped what the test would have stopped or
//     cleaned up after the failing line (rafthttp's TestStream leaves a
//     stream reader running that logs through the finished test), so
//     what broke the second run may be the test's own leftovers;
//     A goroutine of the first run that logs through its finished test
//     (testing's "Log in goroutine after TestX has completed" panic) is
//     not judged either: the code under test or the test may have owed
//     its stop;
//   - else v, its evidence saying why the second run was not judged.
func againVerdict(r Attempt, bound time.Duration, inj []record.Injection, v record.Verdict) record.Verdict {
	a := r.Again
	if a == nil {
		return v
	}
	out := a.Outcome(bound)
	if out == "" {
		return v
	}
	if v.Failed {
		v.Evidence = append(v.Evidence, fmt.Sprintf("its second run in the same process then %s", out))
		return v
	}
	why := notAgain(a, inj)
	if why == "" && v.Symptom != "" && len(quoted(a.Output, inj)) == 0 {
		why = "its first run failed, and t.Fatal skipped what the test would have cleaned up after the failing line; the second quotes no injected error"
	}
	if why != "" {
		if v.Symptom != "" {
			v.Evidence = append(v.Evidence, fmt.Sprintf("its second run in the same process %s; not judged: %s", out, why))
		}
		return v
	}
	first := "passed"
	if v.Symptom != "" {
		first, _, _ = strings.Cut(strings.TrimPrefix(v.Symptom, "informational: "), " (")
		first = "ended as a " + first
	}
	why = fmt.Sprintf("%s passed twice in one process fault-free; here its first run, struck by %s, %s, and its second, with no fault of its own, %s: the fault left state in the process (a package variable, a goroutine, a lock, a file) that broke the next run", r.Test, injected(inj), first, out)
	if q := quoted(a.Output, inj); len(q) > 0 {
		why += "; the second run's report quotes the injected error, which no fault returned this time: the code kept it"
	}
	return record.Verdict{
		Checker:  Checker,
		Failed:   true,
		Symptom:  r.Test + " " + out + AgainSuffix,
		Evidence: append([]string{why}, failureLines(a.Output, 20)...),
		Nodes:    []string{Node},
	}
}

// quoted returns the reports of output (a test file's t.Error, t.Fatal
// lines, testReports) that quote an error of inj (check.InjectedTexts).
func quoted(output string, inj []record.Injection) []string {
	var out []string
	for _, l := range testReports(output, 20) {
		if quotesError(l, inj) {
			out = append(out, l)
		}
	}
	return out
}

// quotesError reports whether line quotes an error fault of inj.
func quotesError(line string, inj []record.Injection) bool {
	for _, in := range inj {
		if _, ok := quotes(line, in); ok {
			return true
		}
	}
	return false
}

// notAgain says why the second run a (of a process that injected inj)
// is not judged, "" when it is.
func notAgain(a *Attempt, inj []record.Injection) string {
	if len(inj) == 0 {
		return "no fault struck the first run"
	}
	if struck(a.Output) {
		return "a fault struck it too"
	}
	if strings.Contains(a.Output, "panic: Log in goroutine after "+a.Test+" has completed") {
		// A goroutine of the first run outlived it: whether the code
		// should have stopped it or the test is not known.
		return "a goroutine of the first run logged through the finished test; whether the code or the test should have stopped it is not known"
	}
	if in, ok := heldAt(inj, a.Began); ok {
		if in.Kind == catalog.KindDelay {
			return fmt.Sprintf("the %v delay at %s still held its call when it began", in.Delay, in.SiteID)
		}
		return "a " + in.Kind.String() + " fault may outlast the first run"
	}
	return ""
}

// heldAt returns the first fault of inj that may still hold the process
// at t: a delay not over by then, or a fault of a kind that may outlast a
// run (a cut); an error is over once returned.
func heldAt(inj []record.Injection, t time.Time) (record.Injection, bool) {
	for _, in := range inj {
		switch {
		case in.Kind == catalog.KindError:
		case in.Kind == catalog.KindDelay && !in.Time.Add(in.Delay).After(t):
		default:
			return in, true
		}
	}
	return record.Injection{}, false
}

// injected names inj's first fault, and how many more there were.
func injected(inj []record.Injection) string {
	in := inj[0]
	s := in.Kind.String()
	if in.Error != "" {
		s += " " + in.Error
	}
	s += " at " + in.SiteID
	if len(inj) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(inj)-1)
	}
	return s
}
