package dashboard

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// testTrial is trial index of a gofault test campaign that ran test.
func testTrial(index int, test, policy string, status record.Status, inj ...record.Injection) *record.Trial {
	start := t0.Add(time.Duration(index) * 10 * time.Millisecond)
	tr := &record.Trial{ID: record.TrialID(1, index), Index: index, Policy: policy, Start: start, End: start.Add(5 * time.Millisecond), Status: status,
		Injections: inj, Nodes: []record.Node{{Name: "n1", Log: "/nonexistent/n1.log"}},
		Client:   []record.ClientEvent{record.TestEvent(start, "n1", test)},
		Verdicts: []record.Verdict{{Checker: "test", Symptom: test + " passed"}}}
	if status == record.StatusFailed {
		tr.Verdicts[0] = record.Verdict{Checker: "test", Failed: true, Symptom: test + " failed", Nodes: []string{"n1"},
			Evidence: []string{"store_test.go:16: load after a save that succeeded", "--- FAIL: " + test + " (0.00s)"}}
	}
	return tr
}

var (
	saveErr  = record.Injection{Node: "n1", SiteID: "store.Save:os.WriteFile#0", Kind: catalog.KindError, Error: "EIO", Stack: []record.Frame{{Func: "store.Save", File: "store.go", Line: 24}}}
	loadSlow = record.Injection{Node: "n1", SiteID: "store.Load:os.ReadFile#0", Kind: catalog.KindDelay, Delay: 50 * time.Millisecond}
)

// testCampaign is a gofault test campaign's trials: TestSave and
// TestLoad pass both fault-free runs and reach sites, TestFlaky fails one,
// TestPure reaches none; TestSave fails with an error at Save's write.
func testCampaign() []*record.Trial {
	reached := func(tr *record.Trial, sites ...string) *record.Trial {
		for _, s := range sites {
			tr.Reached = append(tr.Reached, record.Reach{SiteID: s, Requests: 1})
		}
		return tr
	}
	return []*record.Trial{
		reached(testTrial(1, "TestSave", record.BaselinePolicy, record.StatusOK), saveErr.SiteID, loadSlow.SiteID),
		reached(testTrial(2, "TestSave", record.BaselinePolicy, record.StatusOK), saveErr.SiteID),
		reached(testTrial(3, "TestLoad", record.BaselinePolicy, record.StatusOK), loadSlow.SiteID),
		reached(testTrial(4, "TestLoad", record.BaselinePolicy, record.StatusOK), loadSlow.SiteID),
		reached(testTrial(5, "TestFlaky", record.BaselinePolicy, record.StatusOK), loadSlow.SiteID),
		testTrial(6, "TestFlaky", record.BaselinePolicy, record.StatusFailed),
		testTrial(7, "TestPure", record.BaselinePolicy, record.StatusOK),
		testTrial(8, "TestPure", record.BaselinePolicy, record.StatusOK),
		testTrial(9, "TestSave", "random", record.StatusFailed, saveErr),
		testTrial(10, "TestLoad", "random", record.StatusOK, loadSlow),
		testTrial(11, "TestSave", "random", record.StatusOK),
		testTrial(12, "TestSave", "random", record.StatusFailed, saveErr),
	}
}

