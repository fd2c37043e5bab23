package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// fixture is a store with one campaign: a baseline trial, a passing fault
// trial, a failing one (an EIO at wal.go with a stack, a client stalled,
// a node log with an error line) and one whose policy injected nothing.
func fixture(t *testing.T) (*store.Store, int64) {
	t.Helper()
	dir := t.TempDir()
	st, id := newCampaign(t, dir, "minikv", "bsrr")
	ctx := context.Background()
	logPath := filepath.Join(dir, "n1.log")
	os.WriteFile(logPath, []byte("starting n1\nserving on :1234\nERROR wal: write failed: input/output error\nbye\n"), 0o644)
	mk := func(i int, policy string, status record.Status) *record.Trial {
		start := t0.Add(time.Duration(i) * 3 * time.Second)
		tr := &record.Trial{Index: i, Campaign: "minikv", Policy: policy, Start: start, End: start.Add(2 * time.Second), Status: status,
			Nodes:    []record.Node{{Name: "n1", Log: logPath}, {Name: "n2", Log: filepath.Join(dir, "gone.log")}},
			States:   []record.StateVisit{{Node: "n1", Task: 1, State: uint32(i), Entries: 1, First: start}},
			Verdicts: []record.Verdict{{Checker: "crash"}, {Checker: "hang"}}}
		for j := 0; j < 20; j++ {
			tr.Client = append(tr.Client, record.ClientEvent{Time: start.Add(time.Duration(j) * 50 * time.Millisecond), Client: "n1/0", Node: "n1", Kind: record.EvProgress})
		}
		return tr
	}
	trials := []*record.Trial{
		mk(0, record.BaselinePolicy, record.StatusOK),
		mk(1, "bsrr", record.StatusOK),
		mk(2, "bsrr", record.StatusFailed),
		mk(3, "bsrr", record.StatusOK),
	}
	trials[1].Choice, trials[1].Why = "fuzz", "not tried yet: each technique gets a trial first, in turn; a seed: one fault where random would put it"
	trials[1].Injections = []record.Injection{{Time: t0.Add(3*time.Second + 500*time.Millisecond), Node: "n2", SiteID: "server.go:40", Kind: catalog.KindDelay, Delay: time.Second}}
	trials[2].Injections = []record.Injection{
		{Time: t0.Add(6*time.Second + 300*time.Millisecond), Node: "n1", SiteID: "wal.go:10", Kind: catalog.KindError, Error: "EIO", Role: "leader", StateID: "wal.appending",
			Stack: []record.Frame{{Func: "minikv/server.(*WAL).Append", File: "wal.go", Line: 10}, {Func: "minikv/server.(*Node).apply", File: "node.go", Line: 77}}},
		{Time: t0.Add(6*time.Second + 900*time.Millisecond), Node: "n2", SiteID: "peer.go:7", Kind: catalog.KindPartition, Delay: 500 * time.Millisecond},
	}
	trials[2].Client = append(trials[2].Client, record.ClientEvent{Time: t0.Add(7 * time.Second), Client: "n1/0", Node: "n1", Kind: record.EvError, Msg: "put k1: timeout"})
	trials[1].Verdicts = append(trials[1].Verdicts, record.Verdict{Checker: "log", Symptom: "informational: new warn log: lost peer",
		Dismissed: []record.Dismissal{{Rule: "delay-words", Node: "n2", Template: "warn  waiting for <n> peers", Count: 3, Example: "[WRN] waiting for 2 peers", Why: "delay of n2 at +0.5s, on n2"}}})
	trials[2].Verdicts[1] = record.Verdict{Checker: "hang", Failed: true, Symptom: "client n1/0 made no progress for 2s", Evidence: []string{"ERROR wal: write failed: input/output error"}, Nodes: []string{"n1"}}
	// A log line the same fault caused: co-occurring with the hang.
	trials[2].Verdicts = append(trials[2].Verdicts, record.Verdict{Checker: "log", Failed: true, Symptom: "new error log at wal.go: write failed"})
	for i, tr := range trials {
		tr.Blocks, tr.NewBlocks = 100+i, 100/(1+i)
		tr.ID = record.TrialID(id, tr.Index)
		if err := st.SaveTrial(ctx, id, tr); err != nil {
			t.Fatal(err)
		}
	}
	return st, id
}

