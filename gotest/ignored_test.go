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

// TestIgnoredEndToEnd runs testdata/ignoredstore: TestOpenIgnored discards
// Open's error (which Open returns as it should) and panics on the nil
// store — a test assumption naming the call's line; TestCreate checks
// Create's error, but the planted bug returns nil for it (wal.Create's
// shape) and the test panics on the nil store — a finding.
func TestIgnoredEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test binary")
	}
	dir := t.TempDir()
	sum, err := Run(context.Background(), Options{
		Module: "testdata/ignoredstore", Package: ".", WorkDir: dir,
		Policy: "random", Seed: 1, Trials: 6, Kinds: []catalog.Kind{catalog.KindError},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	trials := storedTrials(t, dir, sum.Campaign)
	_, fault := split(trials)
	struck := map[string]int{}
	for _, tr := range fault {
		if len(tr.Injections) == 0 {
			continue
		}
		test := tr.Test()
		struck[test]++
		v := tr.Verdicts[0]
		switch test {
		case "TestOpenIgnored":
			if v.Symptom != IgnoredSymptom || v.Failed || !strings.Contains(v.Evidence[0], "ignoredstore_test.go:8") {
				t.Errorf("trial %s of %s: %q failed %v, evidence %q; want the ignored error at ignoredstore_test.go:8, not a finding", tr.ID, test, v.Symptom, v.Failed, v.Evidence)
			}
		case "TestCreate":
			if v.Symptom != "TestCreate panicked" || !v.Failed {
				t.Errorf("trial %s of %s: %q failed %v; want the planted bug found (panicked)", tr.ID, test, v.Symptom, v.Failed)
			}
		}
	}
	if struck["TestOpenIgnored"] == 0 || struck["TestCreate"] == 0 {
		t.Fatalf("trials with a fault by test %v: want both tests struck", struck)
	}
	if sum.Assumptions != struck["TestOpenIgnored"] || sum.Findings != 1 {
		t.Errorf("summary: %d assumptions, %d findings; want %d and 1", sum.Assumptions, sum.Findings, struck["TestOpenIgnored"])
	}
}
