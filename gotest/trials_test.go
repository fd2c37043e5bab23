package gotest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

func TestRemaining(t *testing.T) {
	chosen := []Measure{{Test: "A"}, {Test: "B"}, {Test: "C"}}
	order := []int{0, 1, 0, 2, 0, 1}
	for _, tc := range []struct {
		name   string
		ran    map[string]int
		trials int
		want   []int
	}{
		{"nothing ran", nil, 6, order},
		{"the first turns of each test ran", map[string]int{"A": 1, "B": 1}, 6, []int{0, 2, 0, 1}},
		{"trials asked already stored", map[string]int{"A": 3, "B": 2, "C": 1}, 6, nil},
		{"more stored than planned for a test: the total still holds", map[string]int{"A": 5}, 6, []int{1}},
		{"fewer trials asked than stored", map[string]int{"A": 3, "B": 2}, 4, nil},
		{"a test no longer chosen", map[string]int{"D": 2}, 6, []int{0, 1, 0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Remaining(order, chosen, tc.ran, tc.trials)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Remaining = %v, want %v", got, tc.want)
			}
		})
	}
}

// cancelAfter is a progress writer that cancels a campaign once it has
// written n fault trials' lines.
type cancelAfter struct {
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Count(w.buf.String(), "\ntrial ")+btoi(strings.HasPrefix(w.buf.String(), "trial ")) >= w.n {
		w.cancel()
	}
	return len(p), nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestParallelResume runs the planted bug's campaign two test processes
// at a time, interrupts it after 5 fault trials, resumes it (again two at
// a time) and checks that the campaign holds the fault-free pass once and
// exactly the 12 fault trials asked, under distinct indices, each of its
// test's share; that a resume refuses another build; and that one with
// nothing left to run runs nothing.
func TestParallelResume(t *testing.T) {
	dir := t.TempDir()
	opts := func() Options {
		return Options{
			Module: "testdata/retrystore", Package: ".", Env: []string{"RETRYSTORE_BUG=drop"}, WorkDir: dir,
			Policy: "random", Seed: 1, Trials: 12, Delay: 50 * time.Millisecond, Parallel: 2,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := opts()
	o.Progress = &cancelAfter{n: 5, cancel: cancel}
	if _, err := Run(ctx, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted campaign: err %v, want context.Canceled", err)
	}
	st, err := store.OpenExisting(filepath.Join(dir, "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx = context.Background()
	first, err := st.Trials(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if baseline, fault := split(first); len(baseline) != 6 || len(fault) < 5 || len(fault) >= 12 {
		t.Fatalf("interrupted: %d fault-free runs and %d fault trials stored, want 6 and 5 to 11", len(baseline), len(fault))
	}

	o = opts()
	o.Resume = true
	var progress bytes.Buffer
	o.Progress = &progress
	sum, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Campaign != 1 || sum.ResumedTests != 3 || sum.ResumedTrials < 5 || sum.Trials != 12 || sum.Parallel != 2 {
		t.Errorf("resumed summary: campaign %d, %d tests and %d trials resumed, %d trials, %d at once; want campaign 1, 3 tests, 5 or more, 12, 2",
			sum.Campaign, sum.ResumedTests, sum.ResumedTrials, sum.Trials, sum.Parallel)
	}
	if strings.Contains(progress.String(), "measured ") {
		t.Errorf("the resume measured tests again:\n%s", progress.String())
	}
	all, err := st.Trials(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	baseline, fault := split(all)
	if len(baseline) != 6 || len(fault) != 12 {
		t.Errorf("after the resume: %d fault-free runs and %d fault trials, want 6 and 12", len(baseline), len(fault))
	}
	seen := map[int]bool{}
	byTest := map[string]int{}
	for _, tr := range all {
		if seen[tr.Index] {
			t.Errorf("trial index %d stored twice", tr.Index)
		}
		seen[tr.Index] = true
		if tr.Policy != record.BaselinePolicy {
			byTest[testOf(tr)]++
		}
	}
	for _, sh := range sum.Shares {
		if byTest[sh.Test] != sh.Trials {
			t.Errorf("%s ran %d fault trials, its share is %d (%+v)", sh.Test, byTest[sh.Test], sh.Trials, sum.Shares)
		}
	}

	// Nothing left: a resume runs no trial.
	again, err := Run(ctx, o)
	if err != nil || again.Trials != 12 || again.ResumedTrials != 12 {
		t.Errorf("resume of a finished campaign: %v, %d trials (%d resumed), want 12 stored and none run", err, again.Trials, again.ResumedTrials)
	}
	// Another build: refused.
	if err := st.PutBuildKey(ctx, 1, "another"); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, o); err == nil || !strings.Contains(err.Error(), "another build") {
		t.Errorf("resume on another build: err %v, want a refusal naming another build", err)
	}
	// Other options: no campaign to resume.
	o.Seed = 2
	if _, err := Run(ctx, o); err == nil || !strings.Contains(err.Error(), "to resume") {
		t.Errorf("resume with another seed: err %v, want no campaign to resume", err)
	}
	t.Logf("interrupted after %d fault trials; shares %+v", sum.ResumedTrials, sum.Shares)
}

// split sorts trials into the fault-free runs and the fault trials.
func split(trials []*record.Trial) (baseline, fault []*record.Trial) {
	for _, tr := range trials {
		if tr.Policy == record.BaselinePolicy {
			baseline = append(baseline, tr)
		} else {
			fault = append(fault, tr)
		}
	}
	return baseline, fault
}

func TestAutoParallel(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name   string
		cpus   int
		mem    uint64
		cores  float64
		trials int
		want   int
		why    string
	}{
		{"unmeasured: one per core", 4, 0, 0, 100, 4, "one test process per core"},
		{"a light test: many", 2, 0, 0.1, 100, 15, "measured at 0.10 cores"},
		{"a busy test: one", 2, 0, 1.8, 100, 1, "measured at 1.80 cores"},
		{"memory bounds it", 16, gib, 0.1, 100, 4, "1024 MiB available holds 4"},
		{"trials bound it", 8, 0, 0.5, 3, 3, "no more than the 3 trials"},
		{"never none", 1, 1 << 20, 2, 10, 1, "holds 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, why := AutoParallel(engine.Machine{CPUs: tc.cpus, MemAvailable: tc.mem}, tc.cores, tc.trials)
			if n != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("AutoParallel = %d (%s), want %d (%s)", n, why, tc.want, tc.why)
			}
		})
	}
}

func TestReach(t *testing.T) {
	cat := &catalog.Catalog{Sites: []catalog.Site{{ID: "a", Index: 0}, {ID: "b", Index: 1}, {ID: "c", Index: 2}}}
	for _, tc := range []struct {
		name  string
		sites []string
		want  []uint32
	}{
		{"its sites, by index", []string{"c", "a"}, []uint32{0, 2}},
		{"a site the catalog no longer has", []string{"b", "gone"}, []uint32{1}},
		{"none the catalog has: none live, not every site", []string{"gone"}, []uint32{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Reach(cat, Measure{Test: "T", Sites: tc.sites})
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("Reach = %#v, want %v (never nil: nil would leave the plan whole)", got, tc.want)
			}
		})
	}
}

// TestTrialReach runs testdata/setupreach, where TestPut writes with Put
// itself and TestGet only in its setup (the helper Stored): TestGet's
// fault trials must not make Put's write live, so no request of them is
// answered "no fault" for being under the helper — without the narrowing
// (TrialSpec.Reach) each TestGet trial asks at that write once. Errors of
// Put still strike TestPut's trials.
func TestTrialReach(t *testing.T) {
	sum, err := Run(context.Background(), Options{
		Module: "testdata/setupreach", Package: ".", WorkDir: t.TempDir(),
		Policy: "random", Seed: 1, Trials: 8, Kinds: []catalog.Kind{catalog.KindError},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	sites := map[string][]string{}
	for _, m := range sum.Selection.Chosen {
		sites[m.Test] = m.Sites
	}
	const put, get = "example.com/setupreach.Put:os.WriteFile#0", "example.com/setupreach.Get:os.ReadFile#0"
	if !slices.Equal(sites["TestPut"], []string{put}) || !slices.Equal(sites["TestGet"], []string{get}) {
		t.Fatalf("chosen tests' sites = %v, want TestPut [%s] and TestGet [%s] (setup's write left out)", sites, put, get)
	}
	shares := map[string]int{}
	for _, sh := range sum.Shares {
		shares[sh.Test] = sh.Trials
	}
	if shares["TestGet"] == 0 || shares["TestPut"] == 0 {
		t.Fatalf("shares %+v: both tests need trials", sum.Shares)
	}
	if sum.SetupRequests != 0 {
		t.Errorf("%d requests under the helper in fault trials: Put's write was live in TestGet's trials", sum.SetupRequests)
	}
	if sum.Injected == 0 {
		t.Error("no fault injected")
	}
}

// TestUntilAndCampaign: Options.Until ends the planted bug's campaign at
// its first failed fault trial (as gofault bench does at a bug's first
// finding), Opened names the campaign before it runs, and Options.Campaign
// continues that campaign by ID up to Trials; a campaign made with other
// options is refused, and Until already true runs no further trial.
func TestUntilAndCampaign(t *testing.T) {
	dir := t.TempDir()
	opts := func() Options {
		return Options{
			Module: "testdata/retrystore", Package: ".", Env: []string{"RETRYSTORE_BUG=drop"}, WorkDir: dir,
			Policy: "random", Seed: 1, Trials: 20, Delay: 50 * time.Millisecond,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		}
	}
	failed := func(ts []*record.Trial) bool {
		for _, tr := range ts {
			if tr.Policy != record.BaselinePolicy && tr.Status == record.StatusFailed {
				return true
			}
		}
		return false
	}
	ctx := context.Background()
	o := opts()
	var opened int64
	o.Opened = func(id int64) error { opened = id; return nil }
	o.Until = failed
	sum, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	trials := storedTrials(t, dir, sum.Campaign)
	_, fault := split(trials)
	if !sum.Ended || opened != sum.Campaign || len(fault) != sum.Trials || sum.Trials >= 20 {
		t.Fatalf("ended %v, opened %d of campaign %d, %d fault trials stored of %d run; want ended, the same campaign, fewer than 20", sum.Ended, opened, sum.Campaign, len(fault), sum.Trials)
	}
	for i, tr := range fault {
		if last := i == len(fault)-1; (tr.Status == record.StatusFailed) != last {
			t.Errorf("fault trial %s (%d of %d) status %s: want only the last one failed", tr.ID, i+1, len(fault), tr.Status)
		}
	}
	stopped := len(fault)

	o = opts()
	o.Campaign = sum.Campaign
	cont, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if cont.Campaign != sum.Campaign || cont.Ended || cont.Trials != 20 || cont.ResumedTrials != stopped || cont.ResumedTests != 3 {
		t.Errorf("continued: campaign %d, ended %v, %d trials (%d resumed, %d tests); want campaign %d, 20 trials, %d resumed, 3 tests",
			cont.Campaign, cont.Ended, cont.Trials, cont.ResumedTrials, cont.ResumedTests, sum.Campaign, stopped)
	}

	o = opts()
	o.Campaign, o.Trials, o.Until = sum.Campaign, 30, failed
	again, err := Run(ctx, o)
	if err != nil || !again.Ended || again.Trials != 20 {
		t.Errorf("until already true: %v, ended %v, %d trials; want ended with the 20 stored", err, again.Ended, again.Trials)
	}

	o = opts()
	o.Campaign, o.Seed = sum.Campaign, 2
	if _, err := Run(ctx, o); err == nil || !strings.Contains(err.Error(), "not made with these options") {
		t.Errorf("another seed on campaign %d: %v, want a refusal", sum.Campaign, err)
	}
}

// TestTrialOutcome: a trial's progress line names a finding's symptom, an
// informational verdict's kind (never "passed": the test failed, not as a
// finding) and a pass.
func TestTrialOutcome(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   []record.Verdict
		want string
	}{
		{"no verdict", nil, "passed"},
		{"passed", []record.Verdict{{Checker: Checker}}, "passed"},
		{"finding", []record.Verdict{{Checker: Checker, Failed: true, Symptom: "TestX panicked"}}, "panicked"},
		{"fail-stop", []record.Verdict{{Checker: Checker, Symptom: FailStopSymptom}}, "fail-stop on the injected error (not a finding)"},
		{"assumption", []record.Verdict{{Checker: Checker, Symptom: AssumptionSymptom}}, "test assumption (not a finding)"},
		{"timing", []record.Verdict{{Checker: Checker, Symptom: TimingSymptom}}, "timing assumption (not a finding)"},
	} {
		if got := trialOutcome("TestX", tc.vs); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
