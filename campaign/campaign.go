// Package campaign runs gofault's main job: it builds the instrumented
// target and the workload, starts a controller, and runs trials — each a
// fresh cluster, a workload, and the faults the policy chooses — judges every
// trial with the checkers and saves it to the store, so a campaign can stop
// at any time and resume where it stopped.
package campaign

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
	"golang.org/x/sync/errgroup"
)

// mixedBuilds is the build key of a campaign whose trials ran more than
// one build: no build matches it.
const mixedBuilds = "mixed"

// Options tune a campaign run.
type Options struct {
	Config *config.Config
	// Trials is the number of trials to run (with faults unless the policy
	// is "none"); 0 means config trials.count.
	Trials int
	// Policy overrides config policy.name.
	Policy string
	// Parallel is the number of clusters run at once; 0 means config
	// trials.parallel.
	Parallel int
	// Resume continues the latest campaign of this config instead of
	// starting a new one.
	Resume bool
	// Campaign, if set, is the campaign to continue (it must have been
	// made with this config): gofault bench resumes its own runs by ID.
	Campaign int64
	// Opened, if set, is called with the campaign's ID once it is
	// created or found, before any trial runs.
	Opened func(id int64) error
	// Until, if set, is called with every trial of the campaign so far
	// (an earlier run's included) before the fault trials and after each
	// of them is saved; once it returns true no further trial begins, the
	// trials under way finish, and the campaign is done (Summary.Ended).
	Until func(trials []*record.Trial) bool
	// Progress, if set, is called after every trial.
	Progress func(Progress)
	Logger   *slog.Logger
	// Built, if set, is used instead of building the target again.
	Built *build.Built
	// Baseline, if set, is the log checker's starting baseline, and no
	// baseline trials are run unless the policy learns from them
	// (policy.Learner: cofi).
	Baseline *check.Baseline
}

// Progress is reported after each trial.
type Progress struct {
	Done, Total int
	Baseline    bool // the trial was a fault-free baseline trial
	Failed      int  // trials failed so far
	// NotJudged counts the trials so far whose workload could not judge
	// them (record.StatusNotJudged).
	NotJudged int
	Trial     *record.Trial
	// Covered is the number of coverage blocks the campaign's trials
	// covered so far, of Blocks counted (0 of 0 without counters);
	// RecentNew how many of them the last 10 fault trials added.
	Covered, Blocks, RecentNew int
}

// Summary is the outcome of a run.
type Summary struct {
	Campaign       int64  `json:"campaign"`
	Policy         string `json:"policy"`
	Trials         int    `json:"trials"`
	BaselineTrials int    `json:"baseline_trials"`
	InjectedTrials int    `json:"injected_trials"`
	Injections     int    `json:"injections"`
	FailedTrials   int    `json:"failed_trials"`
	ErrorTrials    int    `json:"error_trials"`
	// NotJudgedTrials counts the trials (baselines included) that ran but
	// that their workload could not judge (record.StatusNotJudged); they
	// are neither ok nor failed. NotJudgedWarning is set when they are
	// most of the campaign's trials.
	NotJudgedTrials  int    `json:"not_judged_trials"`
	NotJudgedWarning string `json:"not_judged_warning,omitempty"`
	Findings         int    `json:"findings"`
	// FaultFreeFailures counts the clusters of failures in trials in which
	// no fault was injected; they are never findings of a fault.
	FaultFreeFailures int `json:"fault_free_failures"`
	// GenericConsequences counts the new log lines that followed faults
	// at many unrelated sites (report.Options.GenericSites): informational,
	// never findings.
	GenericConsequences int `json:"generic_consequences"`
	// InjectionRate is InjectedTrials over Trials (baselines excluded): the
	// share of fault trials in which the policy injected anything.
	InjectionRate float64 `json:"injection_rate"`
	// States is the number of abstract states in the catalog;
	// StatesEntered how many of them some trial's node entered.
	States        int     `json:"states"`
	StatesEntered int     `json:"states_entered"`
	Seconds       float64 `json:"seconds"`
	BuildSeconds  float64 `json:"build_seconds"`
	MedianTrial   float64 `json:"median_trial_seconds"`
	DB            string  `json:"db"`
	// WorkDirBytes is the size of the work dir (builds, trial logs, the
	// data dirs failed trials keep, the store) after the run.
	WorkDirBytes int64 `json:"workdir_bytes"`
	Stopped      bool  `json:"stopped,omitempty"` // interrupted; resume with --resume
	Exhausted    bool  `json:"exhausted,omitempty"`
	// Ended: Options.Until ended the campaign before its trial count.
	Ended bool `json:"ended,omitempty"`
	// ProgressBound is the hang and gray checkers' bound in seconds, and
	// ProgressHow how it was chosen (see calibrate).
	ProgressBound float64 `json:"progress_bound_seconds"`
	ProgressHow   string  `json:"progress_how"`
	// CoverageBlocks is the number of basic blocks the campaign's trials
	// covered (the union, an earlier run's included); Blocks the number
	// the build counts (0 with faults.coverage off). Each trial's own
	// counts are in its record (gofault report --trials --json).
	CoverageBlocks int `json:"coverage_blocks"`
	Blocks         int `json:"blocks"`
}

