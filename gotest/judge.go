package gotest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// Checker is the name of the verdict gofault test gives every run of a
// test: the test's own outcome.
const Checker = "test"

// Attempt is how one run of one test binary ended.
type Attempt struct {
	Test string
	// Passed is set when the process exited 0 and printed the test's
	// "--- PASS" line (a test that ran nothing, or matched no test, did
	// not pass).
	Passed bool
	// Skipped is set when the test skipped itself (t.Skip): it ran
	// nothing a fault could break.
	Skipped bool
	// TimedOut is set when the run was killed past its bound (a hang).
	TimedOut  bool
	ExitCode  int
	Signal    string
	Elapsed   time.Duration
	Output    string // the test's combined stdout and stderr
	Sites     []string
	Requested int // requests the agent made (sites reached, counted)
	// Eligible counts the requests outside test setup at sites a fault
	// may strike (a fault-free run's: what a fault trial's policy sees).
	Eligible int
	// Reports are the lines the test's files wrote to its stdout, timed
	// as they were read (the timing rule reads them).
	Reports []Report
	// Again is the test's second run in the same process, when the
	// process ran it twice and the second run started (again.go); its
	// Began is when gofault read the line that started it.
	Again *Attempt
	Began time.Time
}

// Outcome names how a run failed: "" when it passed or skipped itself,
// else "hung past
// <bound>", "panicked", "reported a data race", "exited with status N"
// or "failed". A run that hung is a hang even if it also panicked when
// killed; a race is named before a plain failure, since -race makes a
// test fail.
func (r Attempt) Outcome(bound time.Duration) string {
	switch {
	case r.TimedOut:
		return "hung past " + bound.String()
	case r.Passed, r.Skipped:
		return ""
	case strings.Contains(r.Output, "WARNING: DATA RACE"):
		return "reported a data race"
	case strings.Contains(r.Output, "\npanic: ") || strings.HasPrefix(r.Output, "panic: "):
		return "panicked"
	case r.Signal != "":
		return "was killed by " + r.Signal
	case strings.Contains(r.Output, "--- FAIL: "+r.Test):
		return "failed"
	}
	return fmt.Sprintf("exited with status %d", r.ExitCode)
}

// skipped reports whether output shows test skipping itself in a
// process that exited with code.
func skipped(test, output string, code int) bool {
	return code == 0 && strings.Contains(output, "--- SKIP: "+test+" ")
}

// passed reports whether output shows test passing in a process that
// exited with code: the exit status alone also passes a -test.run that
// matched nothing.
func passed(test, output string, code int) bool {
	return code == 0 && strings.Contains(output, "--- PASS: "+test+" ")
}

// Verdict is the test checker's verdict on run under bound of a trial
// that injected inj: failed with the outcome as the symptom ("TestX
// failed") and the test's failure lines as evidence — unless the test
// failed by its own report of the error injected into it (assumption),
// the code under test stopped the process on purpose on that error
// (failStop), the test's own wait ran out while an injected delay
// still held the call (timing), or the test discarded the injected error
// its call returned and went on (ignored): then an informational verdict
// says so, not a finding.
func Verdict(r Attempt, bound time.Duration, inj []record.Injection) record.Verdict {
	out := r.Outcome(bound)
	if out == "" {
		return record.Verdict{Checker: Checker}
	}
	if lines, what := assumption(r, bound, inj); len(lines) > 0 {
		why := fmt.Sprintf("%s failed reporting the %s injected into the code it calls: the error reached the test, which took the call for one that cannot fail", r.Test, what)
		if out == "panicked" {
			why += "; then its deferred cleanup panicked as t.Fatal ended it (on what the failed call returned)"
		}
		return record.Verdict{
			Checker:  Checker,
			Symptom:  AssumptionSymptom,
			Evidence: append([]string{why}, lines...),
			Nodes:    []string{Node},
		}
	}
	if v, ok := failStop(r, bound, inj); ok {
		return v
	}
	if v, ok := timing(r, bound, inj); ok {
		return v
	}
	if v, ok := ignored(r, bound, inj); ok {
		return v
	}
	return record.Verdict{
		Checker:  Checker,
		Failed:   true,
		Symptom:  r.Test + " " + out,
		Evidence: failureLines(r.Output, 20),
		Nodes:    []string{Node},
	}
}

