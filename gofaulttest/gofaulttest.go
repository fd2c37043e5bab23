// Package gofaulttest runs a gofault campaign from a Go test: it builds
// the instrumented target of a gofault.yaml, runs the trials on a real
// cluster, and fails the test when the campaign has findings, with the
// report in the test's log.
//
//	func TestFaults(t *testing.T) {
//		gofaulttest.Run(t, "gofault.yaml", gofaulttest.Trials(20))
//	}
//
// It calls gofault's campaign code as a library: a module that requires
// github.com/gofault/gofault needs neither a checkout of gofault nor its
// command. The go toolchain must be on PATH (the target is built from
// source).
package gofaulttest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
	"github.com/gofault/gofault/workdir"
)

// An Option tunes a campaign of Run.
type Option func(*options)

type options struct {
	trials  int
	policy  string
	sets    []string
	workDir string
	timeout time.Duration
	replay  *Finding
}

// Trials sets the number of trials (default: the config's trials.count;
// with Replay, the number of replays, default DefaultReplays).
func Trials(n int) Option { return func(o *options) { o.trials = n } }

// Policy sets the injection policy, e.g. "random", or "none" for a
// fault-free campaign (default: the config's policy.name).
func Policy(name string) Option { return func(o *options) { o.policy = name } }

// Set overrides config fields as `gofault run --set` does, e.g.
// Set("cluster.env.MINIKV_BUGS=split", "checkers.progress=3s").
func Set(kv ...string) Option { return func(o *options) { o.sets = append(o.sets, kv...) } }

// WorkDir sets the campaign's work dir: its builds, trial logs and store
// (default: a temporary directory of the test, so nothing is shared with
// other runs; name a fixed one to reuse the instrumented build across
// runs, as the command does).
func WorkDir(dir string) Option { return func(o *options) { o.workDir = dir } }

// Timeout bounds the build and the campaign together (default 30
// minutes); the campaign stops at the test's deadline too.
func Timeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// Result is what a campaign of Run or Campaign showed.
type Result struct {
	// Summary is the campaign's summary, as `gofault run --json` prints it.
	*campaign.Summary
	// Report is its findings and fault-free failures as `gofault report`
	// writes them.
	Report string
	// Records are the campaign's trials, its baseline trials included.
	Records []*record.Trial
	// role is the build's catalog role: which recorded faults struck the
	// leader, and are replayed on whichever member leads.
	role *catalog.Role
}

// Run runs a campaign of the config file at path (relative to the test's
// directory) and judges it: the test fails (Errorf) when the campaign has
// findings, whose report goes to the test's log, when trials could not
// run, or when it stopped early. Fault-free failures (trials without a
// fault that failed) are not findings: Run logs their report, and the
// result counts them. With Replay, Run is a finding's regression test
// and judges as Replay says.
func Run(t testing.TB, path string, opts ...Option) *Result {
	t.Helper()
	res := Campaign(t, path, opts...)
	failures := Verdict(res.Summary)
	if f := collect(opts).replay; f != nil {
		var notes []string
		failures, notes = replayVerdict(f, res.Records, res.role)
		if res.Stopped {
			failures = append(failures, fmt.Sprintf("stopped after %d replays (timeout or test deadline)", res.Summary.Trials))
		}
		for _, n := range notes {
			t.Log("gofault: " + n)
		}
	}
	if len(failures) > 0 || res.FaultFreeFailures > 0 {
		t.Log("gofault report:\n" + res.Report)
	}
	for _, f := range failures {
		t.Errorf("gofault: %s", f)
	}
	return res
}