// newCampaign is a store in dir, closed when t ends, with one campaign of
// target name under policy.
func newCampaign(t *testing.T, dir, name, policy string) (*store.Store, int64) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	id, err := st.CreateCampaign(context.Background(), store.Campaign{Name: name, ConfigHash: "h", Policy: policy, Config: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	return st, id
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

func TestPages(t *testing.T) {
	st, id := fixture(t)
	h := (&Server{Store: st}).Handler()
	c, err := Load(context.Background(), st, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Report.Findings) != 1 {
		t.Fatalf("findings %+v, want 1", c.Report.Findings)
	}
	fid := c.Report.Findings[0].ID

	code, body := get(t, h, "/")
	if code != 200 {
		t.Fatalf("GET /: %d", code)
	}
	mustContain(t, "campaign list", body, fmt.Sprintf(`href="c/%d/index.html"`, id), "minikv", "bsrr")

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/latest", nil))
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusFound || loc != fmt.Sprintf("/c/%d/index.html", id) {
		t.Errorf("GET /latest: %d to %q", rec.Code, loc)
	}

	base := fmt.Sprintf("/c/%d/", id)
	code, body = get(t, h, base+"index.html")
	if code != 200 {
		t.Fatalf("campaign page: %d %s", code, body)
	}
	mustContain(t, "campaign page", body,
		`id="count-trials">3<`, `id="count-baseline">1<`, `id="count-failed">1<`, `id="count-ok">3<`,
		`id="count-nofault">1<`, `id="injection-rate">67%<`, `id="count-findings">1<`, `id="count-states">4<`,
		`<svg class="plot"`, `<polyline class="line failed"`, `injection rate over time`,
		`coverage (basic blocks) over time`, `<polyline class="line coverage"`,
		`href="finding-`+fid+`.html"`, `data-live="events"`, "client n* made no progress for 2s")
	if m := regexp.MustCompile(`(?:src|href)="https?://[^"]*"`).FindString(body); m != "" {
		t.Errorf("campaign page loads from another site (no CDN): %s", m)
	}

	code, body = get(t, h, base+"trials.html")
	if code != 200 {
		t.Fatalf("trials page: %d", code)
	}
	mustContain(t, "trial list", body, `<table id="trials">`, `<select name="kind">`, `<option>error</option>`,
		`data-status="failed"`, `data-kind="none"`, `data-site="wal.go:10 peer.go:7"`, `href="trial-`+record.TrialID(id, 2)+`.html"`,
		`<td>bsrr <span class="muted" title="not tried yet: each technique gets a trial first, in turn; a seed: one fault where random would put it">→ fuzz</span></td>`)
	if strings.Count(body, "→ ") != 1 {
		t.Errorf("trial list shows a choice for a trial without one")
	}

	code, body = get(t, h, base+"finding-"+fid+".html")
	if code != 200 {
		t.Fatalf("finding page: %d %s", code, body)
	}
	mustContain(t, "finding page", body,
		`id="fault-kind">error EIO<`, `<code id="fault-site">wal.go:10</code>`, "<td>leader</td>", "wal.appending",
		"minikv/server.(*WAL).Append wal.go:10", "minikv/server.(*Node).apply node.go:77",
		"ERROR wal: write failed", `class="hot"`, `<svg class="timeline"`, `class="ev ev-error"`,
		`<rect class="ev ev-partition"`, `id="replay"`, "gofault replay --db ", "log not available",
		`<table id="co-occurring">`, "<td>log</td><td>new error log at wal.go: write failed</td><td>1 of 1</td>")

	code, body = get(t, h, base+"trial-"+record.TrialID(id, 1)+".html")
	if code != 200 {
		t.Fatalf("trial page: %d", code)
	}
	mustContain(t, "trial page", body, `<rect class="ev ev-delay"`, "server.go:40", `class="ev ev-progress"`,
		`<p id="trial-choice">bsrr chose <b>fuzz</b>: not tried yet: each technique gets a trial first, in turn; a seed: one fault where random would put it</p>`,
		`<table id="dismissed">`, `<td>delay-words</td><td>n2</td><td>3</td>`, "warn  waiting for &lt;n&gt; peers", "delay of n2 at &#43;0.5s, on n2", "[WRN] waiting for 2 peers")

	if _, body := get(t, h, base+"trial-"+record.TrialID(id, 3)+".html"); strings.Contains(body, `id="trial-choice"`) {
		t.Errorf("the page of a trial without a choice shows one")
	}

	for _, p := range []string{base + "finding-nope.html", base + "trial-9-9.html", base + "other.html", "/c/99/index.html"} {
		if code, _ := get(t, h, p); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
}

func TestReplayButton(t *testing.T) {
	st, id := fixture(t)
	var got string
	srv := &Server{Store: st, Replay: func(ctx context.Context, trial string) (ReplayResult, error) {
		got = trial
		return ReplayResult{Reproduced: true, Summary: "reproduced", Output: "replayed " + trial}, nil
	}}
	rec := httptest.NewRecorder()
	trial := record.TrialID(id, 2)
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("POST", fmt.Sprintf("/c/%d/replay/%s", id, trial), nil))
	var res ReplayResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != 200 {
		t.Fatalf("replay: %d %v %s", rec.Code, err, rec.Body)
	}
	if got != trial || !res.Reproduced || res.Trial != trial || res.Output != "replayed "+trial {
		t.Errorf("replay of %s ran %q and answered %+v", trial, got, res)
	}
	rec = httptest.NewRecorder()
	(&Server{Store: st}).Handler().ServeHTTP(rec, httptest.NewRequest("POST", fmt.Sprintf("/c/%d/replay/%s", id, trial), nil))
	if rec.Code != http.StatusNotImplemented {
		t.Errorf("replay without a replayer: %d", rec.Code)
	}
}

// TestEvents checks the live stream: the campaign's version at once, and
// a new one when a trial is saved.
func TestEvents(t *testing.T) {
	st, id := fixture(t)
	ts := httptest.NewServer((&Server{Store: st, Poll: 20 * time.Millisecond}).Handler())
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/c/%d/events", ts.URL, id), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	next := func() string {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("events: %v", err)
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				return v
			}
		}
	}
	if v := next(); v != "4-running" {
		t.Errorf("first event %q, want 4-running", v)
	}
	tr := &record.Trial{ID: record.TrialID(id, 4), Index: 4, Policy: "bsrr", Start: t0, End: t0, Status: record.StatusOK}
	if err := st.SaveTrial(ctx, id, tr); err != nil {
		t.Fatal(err)
	}
	if v := next(); v != "5-running" {
		t.Errorf("after a trial, event %q, want 5-running", v)
	}
	st.SetPaused(ctx, id, true)
	if v := next(); v != "5-running-paused" {
		t.Errorf("after a pause, event %q, want 5-running-paused", v)
	}
	st.SetPaused(ctx, id, false)
	st.SetCampaignStatus(ctx, id, store.StatusDone)
	if v := next(); v != "5-done" {
		t.Errorf("after the campaign ended, event %q, want 5-done", v)
	}
}

