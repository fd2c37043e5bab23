package gotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// leftLine is agent.Ran's line for a goroutine of key top <- creator.
func leftLine(top, creator string) string {
	return wire.LeftPrefix + wire.LeftKey(top, creator) + "\t[chan receive] " + top + " at /src/p/p.go:9; created by " + creator + " at /src/p/p.go:20"
}

// TestLeftVerdict: a test that passed with a fault struck and left a
// goroutine or a file no fault-free run left is a finding (planted:
// StartLeaky's loop, a log left open); nothing else is: a goroutine the fault-free runs left too (the
// janitor), a run that did not check (no agent.Ran line), a baseline never
// checked (a campaign measured before the check), a trial with no fault, a
// delay that still held a call when the process ended or a cut, a test
// that failed, or a second run that failed.
func TestLeftVerdict(t *testing.T) {
	const test = "TestStart"
	janitor := leftLine("p.janitor.func1.1", "p.janitor.func1")
	loop := leftLine("p.(*Server).loop", "p.StartLeaky")
	done := func(n int) string { return fmt.Sprintf("%s%d left", wire.LeftDonePrefix, n) }
	passed := func(lines ...string) Attempt {
		return Attempt{Test: test, Passed: true, Output: "=== RUN   TestStart\n--- PASS: TestStart (0.00s)\n" + strings.Join(lines, "\n") + "\nPASS\n"}
	}
	base := Leftovers{Checked: true, Keys: []string{wire.LeftKey("p.janitor.func1.1", "p.janitor.func1")}}
	end := time.Unix(100, 0)
	eio := []record.Injection{{Kind: catalog.KindError, Error: "EIO", SiteID: "p.StartLeaky:os.WriteFile#0", Time: time.Unix(99, 0)}}
	shortDelay := []record.Injection{{Kind: catalog.KindDelay, Delay: 500 * time.Millisecond, SiteID: "p.Start:os.WriteFile#0", Time: time.Unix(99, 0)}}
	heldDelay := []record.Injection{{Kind: catalog.KindDelay, Delay: 2 * time.Second, SiteID: "p.Start:os.WriteFile#0", Time: time.Unix(99, 0)}}
	cut := []record.Injection{{Kind: catalog.KindPartition, SiteID: "p.send", Time: time.Unix(99, 0)}}
	failed := passed(loop, done(2))
	failed.Passed, failed.ExitCode = false, 1
	secondFailed := passed(loop, done(2))
	secondFailed.Again = &Attempt{Test: test, Output: "--- FAIL: TestStart (0.00s)\n"}
	for _, tc := range []struct {
		name string
		r    Attempt
		inj  []record.Injection
		base Leftovers
		want bool   // a finding
		held string // not judged, shown apart: what held the process
	}{
		{"planted: the loop left after the error", passed(janitor, loop, done(2)), eio, base, true, ""},
		{"planted, after a delay that ended", passed(janitor, loop, done(2)), shortDelay, base, true, ""},
		{"only the janitor, which fault-free runs leave too", passed(janitor, done(1)), eio, base, false, ""},
		{"nothing left", passed(done(0)), eio, base, false, ""},
		{"no check in the trial's process", passed(janitor, loop), eio, base, false, ""},
		{"a baseline never checked", passed(janitor, loop, done(2)), eio, Leftovers{}, false, ""},
		{"no fault struck", passed(janitor, loop, done(2)), nil, base, false, ""},
		{"a delay still held a call at the end", passed(janitor, loop, done(2)), heldDelay, base, false, "the 2s delay at p.Start:os.WriteFile#0"},
		{"a cut", passed(janitor, loop, done(2)), cut, base, false, "a partition fault at p.send"},
		{"a delay held, but nothing new left", passed(janitor, done(1)), heldDelay, base, false, ""},
		{"the test failed", failed, eio, base, false, ""},
		{"its second run failed", secondFailed, eio, base, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := leftVerdict(tc.r, tc.inj, end, tc.base, record.Verdict{Checker: Checker})
			if v.Failed != tc.want {
				t.Fatalf("finding %v (%q), want %v", v.Failed, v.Symptom, tc.want)
			}
			if tc.held != "" {
				// What was dismissed is shown: the why, then the goroutine.
				if v.Symptom != LeftUnjudgedSymptom || len(v.Evidence) != 2 || !strings.Contains(v.Evidence[0], "not judged: "+tc.held) || !strings.Contains(v.Evidence[1], "(*Server).loop") {
					t.Errorf("%q, evidence %q; want %q naming %q and the loop", v.Symptom, v.Evidence, LeftUnjudgedSymptom, tc.held)
				}
				return
			}
			if !tc.want {
				if v.Symptom != "" {
					t.Errorf("symptom %q, want none", v.Symptom)
				}
				return
			}
			if want := test + LeftSymptom + "p.(*Server).loop"; v.Symptom != want {
				t.Errorf("symptom %q, want %q", v.Symptom, want)
			}
			if len(v.Evidence) != 2 || !strings.Contains(v.Evidence[1], "created by p.StartLeaky at /src/p/p.go:20") {
				t.Errorf("evidence %q: want the why and the leaked goroutine only", v.Evidence)
			}
		})
	}
	// A file left open: its own symptom; with a goroutine too, the
	// goroutine names the finding and the evidence lists both.
	file := wire.LeftPrefix + wire.LeftFileKey("$TMPDIR/TestStartN/N/log-N") + "\t[open file] /tmp/x/TestStart1/001/log-1"
	if v := leftVerdict(passed(janitor, file, done(2)), eio, end, base, record.Verdict{Checker: Checker}); !v.Failed || v.Symptom != test+LeftFileSymptom+"$TMPDIR/TestStartN/N/log-N" {
		t.Errorf("a file left open: %q failed %v", v.Symptom, v.Failed)
	}
	if v := leftVerdict(passed(file, loop, done(2)), eio, end, base, record.Verdict{Checker: Checker}); v.Symptom != test+LeftSymptom+"p.(*Server).loop" || len(v.Evidence) != 3 {
		t.Errorf("a goroutine and a file: %q, evidence %q", v.Symptom, v.Evidence)
	}
	// A verdict already made is kept: a finding or an informational one.
	prior := record.Verdict{Checker: Checker, Symptom: AssumptionSymptom}
	if v := leftVerdict(passed(loop, done(1)), eio, end, base, prior); v.Symptom != AssumptionSymptom {
		t.Errorf("an informational verdict became %q", v.Symptom)
	}
}

