package gotest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
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
			v := Verdict(tc.a, bound, nil)
			if v.Failed != (tc.want != "") || v.Checker != Checker {
				t.Errorf("Verdict = %+v, want failed %v", v, tc.want != "")
			}
			if v.Failed && v.Symptom != "TestA "+tc.want {
				t.Errorf("Verdict.Symptom = %q", v.Symptom)
			}
		})
	}
}

// TestAssumption: a test that failed reporting the error injected into
// it (its t.Fatal line quotes the error's text) made an assumption, not a
// finding; a test that failed on a later consequence of a swallowed
// error (planted: retrystore's drop bug, a missing record), panicked
// other than in the cleanup its t.Fatal of the injected error ran, or
// quoted no injected error stays a finding.
func TestAssumption(t *testing.T) {
	const bound = 30 * time.Second
	eio := []record.Injection{{Kind: catalog.KindError, Error: "EIO", SiteID: "p.Save:os.WriteFile#0"}}
	failed := func(lines ...string) Attempt {
		return Attempt{Test: "TestSaveLoad", ExitCode: 1, Output: "=== RUN   TestSaveLoad\n" + strings.Join(lines, "\n") + "\n--- FAIL: TestSaveLoad (0.00s)\nFAIL\n"}
	}
	for _, tc := range []struct {
		name string
		a    Attempt
		inj  []record.Injection
		want string // "" a finding; else in the assumption's evidence
	}{
		{"the test reports the injected EIO", failed("    store_test.go:12: save: save a: open /tmp/x/a: input/output error"), eio,
			"TestSaveLoad failed reporting the EIO (input/output error) injected into the code it calls"},
		{"a swallowed error seen later (planted)", failed("    store_test.go:16: load after a save that succeeded: load a: open /tmp/x/a: no such file or directory"), eio, ""},
		{"the text only in a log line of the code, not the test's report", failed("    store.go:40: retrying after input/output error", "    store_test.go:16: load = \"\", want \"hello\""), eio, ""},
		{"a panic after a line that quotes it", Attempt{Test: "TestSaveLoad", ExitCode: 2, Output: "    store_test.go:12: save: input/output error\npanic: runtime error: index out of range [3] with length 3\n"}, eio, ""},
		{"its deferred cleanup panics after it t.Fatals the injected EIO (etcd's wal testRepair)", Attempt{Test: "TestRepairTruncate", ExitCode: 2, Output: walRepairPanic},
			eio, "TestRepairTruncate failed reporting the EIO (input/output error) injected into the code it calls: the error reached the test, which took the call for one that cannot fail; then its deferred cleanup panicked"},
		{"the same panic after a t.Fatal of another error", Attempt{Test: "TestRepairTruncate", ExitCode: 2, Output: strings.Replace(walRepairPanic, "input/output error", "file already exists", 1)}, eio, ""},
		{"a panic not in t.Fatal's cleanup after the test reported the error (t.Error, then a nil dereference)", Attempt{Test: "TestRepairTruncate", ExitCode: 2,
			Output: strings.Replace(strings.Replace(walRepairPanic, "runtime.Goexit()", "", 1), "testing.(*common).FailNow(", "go.etcd.io/etcd/server/v3/wal.(*WAL).tail(", 1)}, eio, ""},
		{"testify's require.NoError of the injected EIO (etcd v3.6's wal TestWalCleanup)", failed("    wal_test.go:176: ",
			"        \tError Trace:\t/x/storage/wal/wal_test.go:176",
			"        \tError:      \tReceived unexpected error:",
			"        \t            \tinput/output error",
			"        \tTest:       \tTestWalCleanup"), eio, "TestSaveLoad failed reporting the EIO (input/output error)"},
		{"testify's report of a consequence, the injected error swallowed (wal.Create's bug)", failed("    wal_test.go:96: ",
			"        \tError Trace:\t/x/storage/wal/wal_test.go:96",
			"        \tError:      \tNot equal: ",
			"        \t            \texpected: *fs.PathError(file already exists)",
			"        \t            \tactual  : <nil>(<nil>)",
			"        \tMessages:   \terr = <nil>, want file already exists",
			"    logger.go:146: 2026-12-07T04:21:13.348Z\tWARN\tretrying after input/output error"), eio, ""},
		{"a delay, no error injected", failed("    store_test.go:12: save: input/output error"), []record.Injection{{Kind: catalog.KindDelay}}, ""},
		{"an injected EOF", failed("    peer_test.go:40: read: unexpected EOF"), []record.Injection{{Kind: catalog.KindError, Error: "io.ErrUnexpectedEOF"}},
			"ErrUnexpectedEOF (unexpected EOF)"},
		{"the test reports it after 30 lines of its server's log (etcd's zaptest logger)",
			Attempt{Test: "TestKV", ExitCode: 1, Output: strings.Replace(loggedFailure(30, "    kv_test.go:50: put: input/output error"), "panic: boom\n", "FAIL\n", 1)},
			eio, "TestKV failed reporting the EIO (input/output error)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Verdict(tc.a, bound, tc.inj)
			switch {
			case tc.want == "" && (!v.Failed || v.Symptom == AssumptionSymptom):
				t.Errorf("Verdict = %+v, want a finding", v)
			case tc.want != "" && (v.Failed || v.Symptom != AssumptionSymptom || len(v.Evidence) == 0 || !strings.Contains(v.Evidence[0], tc.want)):
				t.Errorf("Verdict = %+v, want the assumption, saying %q", v, tc.want)
			}
		})
	}
}