func TestPause(t *testing.T) {
	st, id := fixture(t)
	h := (&Server{Store: st}).Handler()
	base := fmt.Sprintf("/c/%d/", id)
	_, body := get(t, h, base+"index.html")
	mustContain(t, "running campaign", body, `<button id="pause">Pause</button>`, `action="pause"`)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", base+"pause", nil))
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("pause: %d %s", rec.Code, rec.Body)
	}
	if p, _ := st.Paused(context.Background(), id); !p {
		t.Errorf("not paused after the Pause button")
	}
	_, body = get(t, h, base+"index.html")
	mustContain(t, "paused campaign", body, `id="camp-paused">paused<`, `<button id="resume">Resume</button>`)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", base+"resume", nil))
	if p, _ := st.Paused(context.Background(), id); p || rec.Code != http.StatusSeeOther {
		t.Errorf("resume: %d, still paused %v", rec.Code, p)
	}
	st.SetCampaignStatus(context.Background(), id, store.StatusDone)
	if _, body = get(t, h, base+"index.html"); strings.Contains(body, `id="pause"`) {
		t.Errorf("a finished campaign has a Pause button")
	}
}

func TestWriteStatic(t *testing.T) {
	st, id := fixture(t)
	c, err := Load(context.Background(), st, id)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteStatic(dir, c); err != nil {
		t.Fatal(err)
	}
	fid := c.Report.Findings[0].ID
	for _, name := range []string{"index.html", "trials.html", "finding-" + fid + ".html", "trial-" + record.TrialID(id, 2) + ".html"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		body := string(data)
		mustContain(t, name, body, "<style>", "<script>")
		if strings.Contains(body, "data-live") || strings.Contains(body, `id="replay"`) {
			t.Errorf("%s: a static page has live parts", name)
		}
		for _, m := range regexp.MustCompile(`(?:href|src)="([^"]+)"`).FindAllStringSubmatch(body, -1) {
			if _, err := os.Stat(filepath.Join(dir, m[1])); err != nil {
				t.Errorf("%s links to %s, which is not in the directory", name, m[1])
			}
		}
	}
	// A passing trial of no finding has no page, and is not linked.
	if _, err := os.Stat(filepath.Join(dir, "trial-"+record.TrialID(id, 3)+".html")); err == nil {
		t.Errorf("a page for a passing trial")
	}
}

