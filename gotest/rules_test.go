package gotest

import (
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// TestFailStopVerdict: a test process that etcd's backend stopped with a
// fatal or panic quoting the injected error is a fail-stop, apart from
// findings; a nil dereference after the error (planted), a fatal that
// quotes another error, one after a delay only, and a hang stay findings.
func TestFailStopVerdict(t *testing.T) {
	const bound = 30 * time.Second
	at := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	eio := []record.Injection{{Time: at, Kind: catalog.KindError, Error: "EIO", SiteID: "backend.(*batchTx).commit:(*bbolt.Tx).Commit#0"}}
	fatal := "=== RUN   TestBackendBatchIntervalCommit\n" +
		"    logger.go:146: 2026-12-07T04:00:01.250Z\tFATAL\tfailed to commit tx\t{\"error\": \"input/output error\"}\n"
	nilDeref := "=== RUN   TestBackendBatchIntervalCommit\n" +
		"    logger.go:146: 2026-12-07T04:00:01.250Z\tWARN\tfailed to commit tx\t{\"error\": \"input/output error\"}\n" +
		"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation]\n\ngoroutine 9 [running]:\n" +
		"go.etcd.io/etcd/server/v3/storage/backend.(*batchTx).commit(0x0)\n"
	for _, tc := range []struct {
		name string
		a    Attempt
		inj  []record.Injection
		want string // the symptom
	}{
		{"zap fatal quoting the injected EIO", Attempt{Test: "TestBackendBatchIntervalCommit", ExitCode: 1, Output: fatal}, eio, FailStopSymptom},
		{"zap panic quoting it, then Go's panic", Attempt{Test: "TestBackendClose", ExitCode: 2, Output: "=== RUN   TestBackendClose\n" +
			"    logger.go:146: 2026-12-07T04:00:01.250Z\tPANIC\tfailed to open database\t{\"error\": \"open /x/db: input/output error\"}\n" +
			"panic: failed to open database\n\ngoroutine 7 [running]:\n"}, eio, FailStopSymptom},
		{"a Go panic whose value quotes it", Attempt{Test: "TestSaveLoad", ExitCode: 2, Output: "panic: save: input/output error\n\ngoroutine 7 [running]:\n"}, eio, FailStopSymptom},
		{"a nil dereference after the error (planted)", Attempt{Test: "TestBackendBatchIntervalCommit", ExitCode: 2, Output: nilDeref}, eio, "TestBackendBatchIntervalCommit panicked"},
		{"a fatal quoting another error", Attempt{Test: "TestBackendBatchIntervalCommit", ExitCode: 1, Output: strings.Replace(fatal, "input/output error", "database not open", 1)}, eio,
			"TestBackendBatchIntervalCommit exited with status 1"},
		{"a fatal before the injection", Attempt{Test: "TestBackendBatchIntervalCommit", ExitCode: 1, Output: strings.Replace(fatal, "04:00:01", "03:59:58", 1)}, eio,
			"TestBackendBatchIntervalCommit exited with status 1"},
		{"a delay only", Attempt{Test: "TestBackendBatchIntervalCommit", ExitCode: 1, Output: fatal}, []record.Injection{{Time: at, Kind: catalog.KindDelay, Delay: time.Second}},
			"TestBackendBatchIntervalCommit exited with status 1"},
		{"a hang", Attempt{Test: "TestBackendBatchIntervalCommit", TimedOut: true, ExitCode: 2, Output: fatal}, eio, "TestBackendBatchIntervalCommit hung past 30s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Verdict(tc.a, bound, tc.inj)
			if v.Symptom != tc.want || v.Failed != !strings.HasPrefix(tc.want, "informational") {
				t.Errorf("Verdict = failed %v, %q; want %q\n%s", v.Failed, v.Symptom, tc.want, strings.Join(v.Evidence, "\n"))
			}
		})
	}
}