// Campaign runs a campaign of the config file at path as Run does but
// leaves the judging to the caller, e.g. a smoke test whose findings are
// for a person to read. It stops the test (Fatalf) when the config is
// wrong, the target does not build or the campaign cannot run.
func Campaign(t testing.TB, path string, opts ...Option) *Result {
	t.Helper()
	o := collect(opts)
	if o.workDir == "" {
		o.workDir = t.TempDir()
	}
	// A test decides the same way whatever ran before in its work dir:
	// no memory of earlier campaigns unless its options turn it on.
	sets := append([]string{"workdir=" + o.workDir, "policy.memory=off"}, o.sets...)
	if o.policy != "" {
		sets = append(sets, "policy.name="+o.policy)
	}
	cfg, err := config.Open(path, config.Known{Policies: policy.Names(), Checkers: check.Names()}, sets...)
	if err != nil {
		t.Fatalf("gofault config: %v", err)
	}
	release, err := workdir.Lock(cfg.Path(cfg.WorkDir), "gofaulttest "+t.Name())
	if err != nil {
		t.Fatalf("gofault work dir: %v", err)
	}
	defer release()

	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			// Leave a moment to report before the test binary panics.
			var c2 context.CancelFunc
			ctx, c2 = context.WithDeadline(ctx, dl.Add(-30*time.Second))
			defer c2()
		}
	}
	log, stop := testLogger(t)
	defer stop()
	bt, err := build.Binaries(ctx, cfg, build.Options{}, log)
	if err != nil {
		t.Fatalf("gofault build: %v", err)
	}
	copts := campaign.Options{Config: cfg, Trials: o.trials, Built: bt, Logger: log}
	if o.replay != nil {
		copts.Replay = o.replay.Injections
		copts.Trials = cmp.Or(o.trials, DefaultReplays)
	}
	sum, err := campaign.Run(ctx, copts)
	if err != nil {
		t.Fatalf("gofault campaign: %v", err)
	}
	sum.Seconds += bt.Seconds
	text, trials, err := reportText(ctx, cfg, sum)
	if err != nil {
		t.Errorf("gofault report: %v", err)
	}
	t.Logf("gofault campaign %d (%s): %d trials, %d with faults, %d failed, %d could not run, %d findings, %d fault-free failures; store %s",
		sum.Campaign, sum.Policy, sum.Trials, sum.InjectedTrials, sum.FailedTrials, sum.ErrorTrials, sum.Findings, sum.FaultFreeFailures, sum.DB)
	return &Result{Summary: sum, Report: text, Records: trials, role: bt.Catalog.Role}
}

// collect applies opts to the defaults.
func collect(opts []Option) options {
	o := options{timeout: 30 * time.Minute}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Verdict returns why a campaign with summary sum fails a test: its
// findings, trials that could not run (a campaign that did not run its
// trials showed nothing), and an interruption. None means it passes.
func Verdict(sum *campaign.Summary) []string {
	var out []string
	if sum.Findings > 0 {
		out = append(out, fmt.Sprintf("%d findings in %d trials (report above; replay each with the command it names)", sum.Findings, sum.Trials))
	}
	if sum.ErrorTrials > 0 {
		out = append(out, fmt.Sprintf("%d of %d trials could not run", sum.ErrorTrials, sum.Trials))
	}
	if sum.Stopped {
		out = append(out, fmt.Sprintf("campaign stopped after %d trials (timeout or test deadline)", sum.Trials))
	}
	return out
}

// reportText renders the campaign's findings and fault-free failures as
// `gofault report` does, and returns its trials.
func reportText(ctx context.Context, cfg *config.Config, sum *campaign.Summary) (string, []*record.Trial, error) {
	st, err := store.OpenExisting(sum.DB)
	if err != nil {
		return "", nil, err
	}
	defer st.Close()
	trials, err := st.Trials(ctx, sum.Campaign)
	if err != nil {
		return "", nil, err
	}
	rep := report.New(trials, report.Options{GenericSites: cfg.Checkers.GenericSites})
	reruns, err := st.Reruns(ctx, sum.Campaign)
	if err != nil {
		return "", trials, err
	}
	rep.Annotate(st.Path(), reruns)
	var b bytes.Buffer
	if err := report.WriteText(&b, rep.Findings); err != nil {
		return "", trials, err
	}
	if err := report.WriteFaultFree(&b, rep.FaultFree); err != nil {
		return "", trials, err
	}
	return b.String(), trials, nil
}

// testLogger returns a logger of warnings and errors into t's log, and a
// function that stops it: goroutines that outlive the campaign must not
// log to a finished test.
func testLogger(t testing.TB) (*slog.Logger, func()) {
	w := &testWriter{t: t}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})), w.stop
}

type testWriter struct {
	mu      sync.Mutex
	t       testing.TB
	stopped bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}
