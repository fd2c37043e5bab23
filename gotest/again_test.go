package gotest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// twoRuns is the -test.v output of a process that ran TestX twice, the
// first run failing on its report, the second as second says.
func twoRuns(second string) string {
	return "=== RUN   TestX\n" +
		"    x_test.go:9: open: input/output error\n" +
		"--- FAIL: TestX (0.01s)\n" +
		"=== RUN   TestX\n" + second
}

func TestSplitRuns(t *testing.T) {
	for _, tc := range []struct {
		name, out     string
		first, second string
		ok            bool
	}{
		{"two runs", twoRuns("--- PASS: TestX (0.00s)\nPASS\n"),
			"=== RUN   TestX\n    x_test.go:9: open: input/output error\n--- FAIL: TestX (0.01s)\n",
			"=== RUN   TestX\n--- PASS: TestX (0.00s)\nPASS\n", true},
		{"one run (it panicked)", "=== RUN   TestX\npanic: boom\n", "=== RUN   TestX\npanic: boom\n", "", false},
		{"subtests are not runs", "=== RUN   TestX\n=== RUN   TestX/a\n--- PASS: TestX (0.00s)\n    --- PASS: TestX/a (0.00s)\n",
			"=== RUN   TestX\n=== RUN   TestX/a\n--- PASS: TestX (0.00s)\n    --- PASS: TestX/a (0.00s)\n", "", false},
		{"another test's name as a prefix", "=== RUN   TestX\n--- PASS: TestX (0.00s)\n=== RUN   TestXY\n",
			"=== RUN   TestX\n--- PASS: TestX (0.00s)\n=== RUN   TestXY\n", "", false},
		{"the line quoted inside another", "=== RUN   TestX\n    log: === RUN   TestX\n--- PASS: TestX (0.00s)\n",
			"=== RUN   TestX\n    log: === RUN   TestX\n--- PASS: TestX (0.00s)\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, second, ok := splitRuns("TestX", tc.out)
			if first != tc.first || second != tc.second || ok != tc.ok {
				t.Errorf("splitRuns = %q, %q, %v; want %q, %q, %v", first, second, ok, tc.first, tc.second, tc.ok)
			}
		})
	}
}

