package campaign

// A run of a campaign: what Run sets up (store, build, campaign, policy,
// runner) and what it counts as trials end.

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// execution is one run of a campaign: what Run set up and what it counts
// (a resumed campaign is run again; the controller's session is a trial's
// state machine).
type execution struct {
	opts     Options
	st       *store.Store
	bt       *build.Built
	camp     *store.Campaign
	pol      policy.Policy
	r        *runner
	sum      *Summary
	parallel int
	// local holds a token per local cluster in use, with Options.Remote.
	local chan struct{}
	// autoParallel: trials.parallel is auto, and parallel is decided again
	// once the baseline trials measured what one cluster uses.
	autoParallel bool
	used         indices
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

// openExecution sets a run up: store, build, campaign (new or resumed), policy and
// log baseline (restored on resume), runner, and what is left to do.
func openExecution(ctx context.Context, opts Options) (_ *execution, err error) {
	cfg := opts.Config
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &execution{opts: opts}
	polName := cmp.Or(opts.Policy, cfg.Policy.Name)
	if len(opts.Replay) > 0 {
		polName = replayPolicy
	}
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
	if s.pol, err = campaignPolicy(polName, cfg, s.bt.Catalog, opts.Replay); err != nil {
		return nil, err
	}
	if err := RestorePolicy(ctx, s.st, s.camp.ID, s.pol); err != nil {
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
	switch {
	case opts.Remote != nil:
		// Local clusters are what Parallel says, none at 0: the remote
		// workers run the fault trials. Auto is not measured here (the
		// workers' machines are another's): the machine's rule alone.
		s.parallel, s.sum.ParallelHow = max(0, opts.Parallel), "set by --parallel, with --queue"
		if opts.Parallel == ParallelAuto {
			s.parallel, s.sum.ParallelHow = autoParallel(thisMachine(), cfg.Cluster.Nodes, s.want, 0)
		}
		s.local = make(chan struct{}, max(1, s.parallel))
		if s.parallel == 0 {
			s.local <- struct{}{} // never free
		}
	case opts.Parallel > 0:
		s.parallel, s.sum.ParallelHow = opts.Parallel, "set by --parallel"
	case opts.Parallel == 0 && !cfg.Trials.Parallel.Auto():
		s.parallel, s.sum.ParallelHow = int(cfg.Trials.Parallel), "set by trials.parallel"
	default:
		// Until the baseline trials measured a cluster (measureParallel).
		s.autoParallel = true
		s.parallel, s.sum.ParallelHow = autoParallel(thisMachine(), cfg.Cluster.Nodes, s.want, 0)
	}
	s.sum.Parallel = s.parallel
	return s, nil
}

// measureParallel decides how many clusters run at once when
// trials.parallel is auto, from the cores the trials since meter started
// used (ran: some trial ran one at a time in that span), and logs it.
func (s *execution) measureParallel(meter cpuMeter, ran bool) {
	if !s.autoParallel {
		return
	}
	cores := 0.0
	if ran {
		cores = meter.cores()
	}
	cfg := s.opts.Config
	s.parallel, s.sum.ParallelHow = autoParallel(thisMachine(), cfg.Cluster.Nodes, s.want, cores)
	s.sum.Parallel = s.parallel
	s.opts.Logger.Info(fmt.Sprintf("parallel auto: %d clusters at once (%s)", s.parallel, s.sum.ParallelHow))
}

// reportArgs are the flags of a gofault report command about this
// campaign: a campaign that stopped before any trial ran is not the one
// report shows by default.
func (s *execution) reportArgs() string {
	return fmt.Sprintf("--campaign %d --db %s", s.camp.ID, s.st.Path())
}

// markStopped records that the run stopped on an error: the campaign is
// StatusFailed, or StatusInterrupted if ctx was cancelled.
func (s *execution) markStopped(ctx context.Context) error {
	status := store.StatusFailed
	if ctx.Err() != nil {
		status = store.StatusInterrupted
	}
	return s.st.SetCampaignStatus(context.WithoutCancel(ctx), s.camp.ID, status)
}

func (s *execution) close() {
	if s.r != nil {
		s.r.close()
	}
	s.st.Close()
}

// reportTally reports to Options.AfterTrial, if set, with the coverage so
// far; s.mu is held or no fault trial runs.
func (s *execution) reportTally(p Tally) {
	if s.opts.AfterTrial != nil {
		p.Covered, p.Blocks = s.r.cov.counts()
		p.RecentNew = recentNew(s.trials)
		s.opts.AfterTrial(p)
	}
}

// replayPolicy is the policy name of a campaign of Options.Replay.
const replayPolicy = "replay"

// campaignPolicy makes the policy of a campaign: the replay of the
// recorded injections replay, if any, else the named one.
func campaignPolicy(name string, cfg *config.Config, cat *catalog.Catalog, replay []record.Injection) (policy.Policy, error) {
	if len(replay) == 0 {
		return newPolicy(name, cfg, cat)
	}
	pol := policy.NewReplay(cat, replay)
	if missing := pol.Missing(); len(missing) > 0 {
		return nil, fmt.Errorf("cannot replay the recorded faults on this build: %s", strings.Join(missing, "; "))
	}
	return pol, nil
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
		LeaderAt:  cfg.Faults.Partition.LeaderAt,

		TargetErrors: cfg.Faults.TargetErrors,
		Files:        cfg.Faults.Files,
	})
}

// faultKinds parses the config's faults.kinds.
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