// FailStopSymptom is the symptom of a test process that the code under
// test stopped on purpose on the error injected into it (a fatal log line,
// a logged or Go panic quoting it): fail-stop by design, reported apart,
// never a finding.
const FailStopSymptom = "informational: fail-stop on the injected error (the code under test stopped the test process on it)"

// TimingSymptom is the symptom of a test whose own wait ran out while an
// injected delay still held the call it waited on: the test's timing
// assumption, reported apart, never a finding.
const TimingSymptom = "informational: timing assumption (the test's own wait ran out while an injected delay held the call)"

// failStop judges a run that exited (a status, not a signal) or panicked
// — not a hang, a race or a plain test failure — whose last words
// (check.FailStop: a Go panic, a fatal- or panic-level log line) quote an
// error injected into the process, and were not logged before the first
// such injection: the code under test gave up on the injected error on
// purpose, as etcd's backend does ("failed to commit tx" with the I/O
// error). Run mode's crash checker judges a node that stops so the same
// way. A panic that quotes no injected error (a nil dereference after the
// error, an assertion) stays a finding.
func failStop(r Attempt, bound time.Duration, inj []record.Injection) (record.Verdict, bool) {
	out := r.Outcome(bound)
	if out != "panicked" && !strings.HasPrefix(out, "exited with status ") {
		return record.Verdict{}, false
	}
	var errs []string
	var first time.Time
	for _, in := range inj {
		if in.Kind != catalog.KindError || in.Error == "" {
			continue
		}
		errs = append(errs, in.Error)
		if first.IsZero() || in.Time.Before(first) {
			first = in.Time
		}
	}
	if len(errs) == 0 {
		return record.Verdict{}, false
	}
	line, ok := check.FailStop(r.Output, errs, first)
	if !ok {
		return record.Verdict{}, false
	}
	why := fmt.Sprintf("%s %s: the code under test stopped the process on the error injected into it (%s), on purpose: fail-stop, not a crash", r.Test, out, strings.Join(errs, ", "))
	return record.Verdict{
		Checker:  Checker,
		Symptom:  FailStopSymptom,
		Evidence: append([]string{why, line}, failureLines(r.Output, 10)...),
		Nodes:    []string{Node},
	}, true
}

// timing judges a run that failed by its own report (outcome "failed")
// whose first report is a wait of the test's own that ran out
// (Report.Wait), read while a delay injected into the code it calls still
// held the call — after the delay's injection and before its end — and
// whose later reports are waits too or were read before that end: the
// test waited less than the injected delay, a timing assumption. A test
// that fails after the delay ended (a delay shorter than its wait), one
// whose first report is not a wait ("value = 3, want 4"), and a panic,
// race, hang or exit stay findings. So does a run with no timed report.
func timing(r Attempt, bound time.Duration, inj []record.Injection) (record.Verdict, bool) {
	if r.Outcome(bound) != "failed" || len(r.Reports) == 0 || !r.Reports[0].Wait {
		return record.Verdict{}, false
	}
	first := r.Reports[0]
	for _, in := range inj {
		if in.Kind != catalog.KindDelay || in.Delay <= 0 {
			continue
		}
		end := in.Time.Add(in.Delay)
		if first.At.Before(in.Time) || first.At.After(end) {
			continue
		}
		held := true
		for _, rep := range r.Reports[1:] {
			if !rep.Wait && rep.At.After(end) {
				held = false
				break
			}
		}
		if !held {
			continue
		}
		why := fmt.Sprintf("%s failed when a wait of its own ran out %v after a %v delay was injected at %s, while the delay still held the call: the test waits less than the delay", r.Test, first.At.Sub(in.Time).Round(time.Millisecond), in.Delay, in.SiteID)
		var lines []string
		for _, rep := range r.Reports[:min(len(r.Reports), 10)] {
			lines = append(lines, rep.Line)
		}
		return record.Verdict{
			Checker:  Checker,
			Symptom:  TimingSymptom,
			Evidence: append([]string{why}, lines...),
			Nodes:    []string{Node},
		}, true
	}
	return record.Verdict{}, false
}

