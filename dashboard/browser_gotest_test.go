package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// testSummary is the part of `gofault test --json` the test reads.
type testSummary struct {
	Campaign int64  `json:"campaign"`
	DB       string `json:"db"`
	Trials   int    `json:"trials"`
	Injected int    `json:"injected"`
	Failed   int    `json:"failed"`
	Measured []struct {
		Test   string `json:"test"`
		Runs   int    `json:"runs"`
		Passed int    `json:"passed"`
	} `json:"measured"`
	Shares []struct {
		Test   string `json:"test"`
		Trials int    `json:"trials"`
	} `json:"shares"`
}

// gofaultJSON runs gofault with args and decodes what it prints into v.
func gofaultJSON(t *testing.T, bin string, v any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gofault %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		t.Fatalf("gofault %s: %v\n%s", strings.Join(args, " "), err, stdout.String())
	}
}

// saveSite is retrystore's Save's write, where the planted bug drops the
// error.
const saveSite = "example.com/retrystore.Save:os.WriteFile#0"

// TestBrowserGoTest opens `gofault ui` on a `gofault test` campaign of
// gotest's planted retry bug (Save drops a failed write's error) in
// headless Chromium: the campaign page's counts and tests table agree with
// `gofault test --json` and `gofault report --json`; the finding names
// its test, the fault site and shows the test's failure output; Replay
// (gotest.Replay in gofault ui's process) fails the test again; the trial
// list shows each trial's test and filters on it; a trial's page names its
// test. Screenshots go to $GOFAULT_SCREENSHOTS, or the test's temp dir.
func TestBrowserGoTest(t *testing.T) {
	browser, shots, tmp, bin := browserTest(t, "a gofault test campaign")
	module, err := filepath.Abs(filepath.Join("..", "gotest", "testdata", "retrystore"))
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(tmp, "work")
	// A few trials find the bug (8 of 20 failed in one run, the first at
	// fault trial 1); more if they did not (resumed: the same campaign).
	var sum testSummary
	var rep struct {
		Findings []json.RawMessage `json:"findings"`
	}
	for n := 10; n <= 30 && len(rep.Findings) == 0; n += 10 {
		args := []string{"test", "--json", "--module", module, "--env", "RETRYSTORE_BUG=drop", "--workdir", work,
			"--trials", strconv.Itoa(n), "--delay", "50ms"}
		if n > 10 {
			args = append(args, "--resume")
		}
		gofaultJSON(t, bin, &sum, append(args, ".")...)
		gofaultJSON(t, bin, &rep, "report", "--json", "--db", sum.DB, "--campaign", strconv.FormatInt(sum.Campaign, 10))
	}
	t.Logf("campaign %d: %d fault trials, %d with a fault, %d failed, %d findings", sum.Campaign, sum.Trials, sum.Injected, sum.Failed, len(rep.Findings))
	if len(rep.Findings) == 0 {
		t.Fatalf("no findings in %d trials with the drop bug on", sum.Trials)
	}
	// The fault-free runs are the campaign's baseline trials; a failed
	// one counts as failed on the campaign page.
	runs, failedRuns := 0, 0
	for _, m := range sum.Measured {
		runs += m.Runs
		failedRuns += m.Runs - m.Passed
	}

	url := serveUI(t, bin, sum.DB)
	b := openTab(t, browser, shots, 3*time.Minute)

	// The campaign page: the counts of gofault test's summary and of
	// gofault report, and a row per test.
	b.do("open the campaign page", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("count-trials")))
	b.shot("test-campaign.png")
	for id, want := range map[string]int{
		"count-trials": sum.Trials, "count-baseline": runs, "count-failed": sum.Failed + failedRuns,
		"count-nofault": sum.Trials - sum.Injected, "count-findings": len(rep.Findings),
	} {
		if got := b.text(id); got != strconv.Itoa(want) {
			t.Errorf("campaign page #%s = %s, want %d (gofault test --json, gofault report --json)", id, got, want)
		}
	}
	if n := b.count(`document.querySelectorAll("#tests").length`); n != 1 {
		t.Errorf("campaign page: %d tables of tests, want 1", n)
	}
	rows := eval[[]string](b, `Array.from(document.querySelectorAll("#tests tbody tr")).map(r => Array.from(r.cells).map(c => c.textContent).join("|"))`)
	trialsOf := map[string]int{}
	for _, sh := range sum.Shares {
		trialsOf[sh.Test] = sh.Trials
	}
	var want []string
	for _, m := range sum.Measured {
		want = append(want, fmt.Sprintf("%s|%d of %d|%d", m.Test, m.Passed, m.Runs, trialsOf[m.Test]))
	}
	var got []string
	for _, r := range rows {
		c := strings.Split(r, "|")
		if len(c) < 4 {
			t.Fatalf("tests table row %q", r)
		}
		got = append(got, strings.Join([]string{c[0], c[1], strings.Fields(c[3])[0]}, "|"))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tests table (test|fault-free runs passed|fault trials):\n%s\nwant (gofault test --json):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The finding: its test, the fault site, the test's failure output.
	b.do("open the finding", chromedp.Click(chromedp.CSS("a.finding-link"), chromedp.NodeVisible), chromedp.WaitVisible(chromedp.ID("stack")))
	b.shot("test-finding.png")
	if test, site := textOf(b, "fault-test"), textOf(b, "fault-site"); test != "TestSaveLoad" || site != saveSite {
		t.Errorf("finding page: test %q at %q, want TestSaveLoad at %s", test, site, saveSite)
	}
	logs := eval[string](b, `Array.from(document.querySelectorAll("pre.log")).map(p => p.textContent).join("\n")`)
	if !strings.Contains(logs, "--- FAIL: TestSaveLoad") || !strings.Contains(logs, "load after a save that succeeded") {
		t.Errorf("finding page does not show the test's failure output; its logs:\n%s", logs)
	}
	// Replay: the planted bug fails the test again every time (40 of 40
	// replays of a campaign's 8 failed trials, 5 each): the fault strikes
	// the first write of a test that writes once, in one goroutine.
	b.do("replay", chromedp.Click(chromedp.ID("replay"), chromedp.NodeVisible))
	if !b.waitFor(`(() => { const t = document.getElementById("replay-result").textContent; return !t.startsWith("replaying") && t !== "not replayed yet" })()`, 2*time.Minute) {
		t.Fatalf("no replay result")
	}
	result := b.text("replay-result")
	b.shot("test-replay.png")
	if first, _, _ := strings.Cut(result, "\n"); first != "TestSaveLoad failed again in 1 of 1 runs" {
		t.Errorf("replay result:\n%s", result)
	}

	// The trial list: each trial's test; filtered to TestSaveLoad's
	// failed trials, the failed fault trials (the only test that fails).
	b.do("open the trial list", chromedp.Navigate(strings.Replace(url, "/latest", fmt.Sprintf("/c/%d/trials.html", sum.Campaign), 1)),
		chromedp.WaitVisible(chromedp.ID("trials")))
	tests := eval[[]string](b, `Array.from(new Set(Array.from(document.querySelectorAll("#trials tbody tr")).map(r => r.dataset.test)))`)
	if strings.Join(tests, " ") != "TestSaveLoad TestLoadMissing TestNoIO" {
		t.Errorf("trial list's tests = %q, want TestSaveLoad TestLoadMissing TestNoIO", tests)
	}
	b.count(`(() => { for (const [n, v] of [["test", "TestSaveLoad"], ["status", "failed"]]) { const s = document.querySelector("select[name=" + n + "]"); s.value = v; s.dispatchEvent(new Event("change")) } return 0 })()`)
	b.shot("test-trials-failed.png")
	if shown := b.text("shown"); shown != strconv.Itoa(sum.Failed+failedRuns) {
		t.Errorf("trial list filtered to TestSaveLoad's failed trials shows %s, want %d", shown, sum.Failed+failedRuns)
	}
	b.do("open a failed trial", chromedp.Click(chromedp.CSS("#trials tbody tr:not([hidden]) a"), chromedp.NodeVisible), chromedp.WaitVisible(chromedp.ID("replay-result")))
	b.shot("test-trial.png")
	if test := textOf(b, "trial-test"); test != "TestSaveLoad" {
		t.Errorf("trial page's test = %q, want TestSaveLoad", test)
	}
}

// eval evaluates a JavaScript expression whose value is a T.
func eval[T any](b *tab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// textOf is the text of the element with the given id, or what says it
// is missing: unlike tab.text it does not wait for the element.
func textOf(b *tab, id string) string {
	b.t.Helper()
	return eval[string](b, fmt.Sprintf(`(document.getElementById(%q) || {textContent: "(no #%s)"}).textContent`, id, id))
}