func TestTimelineGeneric(t *testing.T) {
	evs := []Event{{At: time.Second, Lane: "n1", Kind: "sequence-step", Label: "step 2 of 3"}, {At: 0, Dur: time.Second, Lane: "n2", Kind: "partition"}}
	if evs[0].Class() != "ev-other" || evs[1].Class() != "ev-partition" {
		t.Errorf("classes %s, %s", evs[0].Class(), evs[1].Class())
	}
	svg := string(TimelineSVG(evs, 2*time.Second))
	mustContain(t, "timeline", svg, `class="ev ev-other"`, "sequence-step step 2 of 3", `<rect class="ev ev-partition"`, ">n1<", ">n2<")
	mustContain(t, "chart", string(lineChart("x", []series{{Name: "a", Class: "ok", X: []float64{1}, Y: []float64{1}}}, 0, "%.0f")), "<polyline")
}

func TestCompare(t *testing.T) {
	st, id := fixture(t)
	ctx := context.Background()
	// A second campaign with the same finding, later, and another one.
	id2, err := st.CreateCampaign(ctx, store.Campaign{Name: "minikv", ConfigHash: "h", Policy: "random", Config: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	c1, _ := Load(ctx, st, id)
	for i := 0; i < 4; i++ {
		tr := *c1.Trials[2]
		tr.ID, tr.Index, tr.Policy = record.TrialID(id2, 10+i), 10+i, "random"
		if i < 2 {
			tr.Status, tr.Verdicts = record.StatusOK, nil
		}
		if i == 3 {
			tr.Verdicts = []record.Verdict{{Checker: "crash", Failed: true, Symptom: "n1 exited"}}
		}
		if err := st.SaveTrial(ctx, id2, &tr); err != nil {
			t.Fatal(err)
		}
	}
	h := (&Server{Store: st}).Handler()
	code, body := get(t, h, fmt.Sprintf("/compare?c=%d&c=%d", id, id2))
	if code != 200 {
		t.Fatalf("compare: %d %s", code, body)
	}
	fid := c1.Report.Findings[0].ID
	mustContain(t, "compare page", body, `<table id="compare-counts">`, `<svg class="plot"`, "findings over fault trials",
		fmt.Sprintf(`<a href="c/%d/finding-%s.html">2</a>`, id, fid),  // campaign 1: its 2nd fault trial
		fmt.Sprintf(`<a href="c/%d/finding-%s.html">3</a>`, id2, fid), // campaign 2: its 3rd
		"2 of 2", "1 of 2", "n* exited", "—")
	if code, _ := get(t, h, "/compare?c=x"); code != http.StatusBadRequest {
		t.Errorf("compare?c=x: %d", code)
	}
	_, body = get(t, h, "/")
	mustContain(t, "campaign list", body, `<form method="get" action="compare">`, fmt.Sprintf(`name="c" value="%d"`, id2))
}

func TestFrames(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a.go")
	os.WriteFile(file, []byte("package a\n\nfunc f() {\n\tg()\n}\n"), 0o644)
	fs := Frames([]string{"a.f " + file + ":4", "b.g gone.go:3"})
	if len(fs) != 2 || len(fs[0].Source) != 6 || !fs[0].Source[3].Hot || fs[0].Source[3].Text != "\tg()" || len(fs[1].Source) != 0 {
		t.Errorf("frames: %+v", fs)
	}
}

// TestNotJudgedPages: a trial the workload could not judge is counted
// apart on the campaign page, listed with its reason, plotted, and can be
// filtered for; a campaign of mostly such trials is flagged.
func TestNotJudgedPages(t *testing.T) {
	st, id := fixture(t)
	ctx := context.Background()
	start := t0.Add(20 * time.Second)
	tr := &record.Trial{ID: record.TrialID(id, 4), Index: 4, Campaign: "minikv", Policy: "bsrr", Start: start, End: start.Add(time.Second),
		Status: record.StatusNotJudged, Err: "not judged: JetStream disabled",
		Injections: []record.Injection{{Time: start, Node: "n1", SiteID: "meta.go:5", Kind: catalog.KindError, Error: "EIO"}},
		Client:     []record.ClientEvent{{Time: start, Client: "workload", Kind: record.EvNotJudged, Msg: "JetStream disabled"}},
		Verdicts:   []record.Verdict{{Checker: "crash"}}}
	if err := st.SaveTrial(ctx, id, tr); err != nil {
		t.Fatal(err)
	}
	h := (&Server{Store: st}).Handler()
	base := fmt.Sprintf("/c/%d/", id)
	_, body := get(t, h, base+"index.html")
	mustContain(t, "campaign page", body, `id="count-notjudged">1<`, `id="count-ok">3<`, `id="count-failed">1<`,
		`<table id="notjudged">`, "JetStream disabled", `<polyline class="line notjudged"`)
	if strings.Contains(body, `id="notjudged-warning"`) {
		t.Error("1 of 5 trials not judged flagged as most")
	}
	_, body = get(t, h, base+"trials.html")
	mustContain(t, "trial list", body, `<option>not_judged</option>`, `data-status="not_judged"`)
	_, body = get(t, h, base+"trial-"+tr.ID+".html")
	mustContain(t, "trial page", body, `class="status-not_judged">not_judged<`, "not judged: JetStream disabled")

	for _, tc := range []struct {
		statuses []record.Status
		warn     bool
	}{
		{[]record.Status{record.StatusOK, record.StatusNotJudged}, false},
		{[]record.Status{record.StatusNotJudged, record.StatusNotJudged, record.StatusFailed}, true},
	} {
		var ts []*record.Trial
		for _, s := range tc.statuses {
			ts = append(ts, &record.Trial{Policy: "bsrr", Status: s})
		}
		c := count(ts, report.New(ts, report.Options{}))
		if (c.NotJudgedWarning != "") != tc.warn || c.OK+c.Failed+c.NotJudged != len(ts) {
			t.Errorf("%v: counts %+v, warning wanted %v", tc.statuses, c, tc.warn)
		}
	}
}

// TestFindingNotes: a log finding whose every line came before the
// trial's first fault says so on its page and in the findings table, as
// the text report does (report.Finding.Notes); a finding without such
// trials shows no note.
func TestFindingNotes(t *testing.T) {
	st, id := newCampaign(t, t.TempDir(), "nats", "random")
	ctx := context.Background()
	const symptom = "new error log at stream.go: last sequence mismatch"
	for i, before := range []bool{true, false} {
		start := t0.Add(time.Duration(i) * 10 * time.Second)
		v := record.Verdict{Checker: "log", Failed: true, Symptom: symptom, Symptoms: []string{symptom}, Evidence: []string{"[ERR] last sequence mismatch"}, Nodes: []string{"n1"}}
		if before {
			v.BeforeFaults = []string{symptom}
		}
		tr := &record.Trial{Index: i + 1, Campaign: "nats", Policy: "random", Start: start, End: start.Add(5 * time.Second), Status: record.StatusFailed,
			Nodes:      []record.Node{{Name: "n1"}},
			Injections: []record.Injection{{Time: start.Add(3 * time.Second), Node: "n1", SiteID: "raft.go:9", Kind: catalog.KindCrash}},
			Verdicts:   []record.Verdict{v}}
		tr.ID = record.TrialID(id, tr.Index)
		if err := st.SaveTrial(ctx, id, tr); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Load(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Report.Findings) != 1 {
		t.Fatalf("findings %+v, want 1", c.Report.Findings)
	}
	f := c.Report.Findings[0]
	h := (&Server{Store: st}).Handler()
	base := fmt.Sprintf("/c/%d/", id)
	first := record.TrialID(id, 1)
	_, body := get(t, h, base+"finding-"+f.ID+".html")
	mustContain(t, "finding page", body, `<p class="note" id="note-before"><b>before</b> `+first+`: every line of this symptom came before the trial&#39;s first fault`)
	if strings.Contains(body, record.TrialID(id, 2)+": every line") {
		t.Errorf("the note names the trial whose lines followed the fault")
	}
	_, body = get(t, h, base+"index.html")
	mustContain(t, "campaign page", body, `(before)</span>`)
}