func TestEndLine(t *testing.T) {
	for line, want := range map[string]bool{
		"--- PASS: TestX (0.00s)":     true,
		"--- FAIL: TestX (1.20s)":     true,
		"--- SKIP: TestX (0.00s)":     true,
		"    --- PASS: TestX (0.00s)": false, // a subtest's place
		"--- PASS: TestXY (0.00s)":    false,
		"--- PASS: TestX/a (0.00s)":   false,
		"=== RUN   TestX":             false,
	} {
		if got := endLine("TestX", line); got != want {
			t.Errorf("endLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestSplitAttempt: the first run gets its output, its reports and its
// time, and ends as the testing package ended it; the second's status
// is the process's unless the first failed.
func TestSplitAttempt(t *testing.T) {
	start := time.Unix(100, 0)
	began := start.Add(3 * time.Second)
	r := Attempt{Test: "TestX", ExitCode: 1, Elapsed: 5 * time.Second,
		Output:  twoRuns("    x_test.go:12: len 0, want 1\n--- FAIL: TestX (0.00s)\nFAIL\n"),
		Reports: []Report{{Line: "    x_test.go:9: open", At: start.Add(time.Second)}, {Line: "    x_test.go:12: len", At: began.Add(time.Second)}}}
	got := splitAttempt(r, start, began)
	if got.Passed || got.ExitCode != 1 || got.Elapsed != 3*time.Second || len(got.Reports) != 1 || got.Outcome(time.Minute) != "failed" {
		t.Errorf("first run %+v", got)
	}
	a := got.Again
	if a == nil || a.Passed || a.Elapsed != 2*time.Second || !a.Began.Equal(began) || len(a.Reports) != 1 || a.Outcome(time.Minute) != "failed" || strings.Contains(a.Output, "x_test.go:9") {
		t.Fatalf("second run %+v", a)
	}

	// The first failed, the second passed: the process exits 1, yet the
	// second passed.
	r.Output = twoRuns("--- PASS: TestX (0.00s)\nFAIL\n")
	if a := splitAttempt(r, start, began).Again; a == nil || !a.Passed {
		t.Errorf("second run after a failed first: %+v, want passed", a)
	}
	// The first passed, the process exited 1: the second did not pass.
	r.Output = "=== RUN   TestX\n--- PASS: TestX (0.00s)\n=== RUN   TestX\n--- PASS: TestX (0.00s)\nleak: goroutine left\n"
	if got := splitAttempt(r, start, began); !got.Passed || got.Again == nil || got.Again.Passed {
		t.Errorf("status 1 after two passes: first %v, second %+v; want the first passed, the second not", got.Passed, got.Again)
	}
	// No second run: unchanged.
	r.Output = "=== RUN   TestX\npanic: boom\n"
	if got := splitAttempt(r, start, began); got.Again != nil || got.Output != r.Output || got.Elapsed != r.Elapsed {
		t.Errorf("one run: %+v", got)
	}
}

// TestAgainVerdict: a second run that fails with no fault of its own
// after a first that was no finding is one; a second run struck itself,
// after a delay still held, after a cut, or after no fault, is not judged;
// a first-run finding stays itself.
func TestAgainVerdict(t *testing.T) {
	t0 := time.Unix(100, 0)
	began := t0.Add(3 * time.Second)
	eio := record.Injection{Kind: catalog.KindError, Error: "EIO", SiteID: "p.Open#os.WriteFile.0", Time: t0}
	delay := func(d time.Duration) record.Injection {
		return record.Injection{Kind: catalog.KindDelay, Delay: d, SiteID: "p.Open#os.WriteFile.0", Time: t0}
	}
	failed := "=== RUN   TestX\n    x_test.go:12: store already open\n--- FAIL: TestX (0.00s)\n"
	assumption := record.Verdict{Checker: Checker, Symptom: AssumptionSymptom, Evidence: []string{"why"}}
	finding := record.Verdict{Checker: Checker, Failed: true, Symptom: "TestX panicked", Evidence: []string{"panic"}}
	for _, tc := range []struct {
		name   string
		second string // "" no second run
		inj    []record.Injection
		v      record.Verdict
		want   string // the symptom
		failed bool
	}{
		{"passed, second failed: state left behind", failed, []record.Injection{eio}, record.Verdict{Checker: Checker}, "TestX failed" + AgainSuffix, true},
		{"assumption, second reports the injected error again", "=== RUN   TestX\n    x_test.go:9: init: input/output error\n--- FAIL: TestX (0.00s)\n", []record.Injection{eio}, assumption, "TestX failed" + AgainSuffix, true},
		{"assumption, second failed quoting nothing (the test's leftovers)", failed, []record.Injection{eio}, assumption, AssumptionSymptom, false},
		{"assumption, a leftover goroutine's log panics the second", "=== RUN   TestX\npanic: Log in goroutine after TestX has completed: open: input/output error\n", []record.Injection{eio}, assumption, AssumptionSymptom, false},
		{"a delay that ended before the second run", failed, []record.Injection{delay(2 * time.Second)}, record.Verdict{Checker: Checker}, "TestX failed" + AgainSuffix, true},
		{"assumption, second passed", "=== RUN   TestX\n--- PASS: TestX (0.00s)\n", []record.Injection{eio}, assumption, AssumptionSymptom, false},
		{"no second run", "", []record.Injection{eio}, assumption, AssumptionSymptom, false},
		{"a finding stays one", failed, []record.Injection{eio}, finding, "TestX panicked", true},
		{"no fault", failed, nil, record.Verdict{Checker: Checker}, "", false},
		{"the second run struck too", "=== RUN   TestX\n" + wire.StrikeLine + "    x_test.go:12: open: EIO\n--- FAIL: TestX (0.00s)\n", []record.Injection{eio}, assumption, AssumptionSymptom, false},
		{"a delay still held", failed, []record.Injection{delay(5 * time.Second)}, record.Verdict{Checker: Checker}, "", false},
		{"passed, a leftover goroutine's log panics the second", "=== RUN   TestX\npanic: Log in goroutine after TestX has completed: dial: refused\n", []record.Injection{eio}, record.Verdict{Checker: Checker}, "", false},
		{"a cut", failed, []record.Injection{{Kind: catalog.KindDisconnect, Time: t0}}, record.Verdict{Checker: Checker}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Attempt{Test: "TestX"}
			if tc.second != "" {
				a := Attempt{Test: "TestX", ExitCode: 1, Output: tc.second, Began: began}
				a.Passed = passed("TestX", a.Output, 0)
				r.Again = &a
			}
			v := againVerdict(r, time.Minute, tc.inj, tc.v)
			if v.Symptom != tc.want || v.Failed != tc.failed {
				t.Fatalf("verdict %q failed %v, want %q failed %v; evidence %q", v.Symptom, v.Failed, tc.want, tc.failed, v.Evidence)
			}
			switch {
			case tc.want == "TestX failed"+AgainSuffix:
				if !strings.Contains(v.Evidence[0], "passed twice in one process fault-free") || !strings.Contains(strings.Join(v.Evidence, "\n"), "x_test.go:") {
					t.Errorf("evidence %q: want the why and the second run's report", v.Evidence)
				}
			case tc.name == "a finding stays one":
				if last := v.Evidence[len(v.Evidence)-1]; last != "its second run in the same process then failed" {
					t.Errorf("evidence ends %q", last)
				}
			case tc.name == "the second run struck too":
				if last := v.Evidence[len(v.Evidence)-1]; !strings.Contains(last, "not judged: a fault struck it too") {
					t.Errorf("evidence ends %q", last)
				}
			case strings.HasPrefix(tc.name, "assumption, ") && strings.Contains(tc.name, "leftover"):
				if last := v.Evidence[len(v.Evidence)-1]; !strings.Contains(last, "; not judged: ") {
					t.Errorf("evidence ends %q", last)
				}
			}
		})
	}
}

// TestMeasuredAgain: a test passes twice in one process only when every
// run that ran it twice passed the second; the slowest counts both, the
// slowest single run the first.
func TestMeasuredAgain(t *testing.T) {
	once := Attempt{Test: "TestX", Passed: true, Elapsed: time.Second}
	ok := Attempt{Test: "TestX", Passed: true, Elapsed: time.Second, Again: &Attempt{Passed: true, Elapsed: 2 * time.Second}}
	bad := Attempt{Test: "TestX", Passed: true, Elapsed: time.Second, Again: &Attempt{Elapsed: time.Second}}
	if m := Measured("TestX", []Attempt{once, ok}); !m.Again || m.Slowest != 3*time.Second || m.Run != time.Second || m.Passed != 2 {
		t.Errorf("once, then twice: %+v", m)
	}
	if m := Measured("TestX", []Attempt{once, bad}); m.Again || m.Passed != 2 {
		t.Errorf("a second run that failed: %+v", m)
	}
	if m := Measured("TestX", []Attempt{once, once}); m.Again {
		t.Errorf("never twice: %+v", m)
	}
}

// TestAgainEndToEnd runs testdata/leftstore: TestOpen reports Open's
// injected error and its next run passes (an assumption); TestOpenLeaky
// passes with the fault and the planted leak fails its next run "already
// open"; TestInit reports Init's error and the planted sync.Once hands it
// to the next run again — both findings, and only with the second run
// (Once: none). TestLeftover t.Fatal's the error before it stops its
// worker, which fails the next run: the test's leftover, no finding
// either way.
func TestAgainEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test binary")
	}
	for _, once := range []bool{false, true} {
		dir := t.TempDir()
		sum, err := Run(context.Background(), Options{
			Module: "testdata/leftstore", Package: ".", WorkDir: dir, Once: once,
			Policy: "random", Seed: 1, Trials: 12, Kinds: []catalog.Kind{catalog.KindError},
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		base, fault := split(storedTrials(t, dir, sum.Campaign))
		if len(base) != 8 {
			t.Fatalf("once %v: %d fault-free runs, want 8", once, len(base))
		}
		wantTwice := 4
		if once {
			wantTwice = 0
		}
		if sum.Twice != wantTwice {
			t.Errorf("once %v: %d tests run twice, want %d", once, sum.Twice, wantTwice)
		}
		want := map[string]string{"TestOpen": AssumptionSymptom, "TestOpenLeaky": "", "TestInit": AssumptionSymptom, "TestLeftover": AssumptionSymptom}
		if !once {
			want["TestOpenLeaky"] = "TestOpenLeaky failed" + AgainSuffix
			want["TestInit"] = "TestInit failed" + AgainSuffix
		}
		struck := map[string]int{}
		for _, tr := range fault {
			if len(tr.Injections) == 0 {
				continue
			}
			test := tr.Test()
			struck[test]++
			v := tr.Verdicts[0]
			if v.Symptom != want[test] || v.Failed != strings.HasSuffix(want[test], AgainSuffix) {
				t.Errorf("once %v: trial %s of %s: %q failed %v, evidence %q; want %q", once, tr.ID, test, v.Symptom, v.Failed, v.Evidence, want[test])
			}
			// The control did panic its second run, and the rule said why
			// that is no finding.
			if test == "TestLeftover" && !once && !strings.Contains(strings.Join(v.Evidence, "\n"), "failed; not judged: its first run failed") {
				t.Errorf("trial %s of TestLeftover: evidence %q; want its second run's panic not judged", tr.ID, v.Evidence)
			}
		}
		for test := range want {
			if struck[test] == 0 {
				t.Fatalf("once %v: trials with a fault by test %v: want every test struck", once, struck)
			}
		}
		findings := 2
		if once {
			findings = 0
		}
		if sum.Findings != findings {
			t.Errorf("once %v: %d findings, want %d", once, sum.Findings, findings)
		}
	}
}

// TestTwice: a test's fault trials run it twice when it passed twice
// fault-free, --once is off and its slowest run is within TwiceMax.
func TestTwice(t *testing.T) {
	o := Options{TwiceMax: 10 * time.Second}
	for _, tc := range []struct {
		m    Measure
		once bool
		want bool
	}{
		{Measure{Again: true, Run: time.Second}, false, true},
		{Measure{Again: true, Run: 10 * time.Second}, false, true},
		{Measure{Again: true, Run: 84 * time.Second}, false, false},
		{Measure{Again: false, Run: time.Second}, false, false},
		{Measure{Again: true, Run: time.Second}, true, false},
	} {
		o.Once = tc.once
		if got := twice(tc.m, o); got != tc.want {
			t.Errorf("twice(%+v, once %v) = %v, want %v", tc.m, tc.once, got, tc.want)
		}
	}
}

// TestReportClockRuns: the clock calls onEnd once, at the line that ends
// the test's first top-level run (not a subtest's, not another test's),
// and keeps when it read the line that starts the second run, as the
// lines come in pieces.
func TestReportClockRuns(t *testing.T) {
	now := time.Unix(100, 0)
	ends := 0
	c := &reportClock{now: func() time.Time { return now }, test: "TestX", onEnd: func() { ends++ }}
	for _, w := range []string{
		"=== RUN   TestX\n=== RUN   TestX/a\n    --- PASS: TestX/a (0.00s)\n--- PA",
		"SS: TestXY (0.00s)\n--- FAIL: TestX (0.01s)\n",
		"=== RUN   TestX\n",
		"--- PASS: TestX (0.00s)\n",
	} {
		now = now.Add(time.Second)
		c.Write([]byte(w))
		if now.Equal(time.Unix(102, 0)) && ends != 1 {
			t.Fatalf("after the first run's end line: onEnd called %d times", ends)
		}
	}
	if ends != 1 || !c.Began().Equal(time.Unix(103, 0)) {
		t.Errorf("onEnd called %d times, second run began %v; want once and %v", ends, c.Began(), time.Unix(103, 0))
	}
}
