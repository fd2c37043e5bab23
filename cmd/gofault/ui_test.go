package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// TestReportHTMLAndJUnit writes a campaign with one finding as a static
// directory and a JUnit file from the command line.
func TestReportHTMLAndJUnit(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	db := filepath.Join(dir, "gofault.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := st.CreateCampaign(ctx, store.Campaign{Name: "minikv", ConfigHash: "h", Policy: "random", Config: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := &record.Trial{ID: record.TrialID(id, 1), Index: 1, Policy: "random", Start: start, End: start.Add(2 * time.Second), Status: record.StatusFailed,
		Injections: []record.Injection{{Time: start.Add(time.Second), Node: "n1", SiteID: "wal.go:3", Kind: catalog.KindCrash,
			Stack: []record.Frame{{Func: "minikv.snapshot", File: "snap.go", Line: 9}}}},
		Verdicts: []record.Verdict{{Checker: "replicas", Failed: true, Symptom: "replicas diverged"}}}
	if err := st.SaveTrial(ctx, id, tr); err != nil {
		t.Fatal(err)
	}
	st.Close()
	html, junit := filepath.Join(dir, "html"), filepath.Join(dir, "junit.xml")
	var out, errb bytes.Buffer
	if code := run([]string{"report", "--db", db, "--html", html, "--junit", junit}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	page, err := os.ReadFile(filepath.Join(html, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "replicas diverged") || !strings.Contains(string(page), `id="count-failed">1<`) {
		t.Errorf("index.html lacks the finding or its count")
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Tests != 2 || doc.Suites[0].Failures != 1 ||
		doc.Suites[0].Cases[1].Failure == nil || !strings.Contains(doc.Suites[0].Cases[1].Failure.Message, "gofault replay --db "+db+" "+tr.ID) {
		t.Errorf("junit:\n%s", data)
	}
}

// TestReplayShown: the Replay button shows the verdict and what ran (the
// last and first lines gofault replay prints), all the output, and whether
// every failure recurred.
func TestReplayShown(t *testing.T) {
	text := "replayed 1-7 as 2-7: failed, 1 injections (original: failed, 1 injections)\n  [hang] client n* made no progress\n  logs /w/trials/2-7\nreproduced\n"
	for _, tt := range []struct {
		name       string
		r          *campaign.Replayed
		text, all  string
		summary    string
		reproduced bool
	}{
		{"reproduced", &campaign.Replayed{Results: []campaign.ReplayRun{{Reproduced: true}}}, text, "level=INFO msg=built\n" + text,
			"reproduced: replayed 1-7 as 2-7: failed, 1 injections (original: failed, 1 injections)", true},
		{"not reproduced", &campaign.Replayed{Results: []campaign.ReplayRun{{NotReproduced: []string{"hang: x"}}}},
			"replayed 1-7 as 2-7: ok, 0 injections (original: failed, 1 injections)\nnot reproduced: did not recur: hang: x\n", "all",
			"not reproduced: did not recur: hang: x: replayed 1-7 as 2-7: ok, 0 injections (original: failed, 1 injections)", false},
		{"failed before running", nil, "", "level=ERROR msg=boom\n", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := replayShown(tt.r, tt.text, tt.all)
			if got.Summary != tt.summary || got.Reproduced != tt.reproduced || got.Output != tt.all {
				t.Errorf("replayShown = %+v; want summary %q, reproduced %v, output %q", got, tt.summary, tt.reproduced, tt.all)
			}
		})
	}
}

// TestTestReplayShown: the Replay button on a gofault test trial says how
// often the test failed again, that it did not, and that the rebuilt test
// binary lacks sites of the trial's faults.
func TestTestReplayShown(t *testing.T) {
	for _, tt := range []struct {
		name       string
		r          *gotest.ReplayResult
		summary    string
		reproduced bool
	}{
		{"recurred", &gotest.ReplayResult{Trial: "1-7", Test: "TestSaveLoad", Outcomes: []string{"failed"}, Recurred: 1},
			"TestSaveLoad failed again in 1 of 1 runs", true},
		{"some runs", &gotest.ReplayResult{Trial: "1-7", Test: "TestSaveLoad", Outcomes: []string{"failed", ""}, Recurred: 1},
			"TestSaveLoad failed again in 1 of 2 runs", false},
		{"did not recur", &gotest.ReplayResult{Trial: "1-7", Test: "TestSaveLoad", Outcomes: []string{""}},
			"TestSaveLoad did not fail again: passed in 1 of 1 runs", false},
		{"source changed", &gotest.ReplayResult{Trial: "1-7", Test: "TestSaveLoad", Outcomes: []string{""}, Missing: 1},
			"TestSaveLoad did not fail again: passed in 1 of 1 runs; 1 of its injections name sites the rebuilt test binary no longer has (the source changed)", false},
		{"failed before running", nil, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := testReplayShown(tt.r, "out\n")
			if got.Summary != tt.summary || got.Reproduced != tt.reproduced || got.Output != "out\n" {
				t.Errorf("testReplayShown = %+v; want summary %q, reproduced %v", got, tt.summary, tt.reproduced)
			}
		})
	}
}