// walRepairPanic is etcd's TestRepairTruncate (v3.5.35, wal/repair_test.go)
// after an EIO at wal.write: Create failed, the test t.Fatal'd its error,
// and the w.Close() it had deferred before checking the error closed the
// nil *WAL.
const walRepairPanic = `=== RUN   TestRepairTruncate
    repair_test.go:61: write : input/output error
--- FAIL: TestRepairTruncate (0.00s)
panic: runtime error: invalid memory address or nil pointer dereference [recovered, repanicked]
[signal SIGSEGV: segmentation violation code=0x1 addr=0x9c pc=0x768f88]

goroutine 12 [running]:
testing.tRunner.func1.2({0x813ba0, 0xc363e0})
	/usr/local/go/src/testing/testing.go:1974 +0x232
testing.tRunner.func1()
	/usr/local/go/src/testing/testing.go:1977 +0x349
panic({0x813ba0?, 0xc363e0?})
	/usr/local/go/src/runtime/panic.go:860 +0x13a
sync.(*Mutex).Lock(...)
	/usr/local/go/src/sync/mutex.go:46
go.etcd.io/etcd/server/v3/wal.(*WAL).Close(0x0)
	/tmp/etcd/wal/wal.go:869 +0x48
go.etcd.io/etcd/server/v3/wal.testRepair.func1()
	/tmp/etcd/wal/repair_test.go:56 +0x30
runtime.Goexit()
	/usr/local/go/src/runtime/panic.go:694 +0x5e
testing.(*common).FailNow(0xc643cdbe6c8)
	/usr/local/go/src/testing/testing.go:1022 +0x4a
testing.(*common).Fatal(0xc643cdbe6c8, {0xc643cd07ea0?, 0x34?, 0x0?})
	/usr/local/go/src/testing/testing.go:1221 +0x4f
go.etcd.io/etcd/server/v3/wal.testRepair(0xc643cdbe6c8, {0xc643cd72f00, 0xa, 0x9720bd?}, 0x8c1c98, 0x9)
	/tmp/etcd/wal/repair_test.go:61 +0x22b
testing.tRunner(0xc643cdbe6c8, 0x8c1a70)
	/usr/local/go/src/testing/testing.go:2036 +0xea
created by testing.(*T).Run in goroutine 1
	/usr/local/go/src/testing/testing.go:2101 +0x4c5
FAIL	go.etcd.io/etcd/server/v3/wal	0.012s
`

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
	// etcd's integration tests log every server line through t.Log
	// (zaptest's logger.go:146): the report after 30 of them is kept, with
	// the last log lines before it, not the first.
	got = failureLines(loggedFailure(30, "    kv_test.go:50: put: input/output error"), 5)
	want = []string{"    logger.go:146: server log 28", "    logger.go:146: server log 29", "    kv_test.go:50: put: input/output error", "--- FAIL: TestKV (0.00s)", "panic: boom"}
	if !slices.Equal(got, want) {
		t.Errorf("failureLines after 30 log lines = %q, want %q", got, want)
	}
}

// loggedFailure is the output of a test that wrote n log lines through
// t.Log from a non-test file, then report, then failed and panicked.
func loggedFailure(n int, report string) string {
	var b strings.Builder
	b.WriteString("=== RUN   TestKV\n")
	for i := range n {
		fmt.Fprintf(&b, "    logger.go:146: server log %d\n", i)
	}
	b.WriteString(report + "\n--- FAIL: TestKV (0.00s)\npanic: boom\n")
	return b.String()
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
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if m := ms[0]; m.Slowest != time.Second || !slices.Equal(m.Sites, []string{"s1", "s2"}) {
		t.Errorf("Measured = %+v, want slowest 1s, sites s1 s2", m)
	}
}