// Run runs a campaign: fault-free baseline trials first (so the log
// checker has something to judge against), then fault trials, several
// clusters at once, each saved as soon as it is judged.
func Run(ctx context.Context, opts Options) (_ *Summary, err error) {
	start := time.Now()
	s, err := openSession(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer s.close()
	defer func() {
		if err != nil {
			err = errors.Join(err, s.markStopped(ctx))
		}
	}()
	if err := s.calibrate(ctx); err != nil {
		return nil, err
	}
	var observed [][]record.Observation
	for s.priorBaseline+s.sum.BaselineTrials < s.wantBaseline && ctx.Err() == nil {
		tr, err := s.r.trial(ctx, s.used.next(), true)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := s.r.save(ctx, s.st, tr); err != nil {
			return nil, err
		}
		s.sum.BaselineTrials++
		s.trials = append(s.trials, tr)
		observed = append(observed, tr.Observations)
		s.progress(Progress{Total: s.want, Baseline: true, Trial: tr})
		rerun, err := s.rerunFaultFree(ctx, tr)
		if err != nil {
			return nil, err
		}
		if err := baselineBroken(tr, rerun, s.reportArgs()); err != nil {
			return nil, err
		}
	}
	if err := s.learn(ctx, observed); err != nil {
		return nil, err
	}
	if err := s.faultTrials(ctx); err != nil && ctx.Err() == nil {
		return nil, err
	}
	// The run's context may be cancelled (Ctrl-C); the summary and the
	// campaign's status are still written.
	sctx := context.WithoutCancel(ctx)
	all, err := s.st.Trials(sctx, s.camp.ID)
	if err != nil {
		return nil, err
	}
	summarise(s.sum, all, report.Options{GenericSites: s.opts.Config.Checkers.GenericSites})
	if s.sum.NotJudgedWarning != "" {
		s.opts.Logger.Warn(s.sum.NotJudgedWarning, "campaign", s.camp.ID, "not_judged", s.sum.NotJudgedTrials, "trials", s.sum.Trials+s.sum.BaselineTrials)
	}
	s.sum.States = len(s.bt.Catalog.States)
	s.sum.CoverageBlocks, s.sum.Blocks = s.r.cov.counts()
	s.sum.WorkDirBytes = dirSize(s.opts.Config.Path(s.opts.Config.WorkDir))
	s.sum.Seconds = time.Since(start).Seconds()
	status := store.StatusDone
	if ctx.Err() != nil {
		s.sum.Stopped = true
		status = store.StatusInterrupted
	}
	if err := s.st.SetCampaignStatus(sctx, s.camp.ID, status); err != nil {
		return nil, err
	}
	return s.sum, nil
}

// session is one run of a campaign: what Run set up and what it counts.
type session struct {
	opts     Options
	st       *store.Store
	bt       *build.Built
	camp     *store.Campaign
	pol      policy.Policy
	r        *runner
	sum      *Summary
	parallel int
	used     indices
	// priorBaseline counts the baseline trials an earlier run of a
	// resumed campaign saved; want the fault trials this run still owes.
	priorBaseline, wantBaseline, want int

	mu             sync.Mutex // guards the counts below and Progress calls
	done, failures int
	notJudged      int             // trials the workload could not judge
	trials         []*record.Trial // every trial so far, for Options.Until
	ended          bool            // Options.Until said enough
	errorsInRow    int             // trials in a row, in the order they ended, that could not run

	reruns reruns // what the re-runs of fault-free failures showed
}

// openSession sets a run up: store, build, campaign (new or resumed), policy and
// log baseline (restored on resume), runner, and what is left to do.
func openSession(ctx context.Context, opts Options) (_ *session, err error) {
	cfg := opts.Config
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &session{opts: opts, parallel: max(1, cmp.Or(opts.Parallel, cfg.Trials.Parallel))}
	polName := cmp.Or(opts.Policy, cfg.Policy.Name)
	if s.st, err = store.Open(cfg.Path(cfg.Store.DB)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.bt = opts.Built; s.bt == nil {
		if s.bt, err = build.Binaries(ctx, cfg, build.Options{}, opts.Logger); err != nil {
			return nil, err
		}
	}
	if s.camp, err = openCampaign(ctx, s.st, cfg, polName, opts.Resume, opts.Campaign); err != nil {
		return nil, err
	}
	if err := noteBuild(ctx, s.st, s.camp.ID, s.bt.Key); err != nil {
		return nil, err
	}
	if s.camp.Status != store.StatusRunning { // resumed: running again (gofault ui shows it live)
		if err := s.st.SetCampaignStatus(ctx, s.camp.ID, store.StatusRunning); err != nil {
			return nil, err
		}
		s.camp.Status = store.StatusRunning
	}
	if opts.Opened != nil {
		if err := opts.Opened(s.camp.ID); err != nil {
			return nil, err
		}
	}
	if s.pol, err = newPolicy(polName, cfg, s.bt.Catalog); err != nil {
		return nil, err
	}
	if err := restorePolicy(ctx, s.st, s.camp.ID, s.pol); err != nil {
		return nil, err
	}
	if s.reruns.m, err = s.st.Reruns(ctx, s.camp.ID); err != nil {
		return nil, err
	}
	baseline, err := s.st.Baseline(ctx, s.camp.ID)
	if err != nil {
		return nil, err
	}
	s.wantBaseline = cfg.Checkers.Baseline
	if opts.Baseline != nil && baseline.Trials == 0 {
		baseline = opts.Baseline.Clone()
		if _, learns := s.pol.(policy.Learner); !learns {
			// A policy that learns from its fault-free trials (cofi)
			// runs them still: the shared baseline has no observations.
			s.wantBaseline = 0
		}
	}
	if s.r, err = newRunner(cfg, s.bt, s.camp.ID, s.pol, baseline, opts.Logger); err != nil {
		return nil, err
	}
	if s.r.cov, err = loadCoverage(ctx, s.st, s.camp.ID, s.bt.Catalog, opts.Logger); err != nil {
		return nil, err
	}
	s.sum = &Summary{Campaign: s.camp.ID, Policy: polName, DB: s.st.Path(), BuildSeconds: s.bt.Seconds}
	// Count what an earlier run of a resumed campaign already did.
	prior, err := s.st.Trials(ctx, s.camp.ID)
	if err != nil {
		return nil, err
	}
	s.used = indices{}
	for _, t := range prior {
		s.used[t.Index] = true
	}
	s.priorBaseline = countBaseline(prior)
	s.trials = prior
	s.want = cmp.Or(opts.Trials, cfg.Trials.Count) - (len(prior) - s.priorBaseline)
	return s, nil
}

// reportArgs are the flags of a gofault report command about this
// campaign: a campaign that stopped before any trial ran is not the one
// report shows by default.
func (s *session) reportArgs() string {
	return fmt.Sprintf("--campaign %d --db %s", s.camp.ID, s.st.Path())
}

// markStopped records that the run stopped on an error: the campaign is
// StatusFailed, or StatusInterrupted if ctx was cancelled.
func (s *session) markStopped(ctx context.Context) error {
	status := store.StatusFailed
	if ctx.Err() != nil {
		status = store.StatusInterrupted
	}
	return s.st.SetCampaignStatus(context.WithoutCancel(ctx), s.camp.ID, status)
}

func (s *session) close() {
	if s.r != nil {
		s.r.close()
	}
	s.st.Close()
}

// progress reports to Options.Progress, if set, with the coverage so
// far; s.mu is held or no fault trial runs.
func (s *session) progress(p Progress) {
	if s.opts.Progress != nil {
		p.Covered, p.Blocks = s.r.cov.counts()
		p.RecentNew = recentNew(s.trials)
		s.opts.Progress(p)
	}
}

// faultTrials runs the fault trials still owed, s.parallel at a time. Each
// trial is begun (the policy plans it) only once a worker is free for it,
// in index order, so the policy has learned from every trial that ended
// before; the policy running dry ends the run early.
func (s *session) faultTrials(ctx context.Context) error {
	if s.until() {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.parallel)
	for i := 0; i < s.want && gctx.Err() == nil; i++ {
		if f, ok := s.pol.(policy.Finite); ok && f.Exhausted() {
			s.sum.Exhausted = true
			break
		}
		s.mu.Lock()
		ended := s.ended
		s.mu.Unlock()
		if ended {
			break
		}
		begun := make(chan error, 1)
		g.Go(func() error {
			if err := gctx.Err(); err != nil { // stopped while waiting for a worker
				begun <- err
				return nil
			}
			s.mu.Lock()
			ended := s.ended
			s.mu.Unlock()
			if ended { // Options.Until said enough while this waited for a worker
				begun <- errEnded
				return nil
			}
			if err := s.waitWhilePaused(gctx); err != nil { // paused from gofault ui
				begun <- err
				if gctx.Err() != nil {
					return nil
				}
				return err
			}
			tr, err := s.r.begin(s.used.next(), false)
			begun <- err
			if err != nil {
				return err
			}
			t, err := s.r.finish(gctx, tr)
			if err == nil {
				err = s.r.save(ctx, s.st, t)
			}
			if err == nil {
				_, err = s.rerunFaultFree(gctx, t)
			}
			if err != nil {
				return err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			s.done++
			s.trials = append(s.trials, t)
			if s.opts.Until != nil && !s.ended && s.opts.Until(s.trials) {
				s.ended, s.sum.Ended = true, true
			}
			switch t.Status {
			case record.StatusFailed:
				s.failures++
			case record.StatusNotJudged:
				s.notJudged++
			}
			if t.Status == record.StatusError {
				s.errorsInRow++
			} else {
				s.errorsInRow = 0
			}
			if stop := s.opts.Config.Trials.StopAfterErrors; stop > 0 && s.errorsInRow >= stop {
				s.progress(Progress{Done: s.done, Total: s.want, Failed: s.failures, NotJudged: s.notJudged, Trial: t})
				return fmt.Errorf("%d trials in a row could not run, the last (%s): %s\nthe setup is broken, not the target: check the cluster section of the config (gofault report --trials --errors %s shows every trial's error)",
					s.errorsInRow, t.ID, t.Err, s.reportArgs())
			}
			s.progress(Progress{Done: s.done, Total: s.want, Failed: s.failures, NotJudged: s.notJudged, Trial: t})
			return nil
		})
		if <-begun != nil {
			break
		}
	}
	return g.Wait()
}

// errEnded stops beginning fault trials once Options.Until said enough.
var errEnded = errors.New("ended by Options.Until")

// until asks Options.Until about the trials so far, before the fault
// trials, and records its answer.
func (s *session) until() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.Until != nil && !s.ended && s.opts.Until(s.trials) {
		s.ended, s.sum.Ended = true, true
	}
	return s.ended
}

// ErrBaselineFails matches (errors.Is) the error of a campaign stopped
// because a baseline trial failed again in every re-run: the target, as
// configured, fails without any fault. Its trials are stored; a caller that
// measures (gofault bench) records that instead of giving up.
var ErrBaselineFails = errors.New("the baseline fails without faults")

// baselineFailure is a reproducible baseline failure: its message, and
// errors.Is(err, ErrBaselineFails).
type baselineFailure struct{ msg string }

func (e *baselineFailure) Error() string        { return e.msg }
func (e *baselineFailure) Is(target error) bool { return target == ErrBaselineFails }

// baselineBroken says why a campaign must stop before any fault after its
// baseline trial tr (re-run as rerun): a baseline that could not run, or
// that failed every time it was re-run, means the setup or the target fails
// without faults, and fault trials would only repeat that. nil otherwise: a
// baseline failure that did not recur is reported as a fault-free failure
// and the campaign goes on. where is the report flags that name the
// campaign (reportArgs).
func baselineBroken(tr *record.Trial, rerun report.Rerun, where string) error {
	switch {
	case tr.Status == record.StatusError:
		return fmt.Errorf("baseline trial %s could not run, so no fault trial can: %s\nfix the cluster section of the config (gofault report --trials --errors %s shows the trial)", tr.ID, tr.Err, where)
	case tr.Status == record.StatusFailed && rerun.Runs > 0 && rerun.Kind() == "reproducible":
		var failed []string
		for _, v := range tr.Verdicts {
			if v.Failed {
				failed = append(failed, v.Checker+": "+v.Symptom)
			}
		}
		return &baselineFailure{fmt.Sprintf("baseline trial %s fails without any fault, and did again in %d of %d re-runs (%s)\nfix the setup or the workload, or report the bug, before injecting faults: gofault report --fault-free %s shows it",
			tr.ID, rerun.Recurred, rerun.Runs, strings.Join(failed, "; "), where)}
	}
	return nil
}

// indices hands out trial indices (which also seed each trial's workload)
// lowest first, skipping those already stored, so a trial interrupted in an
// earlier run is run again under its own index. Only Run's goroutine uses it.
type indices map[int]bool

func (u indices) next() int {
	i := 0
	for u[i] {
		i++
	}
	u[i] = true
	return i
}

// countBaseline counts the baseline trials among trials.
func countBaseline(trials []*record.Trial) int {
	n := 0
	for _, t := range trials {
		if t.Policy == baselinePolicy {
			n++
		}
	}
	return n
}

// summarise fills the counts of a summary from the campaign's trials.
func summarise(sum *Summary, trials []*record.Trial, opts report.Options) {
	var durations []float64
	sum.Trials, sum.BaselineTrials = 0, 0
	type stateKey struct{ task, state uint32 }
	entered := map[stateKey]bool{}
	for _, t := range trials {
		for _, v := range t.States {
			entered[stateKey{v.Task, v.State}] = true
		}
		if t.Policy == baselinePolicy {
			sum.BaselineTrials++
		} else {
			sum.Trials++
		}
		if len(t.Injections) > 0 {
			sum.InjectedTrials++
			sum.Injections += len(t.Injections)
		}
		switch t.Status {
		case record.StatusFailed:
			sum.FailedTrials++
		case record.StatusError:
			sum.ErrorTrials++
		case record.StatusNotJudged:
			sum.NotJudgedTrials++
		}
		durations = append(durations, t.End.Sub(t.Start).Seconds())
	}
	if sum.Trials > 0 {
		sum.InjectionRate = float64(sum.InjectedTrials) / float64(sum.Trials)
	}
	sort.Float64s(durations)
	if n := len(durations); n > 0 {
		sum.MedianTrial = durations[n/2]
	}
	rep := report.New(trials, opts)
	sum.Findings = len(rep.Findings)
	sum.FaultFreeFailures = len(rep.FaultFree)
	sum.GenericConsequences = len(rep.Generic)
	sum.StatesEntered = len(entered)
	sum.NotJudgedWarning = report.NotJudgedWarning(sum.NotJudgedTrials, sum.Trials+sum.BaselineTrials)
}

func openCampaign(ctx context.Context, st *store.Store, cfg *config.Config, polName string, resume bool, id int64) (*store.Campaign, error) {
	hash := cfg.Hash()
	if id != 0 {
		c, err := st.Campaign(ctx, id)
		if err != nil {
			return nil, err
		}
		if c.ConfigHash != hash || c.Policy != polName {
			return nil, fmt.Errorf("campaign %d was made with another config or policy (%s), so it cannot be continued with this one", id, c.Policy)
		}
		return c, nil
	}
	if resume {
		c, err := st.FindCampaign(ctx, cfg.Name, hash)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("no campaign of %q with this config to resume in %s (was the config changed? run without --resume to start a new one)", cfg.Name, st.Path())
		}
		if err != nil {
			return nil, err
		}
		if c.Policy != polName {
			return nil, fmt.Errorf("campaign %d ran policy %q; resume it with --policy %s", c.ID, c.Policy, c.Policy)
		}
		return c, nil
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	c := store.Campaign{Name: cfg.Name, ConfigHash: hash, Policy: polName, Seed: cfg.Policy.Seed, Config: string(data)}
	newID, err := st.CreateCampaign(ctx, c)
	if err != nil {
		return nil, err
	}
	return st.Campaign(ctx, newID)
}

// noteBuild records the build key of a campaign's trials: the first run's,
// or mixedBuilds once a resume runs another build.
func noteBuild(ctx context.Context, st *store.Store, campaign int64, key string) error {
	old, err := st.BuildKey(ctx, campaign)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return st.PutBuildKey(ctx, campaign, key)
	case err != nil:
		return err
	case old != key && old != mixedBuilds:
		return st.PutBuildKey(ctx, campaign, mixedBuilds)
	}
	return nil
}

// newPolicy makes the named policy for the catalog, tuned by cfg.
func newPolicy(name string, cfg *config.Config, cat *catalog.Catalog) (policy.Policy, error) {
	kinds, err := faultKinds(cfg.Faults.Kinds)
	if err != nil {
		return nil, err
	}
	return policy.New(name, policy.Env{
		Catalog:  cat,
		Seed:     cfg.Policy.Seed,
		Kinds:    kinds,
		PerTrial: cfg.Policy.PerTrial,
		Budget:   cfg.Policy.Budget,

		MaxPerTrial: cfg.Faults.MaxPerTrial,
		Key:         cfg.Policy.Key,
		Delay:       cfg.Faults.Delay,

		Partition: cfg.Faults.Partition.Duration,

		TargetErrors: cfg.Faults.TargetErrors,
	})
}

func faultKinds(names []string) ([]catalog.Kind, error) {
	var ks []catalog.Kind
	for _, n := range names {
		k, err := catalog.ParseKind(n)
		if err != nil {
			return nil, fmt.Errorf("faults.kinds: %w", err)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

func restorePolicy(ctx context.Context, st *store.Store, campaign int64, pol policy.Policy) error {
	s, ok := pol.(policy.Stateful)
	if !ok {
		return nil
	}
	data, err := st.PolicyState(ctx, campaign)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.Restore(data)
}

// trialDir is where a trial's data and logs go.
func trialDir(cfg *config.Config, id string) string {
	return filepath.Join(cfg.Path(cfg.WorkDir), "trials", id)
}