// TestLeftBaseline: the fault-free runs' keys are the union of what each
// that checked left, its second run's lines included; runs that did not
// check add nothing, and none checked leaves the baseline unchecked.
func TestLeftBaseline(t *testing.T) {
	a := Attempt{Output: leftLine("p.a", "p.A") + "\n" + wire.LeftDonePrefix + "1 left\n"}
	b := Attempt{Output: "=== RUN   TestX\n", Again: &Attempt{Output: leftLine("p.b", "p.B") + "\n" + wire.LeftDonePrefix + "1 left\n"}}
	none := Attempt{Output: leftLine("p.c", "p.C") + "\n"} // no done line: ignored
	got := leftBaseline([]Attempt{a, b, none})
	want := []string{wire.LeftKey("p.a", "p.A"), wire.LeftKey("p.b", "p.B")}
	if !got.Checked || !slices.Equal(got.Keys, want) {
		t.Errorf("baseline %+v, want checked %q", got, want)
	}
	if got := leftBaseline([]Attempt{none}); got.Checked {
		t.Errorf("no run checked: %+v", got)
	}
	if m := Measured("TestX", []Attempt{a}); !m.LeftChecked || !slices.Equal(m.Left, want[:1]) {
		t.Errorf("Measured: %v %q", m.LeftChecked, m.Left)
	}
}

