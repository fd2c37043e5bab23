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
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// campaignRun is one run of a campaign (gotest has its own of a test
// campaign): what Run set up and what it counts
// (a resumed campaign is run again; the controller's session is a trial's
// state machine).
type campaignRun struct {
	opts     Options
	st       *store.Store
	bt       *build.Built
	camp     *store.Campaign
	pol      policy.Policy
	memory   *policy.Memory // what earlier campaigns learned (loadMemory); nil: none
	r        *runner
	sum      *Summary
	parallel int
	// autoParallel: trials.parallel is auto, and parallel is decided again
	// once the baseline trials measured what one cluster uses.
	autoParallel bool
	// climb, when trials.parallel is auto and the run is long enough,
	// tries more clusters at once than parallel while it pays
	// (engine.Climb); nil otherwise.
	climb *engine.Climb
	used  indices
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

// openExecution sets a run up: store, build, campaign (new or resumed,
// with what its earlier runs stored, read once) and the run over them
// (newExecution).
func openExecution(ctx context.Context, opts Options) (_ *campaignRun, err error) {
	cfg := opts.Config
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	polName := cmp.Or(opts.Policy, cfg.Policy.Name)
	if len(opts.Replay) > 0 {
		polName = replayPolicy
	}
	st, err := store.Open(cfg.Path(cfg.Store.DB))
	if err != nil {
		return nil, err
	}
	s := &campaignRun{opts: opts, st: st}
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
	saved, err := openCampaign(ctx, st, cfg, polName, opts.Resume, opts.Campaign, s.bt.Key)
	if err != nil {
		return nil, err
	}
	if opts.Opened != nil {
		if err := opts.Opened(saved.Campaign.ID); err != nil {
			return nil, err
		}
	}
	if s.memory, err = loadMemory(ctx, st, cfg, s.bt.Catalog, saved.Campaign.ID, polName); err != nil {
		return nil, err
	}
	if s.memory != nil {
		opts.Logger.Info(fmt.Sprintf("memory: %s; the faults tried least without a symptom are preferred (policy.memory: off, or gofault forget, starts afresh)", s.memory))
	}
	return s, s.setUp(saved, polName)
}

// measureParallel decides how many clusters run at once when
// trials.parallel is auto, from the cores the trials since meter started
// used (ran: some trial ran one at a time in that span), and logs it.
func (s *campaignRun) measureParallel(meter engine.Meter, ran bool) {
	if !s.autoParallel {
		return
	}
	cores := 0.0
	if ran {
		cores = meter.Cores()
	}
	cfg := s.opts.Config
	m := engine.ThisMachine()
	s.parallel, s.sum.ParallelHow = autoParallel(m, cfg.Cluster.Nodes, s.want, cores)
	s.sum.Parallel = s.parallel
	climbs := ""
	if s.opts.Remote == nil && engine.ClimbWorth(s.want, s.parallel) {
		if most := engine.ClimbMax(m, clusterUnit(cfg.Cluster.Nodes), s.want); most > s.parallel {
			s.climb = engine.NewClimb(s.parallel, most)
			climbs = fmt.Sprintf("; more at once, up to %d, while it pays", most)
		}
	}
	s.opts.Logger.Info(fmt.Sprintf("parallel auto: %d clusters at once (%s)%s", s.parallel, s.sum.ParallelHow, climbs))
}

// climbed logs a note of the run's Climb and keeps the level it chose in
// the summary; the notes are added to its ParallelHow at the end
// (climbDone).
func (s *campaignRun) climbed(note string) {
	s.opts.Logger.Info("parallel auto: " + note)
	s.mu.Lock()
	s.sum.Parallel = s.climb.Level()
	s.mu.Unlock()
}

// climbDone adds what the run's Climb tried to the summary's
// ParallelHow.
func (s *campaignRun) climbDone() {
	if s.climb == nil || len(s.climb.Notes) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum.Parallel = s.climb.Level()
	s.sum.ParallelHow += "; then " + strings.Join(s.climb.Notes, "; ")
}

// reportArgs are the flags of a gofault report command about this
// campaign: a campaign that stopped before any trial ran is not the one
// report shows by default.
func (s *campaignRun) reportArgs() string {
	return fmt.Sprintf("--campaign %d --db %s", s.camp.ID, s.st.Path())
}

// markStopped records that the run stopped on an error: the campaign is
// StatusFailed, or StatusInterrupted if ctx was cancelled.
func (s *campaignRun) markStopped(ctx context.Context) error {
	status := store.StatusFailed
	if ctx.Err() != nil {
		status = store.StatusInterrupted
	}
	return s.st.SetCampaignStatus(context.WithoutCancel(ctx), s.camp.ID, status)
}

func (s *campaignRun) close() {
	if s.r != nil {
		s.r.close()
	}
	s.st.Close()
}

// reportTally reports to Options.AfterTrial, if set, with the coverage so
// far; s.mu is held or no fault trial runs.
func (s *campaignRun) reportTally(p Tally) {
	if s.opts.AfterTrial != nil {
		p.Covered, p.Blocks = s.r.cov.counts()
		p.RecentNew = recentNew(s.trials)
		s.opts.AfterTrial(p)
	}
}
