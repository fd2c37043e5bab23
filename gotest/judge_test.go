package gotest

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOutcome(t *testing.T) {
	const bound = 30 * time.Second
	for _, tc := range []struct {
		name string
		a    Attempt
		want string
	}{
		{"passed", Attempt{Test: "TestA", Passed: true}, ""},
		{"skipped", Attempt{Test: "TestA", Skipped: true}, ""},
		{"hung", Attempt{Test: "TestA", TimedOut: true, Output: "panic: test timed out after 30s"}, "hung past 30s"},
		{"failed", Attempt{Test: "TestA", ExitCode: 1, Output: "=== RUN   TestA\n--- FAIL: TestA (0.00s)\nFAIL\n"}, "failed"},
		{"panicked", Attempt{Test: "TestA", ExitCode: 2, Output: "=== RUN   TestA\npanic: boom\n\ngoroutine 1"}, "panicked"},
		{"race", Attempt{Test: "TestA", ExitCode: 1, Output: "==================\nWARNING: DATA RACE\n--- FAIL: TestA (0.00s)\n"}, "reported a data race"},
		{"signal", Attempt{Test: "TestA", ExitCode: -1, Signal: "SIGKILL"}, "was killed by SIGKILL"},
		{"exit without a FAIL line", Attempt{Test: "TestA", ExitCode: 3}, "exited with status 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Outcome(bound); got != tc.want {
				t.Errorf("Outcome = %q, want %q", got, tc.want)
			}
			v := Verdict(tc.a, bound)
			if v.Failed != (tc.want != "") || v.Checker != Checker {
				t.Errorf("Verdict = %+v, want failed %v", v, tc.want != "")
			}
			if v.Failed && v.Symptom != "TestA "+tc.want {
				t.Errorf("Verdict.Symptom = %q", v.Symptom)
			}
		})
	}
}

func TestPassed(t *testing.T) {
	for _, tc := range []struct {
		out  string
		code int
		want bool
	}{
		{"=== RUN   TestA\n--- PASS: TestA (0.01s)\nPASS\n", 0, true},
		{"testing: warning: no tests to run\nPASS\n", 0, false},            // -test.run matched nothing
		{"--- PASS: TestAB (0.01s)\nPASS\n", 0, false},                     // another test
		{"--- PASS: TestA (0.01s)\n--- FAIL: TestA/sub\nFAIL\n", 1, false}, // exit status wins
		{"=== RUN   TestA\n--- SKIP: TestA (0.00s)\nPASS\n", 0, false},     // skipped
	} {
		if got := passed("TestA", tc.out, tc.code); got != tc.want {
			t.Errorf("passed(%q, %d) = %v, want %v", tc.out, tc.code, got, tc.want)
		}
		if got, want := skipped("TestA", tc.out, tc.code), strings.Contains(tc.out, "SKIP"); got != want {
			t.Errorf("skipped(%q, %d) = %v, want %v", tc.out, tc.code, got, want)
		}
	}
}

func TestFailureLines(t *testing.T) {
	out := "=== RUN   TestA\nsome log line at x.go:3: no\n    testing.go:760: err: EIO\n    a_test.go:12: want 1, got 2\n--- FAIL: TestA (0.00s)\nFAIL\n"
	got := failureLines(out, 20)
	want := []string{"    testing.go:760: err: EIO", "    a_test.go:12: want 1, got 2", "--- FAIL: TestA (0.00s)"}
	if !slices.Equal(got, want) {
		t.Errorf("failureLines = %q, want %q", got, want)
	}
	if got := failureLines("a\nb\nc\n", 2); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("failureLines without failure lines = %q, want the last 2", got)
	}
}

func TestSelect(t *testing.T) {
	ok := func(name string, sites ...string) []Attempt {
		return []Attempt{{Test: name, Passed: true, Sites: sites}, {Test: name, Passed: true, Elapsed: time.Second}}
	}
	ms := []Measure{
		Measured("TestA", ok("TestA", "s1", "s2")),
		Measured("TestFlaky", []Attempt{{Passed: true, Sites: []string{"s1"}}, {Passed: false}}),
		Measured("TestFail", []Attempt{{}, {}}),
		Measured("TestSkip", []Attempt{{Skipped: true}, {Skipped: true}}),
		Measured("TestSkipOnce", []Attempt{{Skipped: true}, {}}),
		Measured("TestNoIO", ok("TestNoIO")),
		Measured("TestB", ok("TestB", "s2")),
	}
	s := Select(ms)
	names := func(ms []Measure) string {
		var n []string
		for _, m := range ms {
			n = append(n, m.Test)
		}
		return strings.Join(n, ",")
	}
	for _, c := range []struct{ what, got, want string }{
		{"chosen", names(s.Chosen), "TestA,TestB"},
		{"flaky", names(s.Flaky), "TestFlaky"},
		{"failing", names(s.Failing), "TestFail,TestSkipOnce"},
		{"skipped", names(s.Skipped), "TestSkip"},
		{"no sites", names(s.NoSites), "TestNoIO"},
		{"trial 0", s.TestFor(0).Test, "TestA"},
		{"trial 1", s.TestFor(1).Test, "TestB"},
		{"trial 2", s.TestFor(2).Test, "TestA"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if m := ms[0]; m.Slowest != time.Second || !slices.Equal(m.Sites, []string{"s1", "s2"}) {
		t.Errorf("Measured = %+v, want slowest 1s, sites s1 s2", m)
	}
}

func TestHangBound(t *testing.T) {
	for _, tc := range []struct {
		slowest, delay, floor, want time.Duration
	}{
		{time.Second, 2 * time.Second, 30 * time.Second, 30 * time.Second},
		{10 * time.Second, 2 * time.Second, 30 * time.Second, 42 * time.Second},
	} {
		if got := HangBound(Measure{Slowest: tc.slowest}, tc.delay, tc.floor); got != tc.want {
			t.Errorf("HangBound(%s, %s, %s) = %s, want %s", tc.slowest, tc.delay, tc.floor, got, tc.want)
		}
	}
}

func TestTestFlags(t *testing.T) {
	got := TestFlags([]string{"-short", "-test.v", "--count=3", "-timeout", "5m", "-myflag", "x"})
	want := []string{"-test.short", "-test.v", "-test.count=3", "-test.timeout", "5m", "-myflag", "x"}
	if !slices.Equal(got, want) {
		t.Errorf("TestFlags = %q, want %q", got, want)
	}
}

func TestImportPath(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{".", "example.com/m"},
		{"./store", "example.com/m/store"},
		{"./store/../wal/", "example.com/m/wal"},
		{"./...", "./..."},
		{"example.com/other", "example.com/other"},
	} {
		if got := importPath("example.com/m", tc.pattern); got != tc.want {
			t.Errorf("importPath(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}
