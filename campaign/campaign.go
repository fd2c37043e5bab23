// Package campaign runs gofault's main job: it builds the instrumented
// target and the workload, starts a controller, and runs trials — each a
// fresh cluster, a workload, and the faults the policy chooses — judges every
// trial with the checkers and saves it to the store, so a campaign can stop
// at any time and resume where it stopped.
package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// Blob keys in the store.
const (
	blobPolicy   = "policy"
	blobBaseline = "baseline"
)

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
	// Progress, if set, is called after every trial.
	Progress func(Progress)
	Logger   *slog.Logger
	// Built, if set, is used instead of building the target again.
	Built *Built
	// Baseline, if set, is the log checker's starting baseline, and no
	// baseline trials are run.
	Baseline *check.Baseline
}

// Progress is reported after each trial.
type Progress struct {
	Done, Total int
	Baseline    bool // the trial was a fault-free baseline trial
	Failed      int  // trials failed so far
	Trial       *record.Trial
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
	Findings       int    `json:"findings"`
	// States is the number of abstract states in the catalog;
	// StatesEntered how many of them some trial's node entered.
	States        int     `json:"states"`
	StatesEntered int     `json:"states_entered"`
	Seconds       float64 `json:"seconds"`
	BuildSeconds  float64 `json:"build_seconds"`
	MedianTrial   float64 `json:"median_trial_seconds"`
	DB            string  `json:"db"`
	Stopped       bool    `json:"stopped,omitempty"` // interrupted; resume with --resume
	Exhausted     bool    `json:"exhausted,omitempty"`
}

// Run runs a campaign.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	start := time.Now()
	cfg := opts.Config
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	polName := opts.Policy
	if polName == "" {
		polName = cfg.Policy.Name
	}
	total := opts.Trials
	if total <= 0 {
		total = cfg.Trials.Count
	}
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = cfg.Trials.Parallel
	}
	if parallel <= 0 {
		parallel = 1
	}

	st, err := store.Open(cfg.Path(cfg.Store.DB))
	if err != nil {
		return nil, err
	}
	defer st.Close()

	bt := opts.Built
	if bt == nil {
		if bt, err = Build(ctx, cfg, log); err != nil {
			return nil, err
		}
	}

	camp, err := openCampaign(ctx, st, cfg, polName, opts.Resume)
	if err != nil {
		return nil, err
	}
	kinds, err := faultKinds(cfg.Faults.Kinds)
	if err != nil {
		return nil, err
	}
	pol, err := policy.New(polName, policy.Env{
		Catalog:  bt.Catalog,
		Seed:     cfg.Policy.Seed,
		Kinds:    kinds,
		PerTrial: cfg.Policy.PerTrial,
		Budget:   cfg.Policy.Budget,
		Key:      cfg.Policy.Key,
		Delay:    cfg.Faults.Delay,

		TargetErrors: cfg.Faults.TargetErrors,
	})
	if err != nil {
		return nil, err
	}
	if err := restorePolicy(ctx, st, camp.ID, pol); err != nil {
		return nil, err
	}
	baseline, err := loadBaseline(ctx, st, camp.ID)
	if err != nil {
		return nil, err
	}
	wantBaseline := cfg.Checkers.Baseline
	if opts.Baseline != nil && baseline.Trials == 0 {
		baseline, wantBaseline = opts.Baseline.Clone(), 0
	}

	r, err := newRunner(cfg, bt, camp.ID, pol, baseline, log)
	if err != nil {
		return nil, err
	}
	defer r.close()

	sum := &Summary{Campaign: camp.ID, Policy: polName, DB: st.Path(), BuildSeconds: bt.Seconds}
	// Count what an earlier run of a resumed campaign already did.
	prior, err := st.Trials(ctx, camp.ID)
	if err != nil {
		return nil, err
	}
	// Trial indices (which also seed each trial's workload) are handed out
	// lowest first, skipping those already stored, so a trial interrupted
	// in an earlier run is run again under its own index.
	used := map[int]bool{}
	for _, t := range prior {
		used[t.Index] = true
	}
	nextIndex := func() int {
		i := 0
		for used[i] {
			i++
		}
		used[i] = true
		return i
	}
	priorBaseline := countBaseline(prior)
	faultTrials := len(prior) - priorBaseline

	// Fault-free baseline trials first, so the log checker has something
	// to judge against.
	for priorBaseline+sum.BaselineTrials < wantBaseline && ctx.Err() == nil {
		tr, err := r.trial(ctx, nextIndex(), true)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := r.save(ctx, st, tr); err != nil {
			return nil, err
		}
		sum.BaselineTrials++
		if opts.Progress != nil {
			opts.Progress(Progress{Done: 0, Total: total - faultTrials, Baseline: true, Trial: tr})
		}
	}

	// Fault trials, parallel workers pulling indices in order.
	var (
		mu           sync.Mutex
		firstErr     error
		failed       int
		finished     int
		want         = total - faultTrials
		sem          = make(chan struct{}, parallel)
		wg           sync.WaitGroup
		tctx, cancel = context.WithCancel(ctx)
	)
	defer cancel()
	for i := 0; i < want && tctx.Err() == nil; i++ {
		if f, ok := pol.(policy.Finite); ok && f.Exhausted() {
			sum.Exhausted = true
			break
		}
		select {
		case sem <- struct{}{}:
		case <-tctx.Done():
		}
		if tctx.Err() != nil {
			break
		}
		tr, err := r.begin(nextIndex(), false)
		if err != nil {
			<-sem
			mu.Lock()
			firstErr = err
			mu.Unlock()
			cancel()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t, err := r.finish(tctx, tr)
			if err == nil {
				err = r.save(ctx, st, t)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				cancel()
				return
			}
			finished++
			if t.Status == store.TrialFailed {
				failed++
			}
			if opts.Progress != nil {
				opts.Progress(Progress{Done: finished, Total: want, Failed: failed, Trial: t})
			}
		}()
	}
	wg.Wait()
	if firstErr != nil && ctx.Err() == nil {
		return nil, firstErr
	}

	// The run's context may be cancelled (Ctrl-C); the summary and the
	// campaign's status are still written.
	sctx := context.WithoutCancel(ctx)
	all, err := st.Trials(sctx, camp.ID)
	if err != nil {
		return nil, err
	}
	summarise(sum, all)
	sum.States = len(bt.Catalog.States)
	sum.Seconds = time.Since(start).Seconds()
	status := store.StatusDone
	if ctx.Err() != nil {
		sum.Stopped = true
		status = store.StatusInterrupted
	}
	if err := st.SetCampaignStatus(sctx, camp.ID, status); err != nil {
		return nil, err
	}
	return sum, nil
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
func summarise(sum *Summary, trials []*record.Trial) {
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
		case store.TrialFailed:
			sum.FailedTrials++
		case store.TrialError:
			sum.ErrorTrials++
		}
		durations = append(durations, t.End.Sub(t.Start).Seconds())
	}
	sort.Float64s(durations)
	if n := len(durations); n > 0 {
		sum.MedianTrial = durations[n/2]
	}
	sum.Findings = len(report.Cluster(trials))
	sum.StatesEntered = len(entered)
}