// AssumptionSymptom is the symptom of a test run that failed by its own
// report of the error injected into it: the test's assumption, reported
// apart, never a finding.
const AssumptionSymptom = "informational: test assumption (the test reported the error it was handed)"

// assumption returns the failure lines in which run r, a run that failed
// by its own report (outcome "failed": no panic, hang, race or exit, or a
// panic in the test's deferred cleanup as its t.Fatal ended it,
// panicAfterFatal), quotes an error injected into it (inj's error faults, by the texts they show
// as, check.InjectedTexts), and which error that was ("EIO (input/output
// error)"); none when it failed otherwise. Such a test received the
// error through the call it made, or one wrapping it (errors.Is chains,
// fmt's %w), and reported it with t.Error or t.Fatal: the code under test
// surfaced the error, as it should. A swallowed error — the call failed,
// the code went on, and the test saw only a later consequence (a missing
// record) — quotes another error, and stays a finding. So does a panic
// anywhere else: in the code under test, in another goroutine, or in the
// test before it reported the error.
func assumption(r Attempt, bound time.Duration, inj []record.Injection) (lines []string, what string) {
	switch r.Outcome(bound) {
	case "failed":
	case "panicked":
		if !panicAfterFatal(r.Output) {
			return nil, ""
		}
	default:
		return nil, ""
	}
	reports := testReports(r.Output, 20)
	for _, in := range inj {
		for _, l := range reports {
			if w, ok := quotes(l, in); ok {
				lines, what = append(lines, l), w
			}
		}
		if len(lines) > 0 {
			return lines, what
		}
	}
	return nil, ""
}

// quotes reports whether s quotes the error that in (an injection of any
// kind) injected, by one of the texts it shows as (check.InjectedTexts),
// and which error it quotes: in.Error, followed by the text it matched
// where that differs ("EIO (input/output error)").
func quotes(s string, in record.Injection) (what string, ok bool) {
	if in.Kind != catalog.KindError || in.Error == "" {
		return "", false
	}
	for _, t := range check.InjectedTexts(in.Error) {
		if strings.Contains(s, t) {
			if t != in.Error {
				return in.Error + " (" + t + ")", true
			}
			return in.Error, true
		}
	}
	return "", false
}

// panicAfterFatal reports whether output's panic happened in a deferred
// call that t.Fatal (FailNow's runtime.Goexit) ran: the panicking
// goroutine's trace, the first after the "panic: " line, goes through
// testing's FailNow. etcd's wal tests defer w.Close() before they check
// Create's error, and close the nil *WAL that the failed Create returned:
// the test's own cleanup, after it reported the error.
func panicAfterFatal(output string) bool {
	_, after, ok := strings.Cut("\n"+output, "\npanic: ")
	if !ok {
		return false
	}
	_, trace, ok := strings.Cut(after, "\ngoroutine ")
	if !ok {
		return false
	}
	trace, _, _ = strings.Cut(trace, "\n\n")
	return strings.Contains(trace, "\ntesting.(*common).FailNow(")
}

// testReports returns the first limit reports a test file wrote (t.Error,
// t.Fatal: testLine), each with the lines that continue its message: the
// testing package indents a message's later lines deeper than its first
// ("        \tError: ..."), as testify's require and assert write the
// error they received, on a line of its own below "Error Trace:".
func testReports(output string, limit int) []string {
	var out []string
	in := false
	for _, l := range strings.Split(output, "\n") {
		switch {
		case testLine.MatchString(l):
			if len(out) == limit {
				return out
			}
			out = append(out, l)
			in = true
		case in && strings.HasPrefix(l, "        ") && !logLine.MatchString(l):
			out[len(out)-1] += "\n" + l
		default:
			in = false
		}
	}
	return out
}

// testLine matches a t.Error or t.Fatal line written from a test file
// (a helper marked with t.Helper reports its caller's line).
var testLine = regexp.MustCompile(`^\s+[\w.-]+_test\.go:\d+: `)

