// Package campaign runs gofault's main job: it builds the instrumented
// target and the workload, starts a controller, and runs trials — each a
// fresh cluster, a workload, and the faults the policy chooses — judges every
// trial with the checkers and saves it to the store, so a campaign can stop
// at any time and resume where it stopped.
package campaign

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// ParallelAuto is the Options.Parallel of --parallel auto.
const ParallelAuto = engine.ParallelAuto

// Options tune a campaign run.
type Options struct {
	Config *config.Config
	// Trials is the number of trials to run (with faults unless the policy
	// is "none"); 0 means config trials.count.
	Trials int
	// Policy overrides config policy.name.
	Policy string
	// Parallel is the number of clusters run at once; 0 means config
	// trials.parallel (auto by default), ParallelAuto as many as the
	// machine allows (autoParallel) whatever the config says.
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
	// AfterTrial, if set, is called after every trial with the tally so far.
	AfterTrial func(Tally)
	Logger     *slog.Logger
	// Recalibrate runs the calibration trial even when an earlier
	// campaign of the same build and scenario measured the progress bound
	// (a resumed campaign keeps its own bound).
	Recalibrate bool
	// Built, if set, is used instead of building the target again.
	Built *build.Built
	// Remote, if set, runs fault trials on other machines whenever no
	// local cluster is free; Parallel may then be 0 (none runs here but
	// the calibration and baseline trials).
	Remote engine.Remote
	// Baseline, if set, is the log checker's starting baseline, and no
	// baseline trials are run unless the policy learns from them
	// (policy.Learner: cofi).
	Baseline *record.LogBaseline
	// Replay, if set, are recorded injections (a finding's trial) that
	// every fault trial injects again (policy.Replay: same site, node,
	// stack and occurrence) instead of what the config's policy would
	// choose; one that this build cannot inject (its site is gone) is an
	// error. gofaulttest.Replay runs a finding's regression test so.
	Replay []record.Injection
}

// Tally is a run's count of its trials so far, reported after each
// trial (Options.AfterTrial).
type Tally struct {
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

// Run runs a campaign: fault-free baseline trials first (so the log
// checker has something to judge against), then fault trials, several
// clusters at once, each saved as soon as it is judged.
func Run(ctx context.Context, opts Options) (_ *Summary, err error) {
	start := time.Now()
	s, err := openExecution(ctx, opts)
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
	meter := engine.StartMeter() // the baseline trials run one at a time: what one cluster uses
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
		s.reportTally(Tally{Total: s.want, Baseline: true, Trial: tr})
		rerun, err := s.rerunFaultFree(ctx, tr)
		if err != nil {
			return nil, err
		}
		if err := baselineBroken(tr, rerun, s.reportArgs()); err != nil {
			return nil, err
		}
	}
	s.measureParallel(meter, s.sum.BaselineTrials > 0)
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
	if kinds, err := faultKinds(s.opts.Config.Faults.Kinds); err == nil && s.sum.Policy != "none" {
		s.sum.NotInjected = notInjected(kinds, s.bt.Catalog, all)
		s.sum.NotInjectedWarning = notInjectedWarning(s.sum.NotInjected, s.sum.Trials)
		if s.sum.NotInjectedWarning != "" {
			s.opts.Logger.Warn(s.sum.NotInjectedWarning, "campaign", s.camp.ID)
		}
	}
	s.sum.States = len(s.bt.Catalog.States)
	s.sum.CoverageBlocks, s.sum.Blocks = s.r.cov.counts()
	s.sum.Templates, s.sum.TemplateSeconds = s.r.tmpl.counts()
	s.r.tmpl.close() // the trials are over: the work dir's size is without them
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

// faultTrials runs the fault trials still owed, s.parallel at a time here
// and, with Options.Remote, on its workers (engine.Run). Each trial is
// begun (the policy plans it) only once a slot is free for it, in index
// order, so the policy has learned from every trial that ended before;
// the policy running dry ends the run early.
func (s *campaignRun) faultTrials(ctx context.Context) error {
	if s.until() {
		return nil
	}
	defer s.climbDone()
	sched := engine.Schedule[*record.Trial]{
		Trials: s.want, Local: s.parallel, Remote: s.opts.Remote,
		Begin: s.beginFault, Done: s.faultDone,
	}
	if s.climb != nil {
		sched.Climb, sched.Climbed = s.climb, s.climbed
	}
	return engine.Run(ctx, sched)
}

// beginFault begins the next fault trial once the campaign is not paused:
// here (the policy plans it now), or with remote on Options.Remote (its
// worker begins it). What it returns runs the trial, saves it and re-runs
// it if it failed without a fault.
func (s *campaignRun) beginFault(ctx context.Context, _ int, remote bool) (func(context.Context) (*record.Trial, error), error) {
	if f, ok := s.pol.(policy.Finite); ok && f.Exhausted() {
		s.mu.Lock()
		s.sum.Exhausted = true
		s.mu.Unlock()
		return nil, engine.ErrEnded
	}
	if err := s.waitWhilePaused(ctx); err != nil { // paused from gofault ui
		return nil, err
	}
	index := s.used.next()
	run := func(ctx context.Context) (*record.Trial, error) { return s.runRemote(ctx, index) }
	if !remote {
		t, err := s.r.begin(index, false)
		if err != nil {
			return nil, err
		}
		run = func(ctx context.Context) (*record.Trial, error) { return s.r.finish(ctx, t) }
	}
	return func(ctx context.Context) (*record.Trial, error) {
		t, err := run(ctx)
		if err == nil {
			err = s.r.save(ctx, s.st, t)
		}
		if err == nil {
			_, err = s.rerunFaultFree(ctx, t)
		}
		return t, err
	}, nil
}

// faultDone counts fault trial t that ran and asks Options.Until about
// the trials so far; it stops the campaign once StopAfterErrors trials in
// a row could not run.
func (s *campaignRun) faultDone(t *record.Trial) error {
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
	s.reportTally(Tally{Done: s.done, Total: s.want, Failed: s.failures, NotJudged: s.notJudged, Trial: t})
	if stop := s.opts.Config.Trials.StopAfterErrors; stop > 0 && s.errorsInRow >= stop {
		return fmt.Errorf("%d trials in a row could not run, the last (%s): %s\nthe setup is broken, not the target: check the cluster section of the config (gofault report --trials --errors %s shows every trial's error)",
			s.errorsInRow, t.ID, t.Err, s.reportArgs())
	}
	if s.ended {
		return engine.ErrEnded
	}
	return nil
}

// until asks Options.Until about the trials so far, before the fault
// trials, and records its answer.
func (s *campaignRun) until() bool {
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
func baselineBroken(tr *record.Trial, rerun record.Rerun, where string) error {
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