func openCampaign(ctx context.Context, st *store.Store, cfg *config.Config, polName string, resume bool) (*store.Campaign, error) {
	hash := cfg.Hash()
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
	id, err := st.CreateCampaign(ctx, c)
	if err != nil {
		return nil, err
	}
	return st.Campaign(ctx, id)
}

func faultKinds(names []string) ([]policy.Kind, error) {
	var ks []policy.Kind
	for _, n := range names {
		k, err := policy.ParseKind(n)
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
	data, err := st.GetBlob(ctx, campaign, blobPolicy)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.Restore(data)
}

func loadBaseline(ctx context.Context, st *store.Store, campaign int64) (*check.Baseline, error) {
	b := &check.Baseline{}
	data, err := st.GetBlob(ctx, campaign, blobBaseline)
	if errors.Is(err, store.ErrNotFound) {
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, b); err != nil {
		return nil, fmt.Errorf("decode log baseline: %w", err)
	}
	return b, nil
}

// trialDir is where a trial's data and logs go.
func trialDir(cfg *config.Config, id string) string {
	return filepath.Join(cfg.Path(cfg.WorkDir), "trials", id)
}

// socketPath returns a short path for the controller's socket: unix socket
// paths are limited to about 100 bytes, and work dirs can be deep.
func socketPath() (string, error) {
	dir, err := os.MkdirTemp("", "gofault-")
	if err != nil {
		return "", fmt.Errorf("controller socket dir: %w", err)
	}
	return filepath.Join(dir, "ctl.sock"), nil
}

// Replay re-runs one recorded trial with the same faults, injected at the
// same sites on the same nodes when the same call stacks reach them, and
// judges it with the same checkers. The replayed trial is saved as a
// campaign of its own, named after the original. bt is the build to run
// (from Build; replaying several times builds once); nil builds it.
func Replay(ctx context.Context, cfg *config.Config, st *store.Store, orig *record.Trial, bt *Built, log *slog.Logger) (*record.Trial, []string, error) {
	if log == nil {
		log = slog.Default()
	}
	if bt == nil {
		var err error
		if bt, err = Build(ctx, cfg, log); err != nil {
			return nil, nil, err
		}
	}
	pol := policy.NewReplay(bt.Catalog, orig.Injections)
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("encode config: %w", err)
	}
	id, err := st.CreateCampaign(ctx, store.Campaign{
		Name: cfg.Name + " replay " + orig.ID, ConfigHash: cfg.Hash(), Policy: pol.Name(), Seed: orig.Seed, Config: string(data),
	})
	if err != nil {
		return nil, nil, err
	}
	r, err := newRunner(cfg, bt, id, pol, &check.Baseline{}, log)
	if err != nil {
		return nil, nil, err
	}
	defer r.close()
	// The original campaign's log baseline judges the replay as it judged
	// the original.
	if b, err := loadBaseline(ctx, st, CampaignOf(orig.ID)); err == nil {
		r.baseline = b
	}
	tr, err := r.trial(ctx, orig.Index, false)
	if err != nil {
		return nil, nil, err
	}
	if err := st.SaveTrial(context.WithoutCancel(ctx), id, tr); err != nil {
		return nil, nil, err
	}
	status := store.StatusDone
	if err := st.SetCampaignStatus(context.WithoutCancel(ctx), id, status); err != nil {
		return nil, nil, err
	}
	return tr, pol.Missing(), nil
}

// CampaignOf parses the campaign ID out of a trial ID made by
// store.TrialID ("3-17" → 3); 0 if it is not one.
func CampaignOf(trialID string) int64 {
	var id int64
	var idx int
	fmt.Sscanf(trialID, "%d-%d", &id, &idx)
	return id
}