// TestTiming: a test whose own wait ran out while the injected delay
// still held the call (rafthttp's 1 s waits under a 2 s delay) made a
// timing assumption; the same failure after the delay ended (a delay
// shorter than the wait: planted), a first report that is no wait, a
// later report of something else after the delay, and a panic stay
// findings.
func TestTiming(t *testing.T) {
	const bound = 30 * time.Second
	at := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	delay := []record.Injection{{Time: at, Kind: catalog.KindDelay, Delay: 2 * time.Second, SiteID: "rafthttp.(*messageEncoder).encode:(io.Writer).Write#0"}}
	waitLine := "    stream_test.go:341: #0: failed to receive message from the channel"
	failed := func(reps ...Report) Attempt {
		var lines []string
		for _, r := range reps {
			lines = append(lines, r.Line)
		}
		return Attempt{Test: "TestStream", ExitCode: 1, Reports: reps,
			Output: "=== RUN   TestStream\n" + strings.Join(lines, "\n") + "\n--- FAIL: TestStream (1.01s)\nFAIL\n"}
	}
	for _, tc := range []struct {
		name string
		a    Attempt
		inj  []record.Injection
		want string
	}{
		{"the test's 1 s wait ran out 1 s into a 2 s delay", failed(Report{Line: waitLine, At: at.Add(time.Second), Wait: true}), delay, TimingSymptom},
		{"then a consequence reported while the delay held", failed(Report{Line: waitLine, At: at.Add(time.Second), Wait: true},
			Report{Line: "    stream_test.go:78: #0: working status = false, want true", At: at.Add(1100 * time.Millisecond)}), delay, TimingSymptom},
		{"a delay shorter than the wait that still fails (planted)", failed(Report{Line: waitLine, At: at.Add(time.Second), Wait: true}),
			[]record.Injection{{Time: at, Kind: catalog.KindDelay, Delay: 500 * time.Millisecond}}, "TestStream failed"},
		{"a first report that is no wait", failed(Report{Line: "    stream_test.go:344: #0: message = {}, want {To:2}", At: at.Add(time.Second)}), delay, "TestStream failed"},
		{"a report of something else after the delay ended", failed(Report{Line: waitLine, At: at.Add(time.Second), Wait: true},
			Report{Line: "    stream_test.go:344: #1: message = {}, want {To:2}", At: at.Add(3 * time.Second)}), delay, "TestStream failed"},
		{"a wait that ran out before the delay was injected", failed(Report{Line: waitLine, At: at.Add(-time.Second), Wait: true}), delay, "TestStream failed"},
		{"an error injected, no delay", failed(Report{Line: waitLine, At: at.Add(time.Second), Wait: true}), []record.Injection{{Time: at, Kind: catalog.KindError, Error: "EIO"}}, "TestStream failed"},
		{"a panic within the delay", Attempt{Test: "TestStream", ExitCode: 2, Reports: []Report{{Line: waitLine, At: at.Add(time.Second), Wait: true}},
			Output: "=== RUN   TestStream\n" + waitLine + "\npanic: send on closed channel\n\ngoroutine 5 [running]:\n"}, delay, "TestStream panicked"},
		{"no timed report", failed(), delay, "TestStream failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Verdict(tc.a, bound, tc.inj)
			if v.Symptom != tc.want || v.Failed != !strings.HasPrefix(tc.want, "informational") {
				t.Errorf("Verdict = failed %v, %q; want %q\n%s", v.Failed, v.Symptom, tc.want, strings.Join(v.Evidence, "\n"))
			}
		})
	}
}

// TestWaitReport: a report is a wait that ran out when its words say so
// or when it is written in a select case a timer or a context chose
// (rafthttp's stream_test.go); a report in a case that a message chose,
// or outside a select, is not.
func TestWaitReport(t *testing.T) {
	src := strings.Split(`package rafthttp

func TestStream(t *testing.T) {
	select {
	case m = <-tt.wc:
	case <-time.After(time.Second):
		t.Fatalf("#%d: failed to receive message from the channel", i)
	}
	select {
	case <-ctx.Done():
		t.Error("no reply")
	case m := <-recvc:
		if m.To != 2 {
			t.Errorf("message = %v", m)
		}
	}
	if !reflect.DeepEqual(m, tt.m) {
		t.Fatalf("#%d: message = %+v, want %+v", i, m, tt.m)
	}
	select {
	case <-timer.C:
		t.Fatal("no leader")
	}
}
`, "\n")
	files := func(file string) []string {
		if file == "stream_test.go" {
			return src
		}
		return nil
	}
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"    stream_test.go:7: #0: failed to receive message from the channel", true},
		{"    stream_test.go:11: no reply", true},
		{"    stream_test.go:14: message = {}", false},
		{"    stream_test.go:18: #0: message = {}, want {}", false},
		{"    stream_test.go:22: no leader", true},
		{"    other_test.go:61: #0: close of previous connection timed out", true},
		{"    other_test.go:104: failed to close the underlying connection in time", true},
		{"    other_test.go:9: put: context deadline exceeded", true},
		{"    other_test.go:9: value = 3, want 4", false},
		{"    stream_test.go:900: beyond the file", false},
	} {
		if got := waitReport(tc.line, files); got != tc.want {
			t.Errorf("waitReport(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestReportClock: the clock keeps the lines a test file wrote, whole
// even when a write splits them, each with the time its end was read.
func TestReportClock(t *testing.T) {
	now := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	c := &reportClock{now: func() time.Time { return now }}
	for _, w := range []string{"=== RUN   TestA\n    a_test.go:3: fir", "st\n    logger.go:146: a log line\n", "    a_test.go:9: second\n--- FAIL: TestA"} {
		now = now.Add(time.Second)
		c.Write([]byte(w))
	}
	got := c.Reports(t.TempDir())
	if len(got) != 2 || got[0].Line != "    a_test.go:3: first" || !got[0].At.Equal(now.Add(-time.Second)) || got[1].Line != "    a_test.go:9: second" || !got[1].At.Equal(now) {
		t.Errorf("Reports = %+v", got)
	}
}