// logLine matches a line the testing package wrote for t.Log, t.Error or
// t.Fatal: indented, "file.go:line: ".
var logLine = regexp.MustCompile(`^\s+[\w.-]+\.go:\d+: `)

// failureLines picks the lines of a test's output that say why it failed,
// at most limit of them, in their order: first its report — the lines a
// test file wrote (t.Error, t.Fatal), --- FAIL, panic and race reports —
// then, while there is room, the last of the other t.Log lines (a
// helper's, a logger's), those nearest the failure. A test whose logger
// writes through t.Log (etcd's zaptest: every server log line, hundreds
// before the failure) would otherwise fill them with its first log lines
// and leave its report out. Without any such line, its last limit lines.
func failureLines(output string, limit int) []string {
	lines := strings.Split(strings.TrimRight(output, "\n"), "\n")
	var report, logs []int // indices into lines
	inPanic := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "panic: "), strings.HasPrefix(t, "WARNING: DATA RACE"):
			inPanic = true
			report = append(report, i)
		case strings.HasPrefix(t, "--- FAIL"), testLine.MatchString(l), inPanic && t != "":
			report = append(report, i)
		case logLine.MatchString(l):
			logs = append(logs, i)
		}
	}
	if len(report)+len(logs) == 0 {
		return lines[max(0, len(lines)-limit):]
	}
	report = report[:min(len(report), limit)]
	keep := append(report, logs[max(0, len(logs)-(limit-len(report))):]...)
	slices.Sort(keep)
	out := make([]string, len(keep))
	for i, k := range keep {
		out[i] = lines[k]
	}
	return out
}

// Measure is what the fault-free pass measured of one test over its
// runs.
type Measure struct {
	Test   string `json:"test"`
	Runs   int    `json:"runs"`
	Passed int    `json:"passed"`
	// Skipped counts the runs in which the test skipped itself.
	Skipped int           `json:"skipped,omitempty"`
	Slowest time.Duration `json:"slowest"`
	// Sites are the IDs of the fault sites the test reached in any run,
	// sorted.
	Sites []string `json:"sites,omitempty"`
	// Again is set when the test passed a second run in the same process
	// after a first (-test.count=2) in every fault-free run that ran it
	// twice, one at least: its fault trials run it twice too (again.go).
	Again bool `json:"again,omitempty"`
	// Run is the test's slowest single run (a run of a process that ran
	// it twice counts its first): what a second run adds to a fault
	// trial.
	Run time.Duration `json:"run,omitempty"`
	// Requests is the fewest requests outside test setup at those sites
	// in one run (of the passed runs, if any passed): what a fault trial
	// of the test is expected to ask its policy (policy.TrialInfo.Expected;
	// 0 when not measured, e.g. a measure stored before it was kept).
	Requests int `json:"requests,omitempty"`
	// LeftChecked is set when a fault-free run reported what it left
	// running after its tests (left.go), and Left are the keys of the
	// goroutines those runs left: the baseline of the leak check.
	LeftChecked bool     `json:"left_checked,omitempty"`
	Left        []string `json:"left,omitempty"`
}

// Leftovers is m's baseline of the leak check.
func (m Measure) Leftovers() Leftovers { return Leftovers{Checked: m.LeftChecked, Keys: m.Left} }

// Flaky reports whether the test passed in some runs and not in others.
func (m Measure) Flaky() bool { return m.Passed > 0 && m.Passed < m.Runs }

// Failing reports whether the test passed in none of its runs and did
// not skip itself in all of them.
func (m Measure) Failing() bool { return m.Passed == 0 && m.Skipped < m.Runs }

