package dashboard_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium returns the path of a Chromium (or Chrome) to drive, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// runSummary is the part of `gofault run --json` the test reads.
type runSummary struct {
	Campaign     int64 `json:"campaign"`
	Trials       int   `json:"trials"`
	Baseline     int   `json:"baseline_trials"`
	FailedTrials int   `json:"failed_trials"`
	Findings     int   `json:"findings"`
}

// gofaultRun runs gofault run on the minikv example with its rotate bug on,
// in work, and returns its summary.
func gofaultRun(t *testing.T, bin, work string, args ...string) runSummary {
	t.Helper()
	s, err := runCampaign(bin, work, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runCampaign is gofaultRun for any goroutine; the campaign's log goes to
// logs too, when it is not nil.
func runCampaign(bin, work string, logs *logBuffer, args ...string) (runSummary, error) {
	args = append([]string{"run", "--config", filepath.Join("..", "examples", "minikv", "gofault.yaml"), "--json",
		"--set", "workdir=" + work, "--set", "workload.env.MINIKV_RECOVERY=4s", "--set", "checkers.baseline=1",
		// The planted bug that random faults find most surely: a failed
		// WAL rotation leaves the log closed, and with a rotation at
		// every append one error trial in three or four strikes one (3
		// of 8 in one run, 1 of 4 in another). The split bug (a crash between a
		// snapshot's renames) is rarer since followers install the
		// leader's snapshot: 0 of 16 in one run.
		"--set", "cluster.env.MINIKV_BUGS=rotate", "--set", "cluster.env.MINIKV_SEGMENT_BYTES=1", "--set", "faults.kinds=error"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if logs != nil {
		cmd.Stderr = io.MultiWriter(&stderr, logs)
	}
	if err := cmd.Run(); err != nil {
		return runSummary{}, fmt.Errorf("gofault %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var s runSummary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		return runSummary{}, fmt.Errorf("run summary: %v\n%s", err, stdout.String())
	}
	return s, nil
}

// logBuffer collects a running campaign's log for the test to wait on.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// waitFor reports whether the log holds substr within timeout.
func (l *logBuffer) waitFor(substr string, timeout time.Duration) bool {
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		l.mu.Lock()
		found := strings.Contains(l.buf.String(), substr)
		l.mu.Unlock()
		if found {
			return true
		}
	}
	return false
}

// TestBrowser opens `gofault ui` on a real minikv campaign in headless
// Chromium and checks what a person would see: the counts, a plot, the
// findings, a finding's stack; it clicks Replay and waits for the result,
// filters the trial list, and watches the campaign page update itself
// while the campaign runs on, pausing and resuming it from the page; then
// it opens the static pages of `gofault report --html` from the disk.
// Screenshots go to $GOFAULT_SCREENSHOTS, or the test's temp dir.
func TestBrowser(t *testing.T) {
	browser, shots, tmp, bin := browserTest(t, "a minikv campaign")
	work := filepath.Join(tmp, "work")
	db := filepath.Join(work, "gofault.db")
	// A few trials with crash faults find the planted bug; more if they
	// did not (resumed: the same campaign).
	var sum runSummary
	for n := 4; n <= 16 && sum.Findings == 0; n += 4 {
		args := []string{"--trials", strconv.Itoa(n), "--policy", "random"}
		if n > 4 {
			args = append(args, "--resume")
		}
		sum = gofaultRun(t, bin, work, args...)
	}
	t.Logf("campaign %d: %d fault trials, %d failed, %d findings", sum.Campaign, sum.Trials, sum.FailedTrials, sum.Findings)
	if sum.Findings == 0 {
		t.Fatalf("no findings in %d trials with the rotate bug on", sum.Trials)
	}

	// gofault ui on a free port; its first line names the URL.
	url := serveUI(t, bin, db)
	b := openTab(t, browser, shots, 4*time.Minute)

	// The campaign page: counts, plots, findings.
	b.do("open the campaign page", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("count-trials")))
	trials, failed, findings := b.text("count-trials"), b.text("count-failed"), b.text("count-findings")
	plots := b.count(`document.querySelectorAll("svg.plot").length`)
	lines := b.count(`Array.from(document.querySelectorAll("svg.plot polyline")).filter(p => p.getBBox().width > 0).length`)
	links := b.count(`document.querySelectorAll("a.finding-link").length`)
	b.shot("campaign.png")
	if trials != strconv.Itoa(sum.Trials) || failed != strconv.Itoa(sum.FailedTrials) || findings != strconv.Itoa(sum.Findings) {
		t.Errorf("campaign page shows %s trials, %s failed, %s findings; gofault run said %d, %d, %d", trials, failed, findings, sum.Trials, sum.FailedTrials, sum.Findings)
	}
	if plots < 3 || lines == 0 || links < sum.Findings {
		t.Errorf("campaign page: %d plots, %d drawn lines, %d finding links", plots, lines, links)
	}

	// A finding: its fault, stack and timeline; Replay.
	b.do("open a finding", chromedp.Click(chromedp.CSS("a.finding-link"), chromedp.NodeVisible), chromedp.WaitVisible(chromedp.ID("stack")))
	stack, site := b.text("stack"), b.text("fault-site")
	timeline := b.count(`document.querySelectorAll("svg.timeline .ev").length`)
	b.shot("finding.png")
	if !strings.Contains(stack, "examples/minikv/server") || site == "" || timeline == 0 {
		t.Errorf("finding page: site %q, %d timeline events, stack:\n%s", site, timeline, stack)
	}
	b.do("replay", chromedp.Click(chromedp.ID("replay"), chromedp.NodeVisible))
	if !b.waitFor(`(() => { const t = document.getElementById("replay-result").textContent; return !t.startsWith("replaying") && t !== "not replayed yet" })()`, 3*time.Minute) {
		t.Fatalf("no replay result")
	}
	result := b.text("replay-result")
	b.shot("replay.png")
	if !strings.Contains(result, "replayed ") {
		t.Errorf("replay result:\n%s", result)
	}
	t.Logf("replay: %s", strings.SplitN(result, "\n", 2)[0])

	// The trial list, filtered to the failed trials.
	b.do("filter the trial list",
		chromedp.Navigate(strings.Replace(url, "/latest", fmt.Sprintf("/c/%d/trials.html", sum.Campaign), 1)),
		chromedp.WaitVisible(chromedp.ID("trials")))
	b.count(`(() => { const s = document.querySelector("select[name=status]"); s.value = "failed"; s.dispatchEvent(new Event("change")); return 0 })()`)
	shown := b.text("shown")
	b.shot("trials-failed.png")
	if shown != strconv.Itoa(sum.FailedTrials) {
		t.Errorf("trial list filtered to failed shows %s trials, want %d", shown, sum.FailedTrials)
	}

	// Live: the campaign page follows the campaign as it runs on (resumed
	// in another process) and reloads itself with the new counts.
	b.do("open the campaign page again", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("count-trials")))
	more := make(chan runSummary, 1)
	logs := new(logBuffer)
	go func() {
		s, err := runCampaign(bin, work, logs, "--trials", strconv.Itoa(sum.Trials+3), "--policy", "random", "--resume")
		if err != nil {
			t.Error(err)
		}
		more <- s
	}()
	updated := b.waitFor(fmt.Sprintf(`document.getElementById("count-trials").textContent !== %q && document.getElementById("camp-status").textContent === "running"`, trials), 2*time.Minute)
	if updated {
		b.shot("campaign-running.png")
	}
	if !updated {
		<-more
		t.Fatalf("the campaign page did not update while the campaign ran")
	}
	// Pause: the trial under way finishes, no new one begins.
	b.do("pause", chromedp.Click(chromedp.ID("pause"), chromedp.NodeVisible))
	if !b.waitFor(`document.getElementById("camp-paused") !== null && document.getElementById("resume") !== null`, 30*time.Second) {
		t.Fatalf("the campaign page does not say paused after Pause")
	}
	// The trial under way (and the fault-free rerun of a failed one) may
	// take a while on a loaded machine: the campaign says when it has
	// finished and waits, and the page is given 3 s to catch up.
	if !logs.waitFor("campaign paused", 2*time.Minute) {
		t.Fatalf("the campaign did not log that it paused within 2 minutes of Pause")
	}
	time.Sleep(3 * time.Second)
	atPause := b.text("count-trials")
	time.Sleep(4 * time.Second)
	b.shot("campaign-paused.png")
	if now, status := b.text("count-trials"), b.text("camp-status"); now != atPause || status != "running" {
		t.Errorf("paused campaign went on: %s trials, then %s, status %s", atPause, now, status)
	}
	b.do("resume", chromedp.Click(chromedp.ID("resume"), chromedp.NodeVisible))
	final := <-more
	if !b.waitFor(fmt.Sprintf(`document.getElementById("count-trials").textContent === "%d" && document.getElementById("camp-status").textContent === "done"`, final.Trials), time.Minute) {
		t.Errorf("the campaign page did not follow the resumed campaign to its end (%d trials, done)", final.Trials)
	}
	b.shot("campaign-done.png")

	// The static pages of `gofault report --html`, opened from the disk
	// with no server: the same counts, plots and finding, and nothing
	// fetched from anywhere but the directory.
	static := filepath.Join(tmp, "report-html")
	if out, err := exec.Command(bin, "report", "--db", db, "--html", static).CombinedOutput(); err != nil {
		t.Fatalf("gofault report --html: %v\n%s", err, out)
	}
	b.do("open the static report", chromedp.Navigate("file://"+filepath.Join(static, "index.html")), chromedp.WaitVisible(chromedp.ID("count-trials")))
	if got := b.text("count-trials"); got != strconv.Itoa(final.Trials) {
		t.Errorf("static report shows %s trials, want %d", got, final.Trials)
	}
	if n := b.count(`document.querySelectorAll("svg.plot").length`); n < 3 {
		t.Errorf("static report: %d plots", n)
	}
	b.shot("static-campaign.png")
	b.do("open a finding in the static report", chromedp.Click(chromedp.CSS("a.finding-link"), chromedp.NodeVisible), chromedp.WaitVisible(chromedp.ID("stack")))
	if stack := b.text("stack"); !strings.Contains(stack, "examples/minikv/server") {
		t.Errorf("static finding page's stack:\n%s", stack)
	}
	if n := b.count(`document.querySelectorAll("svg.timeline .ev").length`); n == 0 {
		t.Errorf("static finding page: no timeline events")
	}
	if n := b.count(`performance.getEntriesByType("resource").filter(e => !e.name.startsWith("file:")).length`); n != 0 {
		t.Errorf("static finding page fetched %d resources from outside its directory", n)
	}
	b.shot("static-finding.png")
}

// browserTest skips the test under -short or without a Chromium, and
// returns the browser, the screenshots' dir ($GOFAULT_SCREENSHOTS or a
// temp dir), a temp dir and a gofault built into it.
func browserTest(t *testing.T, what string) (browser, shots, tmp, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: " + what + " in a real browser")
	}
	browser = chromium()
	if browser == "" {
		t.Skip("no Chromium found (looked for chromium, chromium-browser, google-chrome, headless-shell on PATH): apt-get install chromium, as .ci/run does")
	}
	shots = os.Getenv("GOFAULT_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	os.MkdirAll(shots, 0o755)
	tmp = t.TempDir()
	bin = filepath.Join(tmp, "gofault")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/gofault").CombinedOutput(); err != nil {
		t.Fatalf("build gofault: %v\n%s", err, out)
	}
	return browser, shots, tmp, bin
}

// serveUI starts gofault ui on db on a free port, stopped when the test
// ends, and returns its URL (the line it prints first names it).
func serveUI(t *testing.T, bin, db string) string {
	t.Helper()
	ui := exec.Command(bin, "ui", "--db", db, "--addr", "127.0.0.1:0")
	out, err := ui.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ui.Stderr = os.Stderr
	if err := ui.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ui.Process.Signal(os.Interrupt); ui.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("gofault ui: %v", err)
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("gofault ui said %q", line)
	}
	return strings.Fields(line[i:])[0]
}

// openTab starts the browser headless and returns a tab on it, closed
// when the test ends; every step must end within timeout.
func openTab(t *testing.T, browser, shots string, timeout time.Duration) *tab {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 1000), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	return &tab{t: t, ctx: ctx, shots: shots}
}

// tab drives one browser tab for a test.
type tab struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.shot("failed.png")
		b.t.Fatalf("%s: %v", what, err)
	}
}

// waitFor evaluates a JavaScript condition until it holds, through the
// page's reloads, or timeout passes.
func (b *tab) waitFor(cond string, timeout time.Duration) bool {
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		if ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](cond)); err == nil && ok {
			return true
		}
	}
	return false
}

// text is the text of the element with the given id.
func (b *tab) text(id string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.ID(id)))
	if err != nil {
		b.t.Fatalf("text of #%s: %v", id, err)
	}
	return s
}

// count evaluates a JavaScript expression whose value is a number.
func (b *tab) count(expr string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return n
}

// shot saves a screenshot of the whole page as name under the shots dir.
func (b *tab) shot(name string) {
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(b.shots, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot %s", p)
}