// TestLeftEndToEnd runs testdata/leakstore: TestStartLeaky's planted bug
// leaves its server's loop running when the marker's write fails, a
// finding in every trial that struck it; TestOpenLogLeaky's leaves its log
// open when the header's write fails, a finding in every trial that struck
// that write (not the open); TestStart stops its loop and passes clean;
// the janitor two of them leave fault-free is no leak.
func TestLeftEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test binary")
	}
	dir := t.TempDir()
	sum, err := Run(context.Background(), Options{
		Module: "testdata/leakstore", Package: ".", WorkDir: dir,
		// exhaustive: random strikes the log's open in every trial of
		// TestOpenLogLeaky (its first request), never its write.
		Policy: "exhaustive", Seed: 1, Trials: 8, Parallel: 1, Kinds: []catalog.Kind{catalog.KindError},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenExisting(filepath.Join(dir, "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := st.TestPass(context.Background(), sum.Campaign)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	var ms []Measure
	if err := json.Unmarshal(data, &ms); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		// The janitor, which Start and StartLeaky start; TestOpenLogLeaky
		// leaves nothing.
		janitor := len(m.Left) == 1 && strings.Contains(m.Left[0], "leakstore.janitor")
		if !m.LeftChecked || (m.Test == "TestOpenLogLeaky") != (len(m.Left) == 0) || len(m.Left) > 0 && !janitor {
			t.Errorf("%s: baseline checked %v, %q; want checked, the janitor only or (TestOpenLogLeaky) nothing", m.Test, m.LeftChecked, m.Left)
		}
	}
	struck := map[string]int{}
	leak := ""      // a trial of the planted goroutine leak's finding
	leakedFile := 0 // trials of the planted file leak
	for _, tr := range storedTrials(t, dir, sum.Campaign) {
		if tr.Policy == record.BaselinePolicy || len(tr.Injections) == 0 {
			continue
		}
		test, v := tr.Test(), tr.Verdicts[0]
		struck[test]++
		switch test {
		case "TestStartLeaky":
			if want := "TestStartLeaky" + LeftSymptom + "example.com/leakstore.(*Server).loop"; v.Symptom != want || !v.Failed {
				t.Errorf("trial %s: %q failed %v; want %q", tr.ID, v.Symptom, v.Failed, want)
			}
			leak = tr.ID
		case "TestOpenLogLeaky":
			// Struck at the header's write, the file is left open; at the
			// open, nothing is.
			want := ""
			if strings.Contains(tr.Injections[0].SiteID, "Write") {
				want = "TestOpenLogLeaky" + LeftFileSymptom + "$TMPDIR/TestOpenLogLeakyN/N/log-N"
				leakedFile++
			}
			if v.Symptom != want || v.Failed != (want != "") {
				t.Errorf("trial %s at %s: %q failed %v; want %q", tr.ID, tr.Injections[0].SiteID, v.Symptom, v.Failed, want)
			}
		case "TestStart":
			if v.Failed || v.Symptom != "" {
				t.Errorf("trial %s: %q failed %v; want a clean pass", tr.ID, v.Symptom, v.Failed)
			}
		}
	}
	if struck["TestStartLeaky"] == 0 || struck["TestStart"] == 0 || leakedFile == 0 {
		t.Fatalf("trials with a fault by test %v, %d at the log's write: want every test struck, the log at its write", struck, leakedFile)
	}
	if sum.Findings != 2 {
		t.Errorf("%d findings, want 2", sum.Findings)
	}
	// The finding replays against the stored baseline: it recurs.
	st, err = store.OpenExisting(filepath.Join(dir, "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	res, err := Replay(context.Background(), st, leak, 1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimPrefix(LeftSymptom, " ") + "example.com/leakstore.(*Server).loop"; res.Recurred != 1 || res.Outcomes[0] != want {
		t.Errorf("replay of %s: %d of 1 recurred, outcomes %q; want 1, %q", leak, res.Recurred, res.Outcomes, want)
	}
}
