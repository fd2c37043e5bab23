package campaign

// Replay: a recorded trial run again with its faults, the use case that
// gofault replay and the dashboard's Replay button share.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// ReplayOptions say which trial Replay runs again, how often, and where
// its output goes.
type ReplayOptions struct {
	// Trial is the ID of the trial to replay ("3-17").
	Trial string
	// Runs is how many times to replay it; 0 means once.
	Runs int
	// Lock, if set, locks the work dir of the original's config for the
	// replay and returns its release.
	Lock func(cfg *config.Config) (release func(), err error)
	// Build, if set, returns what the replays run for the original's
	// config (a bundle's binaries, a build forced afresh); nil is
	// build.Binaries, which reuses an unchanged build. It is called once
	// for all the runs.
	Build func(ctx context.Context, cfg *config.Config) (*build.Built, error)
	// Text, if set, gets each run's result for people as soon as it is
	// judged (ReplayRun.WriteText) and, after several runs, their tally:
	// what gofault replay prints.
	Text io.Writer
	// Warn, if set, gets a line for each fault of the original that
	// cannot be replayed.
	Warn io.Writer
	// Logger gets the build's and the trials' logs; nil is slog.Default().
	Logger *slog.Logger
}

// ReplayRun is one replay of a trial and what recurred in it: the JSON
// output of gofault replay.
type ReplayRun struct {
	Original string `json:"original"`
	// Reproduced: every failure of the original recurred.
	Reproduced bool `json:"reproduced"`
	// Recurred and NotReproduced are the original's failures
	// ("checker: symptom") whose checker failed again, and did not.
	Recurred      []string `json:"recurred,omitempty"`
	NotReproduced []string `json:"not_reproduced,omitempty"`
	// NotInjected are the original's faults this run did not inject
	// (check.NotInjected): a run without them replayed nothing.
	NotInjected []string      `json:"not_injected,omitempty"`
	Trial       *record.Trial `json:"trial"`
}

// Replayed is what Replay's runs showed: the JSON output of gofault replay
// --runs N, N > 1.
type Replayed struct {
	Original string `json:"original"`
	Runs     int    `json:"runs"`
	// Reproduced counts the runs where every failure recurred; Recurred
	// those where at least one did.
	Reproduced int         `json:"reproduced"`
	Recurred   int         `json:"recurred"`
	Results    []ReplayRun `json:"results"`
	// Orig is the trial replayed.
	Orig *record.Trial `json:"-"`
}

// ErrNotReproduced matches (errors.Is) Replayed.Err's error: a replay ran
// but showed none of the original's failures.
var ErrNotReproduced = errors.New("not reproduced")

