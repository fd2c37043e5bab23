package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// TestWithoutFaults: a finding whose trial's setup was refused for the
// reason fault-free trials were refused for (numbers aside) says so; a
// finding refused for another reason, or with no refusal (a planted
// lost-write bug), says nothing, and every finding stays a finding.
func TestWithoutFaults(t *testing.T) {
	setup := func(attempts string) []record.ClientEvent {
		return []record.ClientEvent{{Kind: record.EvNotJudged, Client: "workload",
			Msg: "the cluster refused the workload's streams: create stream S1 through n1: gave up after " + attempts + " attempts in 15.002s: no suitable peers for placement"}}
	}
	fail := func(checker, symptom string) []record.Verdict {
		return []record.Verdict{{Checker: checker, Failed: true, Symptom: symptom}}
	}
	fault := func(site string) []record.Injection {
		return []record.Injection{{Kind: catalog.KindReboot, SiteID: site, Node: "n1"}}
	}
	trials := []*record.Trial{
		// Without faults: one failed its setup, one was refused and passed.
		{ID: "1-7", Index: 7, Status: record.StatusFailed, Client: setup("61"), Verdicts: fail(check.NameHang, "client made no progress")},
		{ID: "1-9", Index: 9, Status: record.StatusNotJudged, Client: setup("42")},
		// A reboot during the setup, refused alike: marked.
		{ID: "1-21", Index: 21, Status: record.StatusFailed, Client: setup("18"), Injections: fault("route.read"),
			Verdicts: fail(check.NameRecovery, "a member did not serve again within 12s after the last fault")},
		// Refused for another reason: not marked.
		{ID: "1-22", Index: 22, Status: record.StatusFailed, Injections: fault("meta.write"),
			Client:   []record.ClientEvent{{Kind: record.EvNotJudged, Client: "workload", Msg: "JetStream disabled on n2"}},
			Verdicts: fail(check.NameCrash, "node n2 exited")},
		// The planted bug: no refusal at all, a lost write.
		{ID: "1-23", Index: 23, Status: record.StatusFailed, Injections: fault("wal.sync"),
			Verdicts: fail(check.NameViolations, "saw message-lost violated")},
	}
	r := New(trials, Options{})
	if len(r.Findings) != 3 {
		t.Fatalf("%d findings, want 3 (marking hides nothing): %+v", len(r.Findings), r.Findings)
	}
	marked := map[string]*SameWithoutFaults{}
	for _, f := range r.Findings {
		marked[f.Trials[0]] = f.WithoutFaults
	}
	w := marked["1-21"]
	if w == nil || strings.Join(w.Trials, " ") != "1-21" || strings.Join(w.FaultFree, " ") != "1-7 1-9" || !strings.Contains(w.Reason, "61 attempts") {
		t.Errorf("1-21: %+v, want its trial, fault-free trials 1-7 1-9 and 1-7's reason", w)
	}
	for _, id := range []string{"1-22", "1-23"} {
		if marked[id] != nil {
			t.Errorf("%s marked as failing without faults: %+v", id, marked[id])
		}
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, r.Findings); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "as trials without a fault did (1-7 1-9)"); n != 1 {
		t.Errorf("text says it %d times, want once:\n%s", n, buf.String())
	}
}

// TestBeforeFaults: a finding lists the trials in which its log symptom
// came wholly before the first fault, and only those, and says so.
func TestBeforeFaults(t *testing.T) {
	const sym = "new warn log: [WRN] Error applying entries to <q>: last sequence mismatch"
	trial := func(id string, index int, early bool) *record.Trial {
		v := record.Verdict{Checker: check.NameLog, Failed: true, Symptom: sym, Symptoms: []string{sym}}
		if early {
			v.BeforeFaults = []string{sym}
		}
		return &record.Trial{ID: id, Index: index, Status: record.StatusFailed, Verdicts: []record.Verdict{v},
			Injections: []record.Injection{{Kind: catalog.KindReboot, SiteID: "route.read", Node: "n1"}}}
	}
	r := New([]*record.Trial{trial("1-5", 5, true), trial("1-24", 24, false)}, Options{})
	if len(r.Findings) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(r.Findings), r.Findings)
	}
	f := r.Findings[0]
	if strings.Join(f.Trials, " ") != "1-5 1-24" || strings.Join(f.BeforeFaults, " ") != "1-5" {
		t.Fatalf("trials %v, before faults %v; want 1-5 1-24 and 1-5", f.Trials, f.BeforeFaults)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, r.Findings); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "  before   1-5: every line of this symptom came before the trial's first fault") {
		t.Errorf("text:\n%s", buf.String())
	}
}
