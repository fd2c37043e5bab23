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

	"github.com/gofault/gofault/catalog"
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