// Replay runs the recorded trial opts.Trial again, opts.Runs times, with
// its campaign's stored config and one build for every run, each run with
// the original's faults (replayOnce), and says what recurred. It stops
// early, with the runs done so far, when ctx is cancelled; with none done
// it returns ctx's error.
func Replay(ctx context.Context, st *store.Store, opts ReplayOptions) (*Replayed, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	cid, _, ok := record.ParseTrialID(opts.Trial)
	if !ok {
		return nil, fmt.Errorf("%q is not a trial ID of the form <campaign>-<index>", opts.Trial)
	}
	orig, err := st.Trial(ctx, opts.Trial)
	if err != nil {
		return nil, fmt.Errorf("trial %s: %w", opts.Trial, err)
	}
	camp, err := st.Campaign(ctx, cid)
	if err != nil {
		return nil, err
	}
	var cfg config.Config
	if err := json.Unmarshal([]byte(camp.Config), &cfg); err != nil {
		return nil, fmt.Errorf("campaign %d: stored config: %w", camp.ID, err)
	}
	if opts.Lock != nil {
		release, err := opts.Lock(&cfg)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	var bt *build.Built
	if opts.Build != nil {
		bt, err = opts.Build(ctx, &cfg)
	} else {
		bt, err = build.Binaries(ctx, &cfg, build.Options{}, log)
	}
	if err != nil {
		return nil, err
	}
	var runs []ReplayRun
	for i := 0; i < max(1, opts.Runs) && ctx.Err() == nil; i++ {
		tr, missing, err := replayOnce(ctx, &cfg, st, orig, bt, log)
		if err != nil {
			return nil, err
		}
		if i == 0 && opts.Warn != nil {
			for _, m := range missing {
				fmt.Fprintf(opts.Warn, "warning: cannot replay: %s\n", m)
			}
		}
		run := judgeReplay(orig, tr, bt.Catalog.Role)
		runs = append(runs, run)
		if opts.Text != nil {
			run.WriteText(opts.Text, orig)
		}
	}
	if len(runs) == 0 {
		return nil, ctx.Err()
	}
	r := countRuns(orig, runs)
	if opts.Text != nil && opts.Runs > 1 {
		fmt.Fprintf(opts.Text, "%s: reproduced in %d of %d runs, some failure recurred in %d\n", orig.ID, r.Reproduced, r.Runs, r.Recurred)
	}
	return r, nil
}

// judgeReplay says what of orig recurred in its replay tr (role: the
// replay build's catalog role, which says whose faults struck the leader).
func judgeReplay(orig, tr *record.Trial, role *catalog.Role) ReplayRun {
	recurred, lost := check.Recurrence(orig, tr)
	return ReplayRun{Original: orig.ID, Reproduced: len(recurred) > 0 && len(lost) == 0,
		Recurred: recurred, NotReproduced: lost, NotInjected: check.NotInjected(orig, tr, role), Trial: tr}
}

// countRuns counts the runs of orig's replay that reproduced it, wholly or in
// part.
func countRuns(orig *record.Trial, runs []ReplayRun) *Replayed {
	r := &Replayed{Original: orig.ID, Runs: len(runs), Results: runs, Orig: orig}
	for _, run := range runs {
		if run.Reproduced {
			r.Reproduced++
		}
		if len(run.Recurred) > 0 {
			r.Recurred++
		}
	}
	return r
}

// Err is an error matching ErrNotReproduced when none of the original's
// failures recurred in any run; nil otherwise, and for an original that
// did not fail.
func (r *Replayed) Err() error {
	if r.Recurred > 0 || len(r.Results) == 0 || len(r.Results[0].NotReproduced) == 0 {
		return nil
	}
	why := ""
	missed := 0
	for _, run := range r.Results {
		if len(run.NotInjected) > 0 {
			missed++
		}
	}
	if missed > 0 {
		why = fmt.Sprintf("; in %d of them the original's faults were not all injected (the workload did not get as far; try --runs)", missed)
	}
	return fmt.Errorf("%w: none of %s's failures recurred in %d run(s) (%s)%s", ErrNotReproduced, r.Original, len(r.Results),
		strings.Join(r.Results[0].NotReproduced, "; "), why)
}

// WriteText writes the run for people: what ran, what failed, where the
// logs are, and on its last line the verdict.
func (r ReplayRun) WriteText(w io.Writer, orig *record.Trial) {
	tr := r.Trial
	fmt.Fprintf(w, "replayed %s as %s: %s, %d injections (original: %s, %d injections)\n",
		orig.ID, tr.ID, tr.Status, len(tr.Injections), orig.Status, len(orig.Injections))
	for _, v := range tr.Verdicts {
		if v.Failed {
			fmt.Fprintf(w, "  [%s] %s\n", v.Checker, v.Symptom)
		}
	}
	fmt.Fprintf(w, "  logs %s\n", tr.Dir)
	for _, f := range r.NotInjected {
		fmt.Fprintf(w, "  not injected: %s (this run never reached it)\n", f)
	}
	switch {
	case r.Reproduced:
		fmt.Fprintln(w, "reproduced")
	case len(r.Recurred) > 0:
		fmt.Fprintf(w, "partly reproduced: did not recur: %s\n", strings.Join(r.NotReproduced, "; "))
	case len(r.NotReproduced) > 0:
		fmt.Fprintf(w, "not reproduced: did not recur: %s\n", strings.Join(r.NotReproduced, "; "))
	}
}

// replayOnce re-runs one recorded trial with the same faults, injected at
// the same sites on the same nodes when the same call stacks reach them,
// and judges it with the same checkers. The replayed trial is saved as a
// campaign of its own, named after the original. It also returns the
// original's faults that cannot be replayed (policy.Replay.Missing).
func replayOnce(ctx context.Context, cfg *config.Config, st *store.Store, orig *record.Trial, bt *build.Built, log *slog.Logger) (*record.Trial, []string, error) {
	pol := policy.NewReplay(bt.Catalog, orig.Injections)
	if c, _, ok := record.ParseTrialID(orig.ID); ok && bt.Key != "" {
		// The same code as the original: a stack is matched line for
		// line, so two calls of one function from one caller (the two
		// writes of a snapshot) are not confused. Other code (a fix being
		// tried) is matched by functions only.
		if key, err := st.BuildKey(ctx, c); err == nil && key == bt.Key {
			pol.MatchLines()
		}
	}
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
	r, err := newRunner(cfg, bt, id, pol, &record.LogBaseline{}, log)
	if err != nil {
		return nil, nil, err
	}
	defer r.close()
	// The original campaign's log baseline judges the replay as it judged
	// the original.
	if c, _, ok := record.ParseTrialID(orig.ID); ok {
		if b, err := st.Baseline(ctx, c); err == nil {
			r.baseline = b
		}
		r.bound = replayBound(ctx, st, !cfg.Checkers.Progress.Auto(), c, r.bound)
	}
	tr, err := r.trial(ctx, orig.Index, false)
	if err != nil {
		return nil, nil, err
	}
	if err := st.SaveTrial(context.WithoutCancel(ctx), id, tr); err != nil {
		return nil, nil, err
	}
	if err := r.keep.tidy(tr.Dir, tr.Status == record.StatusFailed, hitMembers(tr)); err != nil {
		return nil, nil, err
	}
	if err := st.SetCampaignStatus(context.WithoutCancel(ctx), id, store.StatusDone); err != nil {
		return nil, nil, err
	}
	return tr, pol.Missing(), nil
}
