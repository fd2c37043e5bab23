package gotest

import (
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// TestIgnoredVerdict: a test that discarded the injected error its own
// call returned (the agent's line) and then failed, panicked or exited
// made an assumption (rafthttp's TestSendMessage: Start's error ignored,
// then "transport stopped"); it stays a finding when its discarded calls
// all returned nil (planted: the wal.Create shape, a nil WAL and a nil
// error, then a nil dereference), when the ignored error is another than
// the injected one, when the test reported a failure before it ignored the
// error, and for a hang, a race, a runtime fatal error or a signal.
func TestIgnoredVerdict(t *testing.T) {
	const bound = 30 * time.Second
	eio := []record.Injection{{Kind: catalog.KindError, Error: "EIO", SiteID: "p.NewTransport:net.Listen#0"}}
	delay := []record.Injection{{Kind: catalog.KindDelay, Delay: time.Second, SiteID: "p.NewTransport:net.Listen#0"}}
	ign := func(err string) string { return wire.IgnoredPrefix + "/src/p/transport_test.go:42: " + err }
	const startErr = "listen tcp 127.0.0.1:0: input/output error"
	nilPanic := "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation]\n\ngoroutine 7 [running]:\np.(*WAL).Save(0x0)\n\t/src/p/wal.go:9 +0x1"
	stopped := "panic: transport stopped\n\ngoroutine 7 [running]:\np.(*Transport).Send(0xc0)\n\t/src/p/transport.go:80 +0x1"
	run := func(code int, lines ...string) Attempt {
		return Attempt{Test: "TestSendMessage", ExitCode: code, Output: "=== RUN   TestSendMessage\n" + strings.Join(lines, "\n") + "\n"}
	}
	failed := func(lines ...string) Attempt {
		return run(1, append(lines, "--- FAIL: TestSendMessage (0.00s)", "FAIL")...)
	}
	for _, tc := range []struct {
		name string
		a    Attempt
		inj  []record.Injection
		want string // symptom
	}{
		{"ignored, then a panic in the code it called: assumption", run(2, ign(startErr), stopped), eio, IgnoredSymptom},
		{"ignored, then the test's own report: assumption", failed(ign(startErr), "    transport_test.go:50: no message received"), eio, IgnoredSymptom},
		{"ignored a wrapped injected error, then exited: assumption", run(1, ign("start: "+startErr), "exit status 1"), eio, IgnoredSymptom},
		{"planted wal.Create: the call returned nil, nil dereference after: finding", run(2, nilPanic), eio, "TestSendMessage panicked"},
		{"planted: no ignored call, the test's report of a missing record: finding", failed("    transport_test.go:50: no message received"), eio, "TestSendMessage failed"},
		{"ignored another error than the injected one: finding", run(2, ign("listen tcp 127.0.0.1:0: address already in use"), stopped), eio, "TestSendMessage panicked"},
		{"ignored with a delay injected, no error: finding", run(2, ign(startErr), stopped), delay, "TestSendMessage panicked"},
		{"the test failed before it ignored the error: finding", failed("    transport_test.go:30: wrong term", ign(startErr)), eio, "TestSendMessage failed"},
		{"ignored, then a data race: finding", failed(ign(startErr), "WARNING: DATA RACE"), eio, "TestSendMessage reported a data race"},
		{"ignored, then a runtime fatal error: finding", run(2, ign(startErr), "fatal error: concurrent map writes"), eio, "TestSendMessage exited with status 2"},
		{"ignored, then killed by a signal: finding", Attempt{Test: "TestSendMessage", ExitCode: -1, Signal: "SIGKILL", Output: ign(startErr) + "\n"}, eio, "TestSendMessage was killed by SIGKILL"},
		{"ignored, then a hang: finding", Attempt{Test: "TestSendMessage", TimedOut: true, Output: ign(startErr) + "\npanic: test timed out after 30s\n"}, eio, "TestSendMessage hung past 30s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Verdict(tc.a, bound, tc.inj)
			if v.Symptom != tc.want {
				t.Fatalf("symptom %q, want %q; evidence %q", v.Symptom, tc.want, v.Evidence)
			}
			if v.Failed == (tc.want == IgnoredSymptom) {
				t.Errorf("failed = %v for symptom %q", v.Failed, v.Symptom)
			}
			if tc.want == IgnoredSymptom && !strings.Contains(v.Evidence[0], "transport_test.go:42") {
				t.Errorf("evidence %q does not name the ignored call", v.Evidence[0])
			}
		})
	}
}

// TestIgnoredCountedAsAssumption: a trial judged IgnoredSymptom counts
// with the test assumptions and is no finding.
func TestIgnoredCountedAsAssumption(t *testing.T) {
	var s Summary
	s.countFindings([]*record.Trial{{ID: "1-1", Policy: "random", Status: record.StatusOK,
		Injections: []record.Injection{{Kind: catalog.KindError, Error: "EIO"}},
		Verdicts:   []record.Verdict{{Checker: Checker, Symptom: IgnoredSymptom}}}})
	if s.Assumptions != 1 || s.Findings != 0 {
		t.Errorf("assumptions %d, findings %d; want 1 and 0", s.Assumptions, s.Findings)
	}
	if got := trialOutcome("TestX", []record.Verdict{{Checker: Checker, Symptom: IgnoredSymptom}}); got != "test assumption (not a finding)" {
		t.Errorf("trial outcome %q", got)
	}
}