func TestTestRows(t *testing.T) {
	trials := testCampaign()
	rows := testRows(trials, report.New(trials, report.Options{}))
	want := []TestRow{
		{Test: "TestSave", Runs: 2, Passed: 2, Sites: 2, FaultTrials: 3, Injected: 2, Failed: 2, Findings: 1},
		{Test: "TestLoad", Runs: 2, Passed: 2, Sites: 1, FaultTrials: 1, Injected: 1},
		{Test: "TestFlaky", Runs: 2, Passed: 1, Sites: 1, LeftOut: "failed 1 of 2 fault-free runs"},
		{Test: "TestPure", Runs: 2, Passed: 2, LeftOut: "reached no fault site"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("testRows:\n got %+v\nwant %+v", rows, want)
	}
	// A campaign of gofault run names no test: no rows, no test pages.
	cluster := []*record.Trial{{ID: "1-1", Policy: "random", Status: record.StatusFailed, Client: []record.ClientEvent{{Client: "n1/0", Kind: record.EvPhase, Msg: "ran load"}}}}
	if rows := testRows(cluster, report.Report{}); len(rows) != 0 {
		t.Errorf("cluster campaign: rows %+v, want none", rows)
	}
}

// TestTestPages renders a gofault test campaign's pages: the tests table,
// the trial list's test column and filter, the finding's test and the
// test's process as its node (no empty role or abstract state rows), the
// trial's test; a cluster campaign's pages show none of it.
func TestTestPages(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	id, err := st.CreateCampaign(ctx, store.Campaign{Name: "test example.com/store", ConfigHash: "h", Policy: "random", Config: `{"gofault_test":{}}`})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range testCampaign() {
		tr.ID = record.TrialID(id, tr.Index)
		if err := st.SaveTrial(ctx, id, tr); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Load(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Report.Findings) != 1 || !c.IsTest() {
		t.Fatalf("findings %+v, test campaign %v; want 1, true", c.Report.Findings, c.IsTest())
	}
	h := (&Server{Store: st}).Handler()
	base := fmt.Sprintf("/c/%d/", id)
	_, body := get(t, h, base+"index.html")
	mustContain(t, "campaign page", body, `<table id="tests">`, `<td class="mono">TestSave</td><td>2 of 2</td><td>2</td><td>3</td><td>2</td><td class="status-failed">2</td><td>1</td>`,
		`(left out: failed 1 of 2 fault-free runs)`, `(left out: reached no fault site)`)
	if strings.Contains(body, `id="count-states"`) || strings.Contains(body, "abstract states entered over time") {
		t.Errorf("campaign page of a test campaign without states shows the abstract states entered")
	}
	_, body = get(t, h, base+"trials.html")
	mustContain(t, "trial list", body, `<select name="test">`, `<option>TestFlaky</option>`, `<th>test</th>`,
		`data-test="TestSave"`, `<td class="mono">TestLoad</td>`)
	_, body = get(t, h, base+"finding-"+c.Report.Findings[0].ID+".html")
	mustContain(t, "finding page", body, `<code id="fault-test">TestSave</code>`, `n1 <span class="muted">(the test's process)</span>`)
	if strings.Contains(body, "<th>role</th>") || strings.Contains(body, "<th>abstract state</th>") {
		t.Errorf("finding page of a test campaign shows role or abstract state rows with nothing in them")
	}
	_, body = get(t, h, base+trialPage(record.TrialID(id, 9)))
	mustContain(t, "trial page", body, `test <code id="trial-test">TestSave</code>`)

	// The cluster fixture's pages: no tests, no test column, its role row.
	cst, cid := fixture(t)
	ch := (&Server{Store: cst}).Handler()
	cc, err := Load(ctx, cst, cid)
	if err != nil {
		t.Fatal(err)
	}
	cbase := fmt.Sprintf("/c/%d/", cid)
	for page, absent := range map[string]string{
		"index.html":  `id="tests"`,
		"trials.html": `<th>test</th>`,
		"finding-" + cc.Report.Findings[0].ID + ".html": `id="fault-test"`,
	} {
		_, body := get(t, ch, cbase+page)
		if strings.Contains(body, absent) {
			t.Errorf("cluster campaign's %s shows %s", page, absent)
		}
		if page == "index.html" {
			mustContain(t, "cluster campaign page", body, `id="count-states"`, "abstract states entered over time")
		}
		if page != "index.html" && page != "trials.html" {
			mustContain(t, "cluster finding page", body, "<th>role</th><td>leader</td>")
		}
	}
}

// TestFmtSeconds: a plot's x ticks; a campaign of a second or two (a
// gofault test campaign of fast tests) gets fractions, not 0s, 0s, 1s.
func TestFmtSeconds(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{{0, "0s"}, {0.25, "0.25s"}, {0.4272, "0.43s"}, {1, "1s"}, {1.708, "1.7s"}, {7.5, "7.5s"}, {12.5, "12s"}, {90, "90s"}, {600, "10m"}, {7200, "2.0h"}} {
		if got := fmtSeconds(tc.s); got != tc.want {
			t.Errorf("fmtSeconds(%g) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestTimelineShort: a test trial of 5 ms is drawn over 5 ms, ticked in
// milliseconds, not at the left edge of a second; a cluster trial's in
// seconds.
func TestTimelineShort(t *testing.T) {
	evs := []Event{{At: 2500 * time.Microsecond, Lane: "n1", Kind: "error", Label: "EIO"}}
	svg := string(TimelineSVG(evs, 5*time.Millisecond))
	mustContain(t, "short timeline", svg, ">0ms<", ">2ms<", ">5ms<", "2.5ms error EIO", `x1="490.0"`)
	svg = string(TimelineSVG(evs, 20*time.Second))
	mustContain(t, "long timeline", svg, ">0s<", ">4s<", ">20s<", "0.0025s error EIO")
}
