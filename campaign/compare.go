package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"sort"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// CompareOptions tune a policy comparison.
type CompareOptions struct {
	Config   *config.Config
	Policies []string
	// Seeds is the number of campaigns per policy, with seeds 1..Seeds.
	Seeds int
	// Trials is the number of fault trials per campaign.
	Trials   int
	Parallel int
	Logger   *slog.Logger
	// BeforeCampaign, if set, is called before each campaign.
	BeforeCampaign func(policy string, seed int64)
	// Built, if set, is used instead of building the target.
	Built *build.Built
}

// PolicyResult is one policy's side of a comparison. A finding is named by
// its checker and symptom ("hang: client n2/0 made no progress"), so the
// same bug reached through different fault sites counts once.
type PolicyResult struct {
	// Findings is the number of distinct findings over all seeds.
	Findings int `json:"findings"`
	// MedianTrialsToFinding is, per finding, the median over seeds of the
	// fault trials run until it first showed (a seed that never showed it
	// counts as Trials+1, so a finding missed by most seeds has a median
	// above Trials).
	MedianTrialsToFinding map[string]float64 `json:"median_trials_to_finding"`
	// MedianMinutesToFinding is the same in minutes of campaign time;
	// null when most seeds did not find it.
	MedianMinutesToFinding map[string]*float64 `json:"median_minutes_to_finding"`
	// FoundIn counts, per finding, the seeds that found it.
	FoundIn map[string]int `json:"found_in_seeds"`
	// Campaigns are the campaign IDs in the store, one per seed.
	Campaigns []int64 `json:"campaigns"`
}

// Comparison is the result of Compare, keyed by policy.
type Comparison struct {
	Policies map[string]*PolicyResult
	Seeds    int
	Trials   int
	DB       string
}

// MarshalJSON writes the comparison as an object keyed by policy.
func (c *Comparison) MarshalJSON() ([]byte, error) { return json.Marshal(c.Policies) }

// Compare runs Seeds campaigns of Trials fault trials for each policy on one
// build and one fault-free log baseline, and reports how many distinct
// findings each policy found and how soon.
func Compare(ctx context.Context, opts CompareOptions) (*Comparison, error) {
	cfg := opts.Config
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	bt := opts.Built
	if bt == nil {
		var err error
		if bt, err = build.Binaries(ctx, cfg, build.Options{}, log); err != nil {
			return nil, err
		}
	}
	// One fault-free campaign teaches the log baseline every run shares.
	none := *cfg
	none.Policy.Name = "none"
	sum, err := Run(ctx, Options{Config: &none, Trials: 1, Parallel: opts.Parallel, Built: bt, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("baseline campaign: %w", err)
	}
	st, err := store.Open(cfg.Path(cfg.Store.DB))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	baseline, err := st.Baseline(ctx, sum.Campaign)
	if err != nil {
		return nil, err
	}

	cmp := &Comparison{Policies: map[string]*PolicyResult{}, Seeds: opts.Seeds, Trials: opts.Trials, DB: st.Path()}
	for _, pol := range opts.Policies {
		res := &PolicyResult{}
		trials := map[string][]float64{}
		minutes := map[string][]float64{}
		for seed := int64(1); seed <= int64(opts.Seeds); seed++ {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if opts.BeforeCampaign != nil {
				opts.BeforeCampaign(pol, seed)
			}
			c := *cfg
			c.Policy.Name, c.Policy.Seed = pol, seed
			// Each run starts without the memory of the others (they share
			// one store): the comparison is of policies, not of histories.
			c.Policy.Memory = config.MemoryOff
			s, err := Run(ctx, Options{Config: &c, Trials: opts.Trials, Parallel: opts.Parallel, Built: bt, Baseline: baseline, Logger: log})
			if err != nil {
				return nil, fmt.Errorf("%s seed %d: %w", pol, seed, err)
			}
			res.Campaigns = append(res.Campaigns, s.Campaign)
			ts, err := st.Trials(ctx, s.Campaign)
			if err != nil {
				return nil, err
			}
			for name, at := range firstFindings(ts, report.Options{GenericSites: c.Checkers.GenericSites}) {
				trials[name] = append(trials[name], float64(at.trials))
				minutes[name] = append(minutes[name], at.minutes)
			}
		}
		res.MedianTrialsToFinding = map[string]float64{}
		res.MedianMinutesToFinding = map[string]*float64{}
		res.FoundIn = map[string]int{}
		for name, xs := range trials {
			res.FoundIn[name] = len(xs)
			res.MedianTrialsToFinding[name] = censoredMedian(xs, opts.Seeds, float64(opts.Trials+1))
			if m := censoredMedian(minutes[name], opts.Seeds, math.Inf(1)); !math.IsInf(m, 1) {
				res.MedianMinutesToFinding[name] = &m
			} else {
				res.MedianMinutesToFinding[name] = nil
			}
		}
		res.Findings = len(trials)
		cmp.Policies[pol] = res
	}
	return cmp, nil
}

// firstFind is when a finding first showed in a campaign.
type firstFind struct {
	trials  int     // fault trials run up to and including it
	minutes float64 // campaign time up to the end of that trial
}

// firstFindings returns, per finding ("checker: symptom", as report.New
// groups them: faults' findings only, not fault-free failures or generic
// consequences), when it first showed among a campaign's trials (baseline
// trials do not count as fault trials).
func firstFindings(ts []*record.Trial, opts report.Options) map[string]firstFind {
	out := map[string]firstFind{}
	if len(ts) == 0 {
		return out
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Index < ts[j].Index })
	start := ts[0].Start
	at := map[string]firstFind{} // trial ID -> fault trials up to it, minutes
	n := 0
	for _, t := range ts {
		if t.Start.Before(start) {
			start = t.Start
		}
	}
	for _, t := range ts {
		if t.Policy != baselinePolicy {
			n++
		}
		at[t.ID] = firstFind{trials: n, minutes: t.End.Sub(start).Minutes()}
	}
	for _, f := range report.New(ts, opts).Findings {
		name := f.Checker + ": " + f.Symptom
		for _, id := range f.Trials {
			if first, ok := out[name]; !ok || at[id].trials < first.trials {
				out[name] = at[id]
			}
		}
	}
	return out
}

// censoredMedian is the median of xs padded to n values with missing (the
// seeds that did not find the finding).
func censoredMedian(xs []float64, n int, missing float64) float64 {
	all := append([]float64(nil), xs...)
	for len(all) < n {
		all = append(all, missing)
	}
	sort.Float64s(all)
	if len(all) == 0 {
		return missing
	}
	if len(all)%2 == 1 {
		return all[len(all)/2]
	}
	return (all[len(all)/2-1] + all[len(all)/2]) / 2
}