func TestAllot(t *testing.T) {
	m := func(name string, sites ...string) Measure { return Measure{Test: name, Sites: sites} }
	for _, tc := range []struct {
		name   string
		chosen []Measure
		trials int
		// want are the trials each test gets, in chosen order; weights
		// their Weight.
		want    []int
		weights []float64
		own     []int
	}{
		{"equal tests share evenly", []Measure{m("A", "s1"), m("B", "s2")}, 10, []int{5, 5}, []float64{1, 1}, []int{1, 1}},
		// B reaches only a site A reaches too: A 1 + 1/2, B 1/2.
		{"a test reaching only shared sites gets fewer", []Measure{m("A", "s1", "s2"), m("B", "s2")}, 20, []int{15, 5}, []float64{1.5, 0.5}, []int{1, 0}},
		{"sites of its own weigh most", []Measure{m("A", "s1"), m("B", "s1", "s2", "s3", "s4"), m("C", "s1")}, 30, []int{3, 25, 2}, []float64{1.0 / 3, 3 + 1.0/3, 1.0 / 3}, []int{0, 3, 0}},
		{"a test with the same sites as another", []Measure{m("A", "s1", "s2"), m("B", "s1", "s2")}, 7, []int{3, 4}, []float64{1, 1}, []int{0, 0}},
		{"fewer trials than tests: the heaviest first", []Measure{m("A", "s1"), m("B", "s2", "s3"), m("C", "s4", "s5", "s6")}, 2, []int{0, 1, 1}, []float64{1, 2, 3}, []int{1, 2, 3}},
		{"no trials", []Measure{m("A", "s1")}, 0, []int{0}, []float64{1}, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			order, shares := Allot(tc.chosen, tc.trials, 1)
			if len(order) != tc.trials {
				t.Fatalf("order has %d trials, want %d", len(order), tc.trials)
			}
			count := make([]int, len(tc.chosen))
			for _, i := range order {
				count[i]++
			}
			for i, sh := range shares {
				if sh.Test != tc.chosen[i].Test || sh.Trials != tc.want[i] || count[i] != tc.want[i] ||
					math.Abs(sh.Weight-tc.weights[i]) > 1e-9 || sh.Own != tc.own[i] || sh.Sites != len(tc.chosen[i].Sites) {
					t.Errorf("share %d = %+v (ordered %d), want %s: %d trials, weight %.3f, %d own", i, sh, count[i], tc.chosen[i].Test, tc.want[i], tc.weights[i], tc.own[i])
				}
			}
			// Each gets its proportional share, rounded one way or the other.
			total := 0.0
			for _, sh := range shares {
				total += sh.Weight
			}
			for _, sh := range shares {
				if d := float64(sh.Trials) - float64(tc.trials)*sh.Weight/total; math.Abs(d) >= 1 {
					t.Errorf("%s gets %d trials, %.2f off its share of %d", sh.Test, sh.Trials, d, tc.trials)
				}
			}
			// Spread, not in blocks: no test runs twice in a row while
			// another with at least as much weight waits.
			for k := 1; k < len(order); k++ {
				if order[k] == order[k-1] && shares[order[k]].Weight <= 1 {
					t.Errorf("trials %d and %d both run %s (weight %.2f): %v", k-1, k, shares[order[k]].Test, shares[order[k]].Weight, order)
				}
			}
			again, _ := Allot(tc.chosen, tc.trials, 1)
			if !slices.Equal(order, again) {
				t.Errorf("Allot is not deterministic: %v then %v", order, again)
			}
		})
	}
	// The seed breaks ties: some seed puts B first among equals.
	eq := []Measure{m("A", "s1"), m("B", "s2")}
	firsts := map[int]bool{}
	for seed := range int64(8) {
		order, _ := Allot(eq, 1, seed)
		firsts[order[0]] = true
	}
	if len(firsts) != 2 {
		t.Errorf("the first trial of two equal tests is the same test for 8 seeds: the seed does not break ties")
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
	for flags, want := range map[string]bool{"--count=3": true, "-count 2": true, "-test.count=1": true, "-short -v": false, "-myflag count": false} {
		if got := ownCount(strings.Fields(flags)); got != want {
			t.Errorf("ownCount(%s) = %v, want %v", flags, got, want)
		}
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

// TestMeasuredRequests: a test's expected requests are its leanest passed
// run's outside setup (a failed run's only when none passed; a run that
// made none, e.g. a measure stored before they were counted, is no
// estimate).
func TestMeasuredRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []Attempt
		want int
	}{
		{"leanest passed run", []Attempt{{Passed: true, Eligible: 40}, {Passed: true, Eligible: 25}}, 25},
		{"a failed run is no estimate beside a passed one", []Attempt{{Passed: true, Eligible: 40}, {Eligible: 3}}, 40},
		{"none passed", []Attempt{{Eligible: 9}, {Eligible: 12}}, 9},
		{"none counted", []Attempt{{Passed: true}, {Passed: true, Eligible: 0}}, 0},
		{"a run without requests is skipped", []Attempt{{Passed: true}, {Passed: true, Eligible: 7}}, 7},
	} {
		if got := Measured("TestX", tc.runs).Requests; got != tc.want {
			t.Errorf("%s: Requests = %d, want %d", tc.name, got, tc.want)
		}
	}
}