// Measured folds the fault-free runs of one test into its measure.
func Measured(test string, runs []Attempt) Measure {
	m := Measure{Test: test, Runs: len(runs)}
	sites := map[string]bool{}
	twice, again := 0, 0 // runs that ran the test twice, and passed the second
	for _, r := range runs {
		if r.Passed {
			m.Passed++
		}
		if r.Eligible > 0 && (m.Requests == 0 || r.Eligible < m.Requests) && (r.Passed || !anyPassed(runs)) {
			m.Requests = r.Eligible
		}
		if r.Skipped {
			m.Skipped++
		}
		m.Slowest = max(m.Slowest, r.Elapsed)
		m.Run = max(m.Run, r.Elapsed)
		if r.Again != nil {
			m.Slowest = max(m.Slowest, r.Elapsed+r.Again.Elapsed)
			twice++
			if r.Again.Passed {
				again++
			}
		}
		for _, s := range r.Sites {
			sites[s] = true
		}
	}
	for s := range sites {
		m.Sites = append(m.Sites, s)
	}
	slices.Sort(m.Sites)
	m.Again = twice > 0 && again == twice
	b := leftBaseline(runs)
	m.LeftChecked, m.Left = b.Checked, b.Keys
	return m
}

// anyPassed reports whether one of runs passed.
func anyPassed(runs []Attempt) bool {
	return slices.ContainsFunc(runs, func(r Attempt) bool { return r.Passed })
}

// Selection is which tests get fault trials, and why the others do not.
type Selection struct {
	// Chosen passed every fault-free run and reached a fault site.
	Chosen []Measure
	// Flaky, Failing, Skipped and NoSites are left out: flaky or failing
	// tests would make findings of their own failures, and a test that
	// skipped itself in every run or reached no site cannot be struck by
	// a fault.
	Flaky, Failing, Skipped, NoSites []Measure
}

// Select sorts the measured tests into a Selection, keeping their order.
func Select(ms []Measure) Selection {
	var s Selection
	for _, m := range ms {
		switch {
		case m.Flaky():
			s.Flaky = append(s.Flaky, m)
		case m.Failing():
			s.Failing = append(s.Failing, m)
		case m.Passed == 0:
			s.Skipped = append(s.Skipped, m)
		case len(m.Sites) == 0:
			s.NoSites = append(s.NoSites, m)
		default:
			s.Chosen = append(s.Chosen, m)
		}
	}
	return s
}

// Share is what one chosen test gets of the fault trials, and why.
type Share struct {
	Test string `json:"test"`
	// Sites counts the sites the test reached fault-free, Own those no
	// other chosen test reached.
	Sites int `json:"sites"`
	Own   int `json:"own"`
	// Weight is what the test can give: each site it reached counts
	// 1/k, k the chosen tests that reached it, so the weights add up to
	// the sites the chosen tests reach, and a test that reaches only
	// sites others reach too weighs less than one with sites of its own.
	Weight float64 `json:"weight"`
	// Trials is the number of fault trials it gets.
	Trials int `json:"trials"`
}

// Allot decides which chosen test each of trials fault trials runs: the
// tests share the trials in proportion to their Weight, spread evenly
// over the campaign (smooth weighted round robin: each turn every test
// gains its weight, the one with the most runs and gives the total back),
// ties broken in an order drawn from seed. order[k] is the index in
// chosen of fault trial k's test. The same inputs give the same order, so
// a resumed campaign continues the schedule it started.
func Allot(chosen []Measure, trials int, seed int64) (order []int, shares []Share) {
	reachers := map[string]int{}
	for _, m := range chosen {
		for _, s := range m.Sites {
			reachers[s]++
		}
	}
	shares = make([]Share, len(chosen))
	total := 0.0
	for i, m := range chosen {
		sh := Share{Test: m.Test, Sites: len(m.Sites)}
		for _, s := range m.Sites {
			sh.Weight += 1 / float64(reachers[s])
			if reachers[s] == 1 {
				sh.Own++
			}
		}
		shares[i] = sh
		total += sh.Weight
	}
	if len(chosen) == 0 || total == 0 {
		return nil, shares
	}
	// rank breaks ties: a permutation of the tests drawn from seed.
	rank := rand.New(rand.NewPCG(uint64(seed), uint64(len(chosen)))).Perm(len(chosen))
	current := make([]float64, len(chosen))
	for range trials {
		best := -1
		for i := range chosen {
			current[i] += shares[i].Weight
			if best < 0 || current[i] > current[best]+1e-9 ||
				(math.Abs(current[i]-current[best]) <= 1e-9 && rank[i] < rank[best]) {
				best = i
			}
		}
		current[best] -= total
		shares[best].Trials++
		order = append(order, best)
	}
	return order, shares
}

// HangBound is how long a fault trial of m may run before it is a hang:
// floor, or four times the slowest fault-free run plus the longest
// injected delay, whichever is longer.
func HangBound(m Measure, delay, floor time.Duration) time.Duration {
	return max(floor, 4*m.Slowest+delay)
}

// IgnoredSymptom is the symptom of a test run that failed after the test
// discarded the error injected into one of its own calls (agent.Ignored
// reported it): the test's assumption that the call cannot fail, counted
// with the test assumptions, never a finding.
const IgnoredSymptom = "informational: test assumption (the test ignored the injected error its call returned)"

// ignoredCall is a call of a test file whose discarded error was the
// injected one, as the agent reported it (wire.IgnoredPrefix).
type ignoredCall struct {
	At   string // the call's file:line
	Err  string // the error's text
	Line string // the output line
}

// ignoredCalls returns the calls output reports as having discarded an
// injected error, in their order, and the index in output's lines of the
// first.
func ignoredCalls(output string) (calls []ignoredCall, first int) {
	first = -1
	for i, l := range strings.Split(output, "\n") {
		rest, ok := strings.CutPrefix(l, wire.IgnoredPrefix)
		if !ok {
			continue
		}
		// file:line: error — the file name holds no ": ".
		at, msg, ok := strings.Cut(rest, ": ")
		if !ok {
			continue
		}
		if first < 0 {
			first = i
		}
		calls = append(calls, ignoredCall{At: at, Err: msg, Line: l})
	}
	return calls, first
}

// ignored judges a run that failed (its test's report, "failed"), panicked
// or exited with a status after the test discarded the error an injected
// fault returned to one of its own calls (agent.Ignored, in a test build:
// a statement f(), or "_" in the error's place): the test took the call
// for one that cannot fail and went on with what it left (rafthttp's
// TestSendMessage ignores Transport.Start's error and panics "transport
// stopped" at its first send). Scope: the reported error must quote an
// error fault of inj (check.InjectedTexts); the report must come before
// every line the test's files wrote (t.Log, t.Error and t.Fatal go to
// stdout in order with it, so a test that failed first and ignored an
// error in its cleanup after stays a finding); a panic or exit (stderr,
// not ordered with stdout) follows it as the process ends after every line
// it wrote. A hang, a data race, a runtime fatal error (a concurrent map
// write, all goroutines asleep) or a kill by a signal stays a finding, as
// does a run whose discarded errors were all nil (no report: the
// wal.Create shape, a call that returned nil while the code lost the
// error) or another error than the injected one.
func ignored(r Attempt, bound time.Duration, inj []record.Injection) (record.Verdict, bool) {
	out := r.Outcome(bound)
	if out != "failed" && out != "panicked" && !strings.HasPrefix(out, "exited with status ") {
		return record.Verdict{}, false
	}
	if strings.Contains("\n"+r.Output, "\nfatal error: ") {
		return record.Verdict{}, false
	}
	calls, first := ignoredCalls(r.Output)
	if len(calls) == 0 {
		return record.Verdict{}, false
	}
	for i, l := range strings.Split(r.Output, "\n") {
		if i >= first {
			break
		}
		if testLine.MatchString(l) {
			return record.Verdict{}, false
		}
	}
	for _, c := range calls {
		for _, in := range inj {
			if _, ok := quotes(c.Err, in); !ok {
				continue
			}
			why := fmt.Sprintf("%s %s after it ignored the injected error its call at %s returned (%s): the test took the call for one that cannot fail and went on", r.Test, out, filepath.Base(c.At), c.Err)
			return record.Verdict{
				Checker:  Checker,
				Symptom:  IgnoredSymptom,
				Evidence: append([]string{why, c.Line}, failureLines(r.Output, 10)...),
				Nodes:    []string{Node},
			}, true
		}
	}
	return record.Verdict{}, false
}
