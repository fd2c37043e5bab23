package campaign

// Re-judging a campaign: this gofault's checkers over the stored trials of
// a campaign that ran earlier (gofault report --rejudge), to show what a
// checker's fix changes on the campaign that found its defect. It reads
// the store and the trial dirs and writes neither.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
	"golang.org/x/sync/errgroup"
)

// Rejudged is what re-judging campaigns' stored trials with this
// gofault's checkers showed.
type Rejudged struct {
	// Campaigns are the re-judged campaigns, each with what its checkers
	// were given.
	Campaigns []RejudgedCampaign `json:"campaigns"`
	// Trials counts the trials re-judged; Unchanged those whose status and
	// failing verdicts are as stored; FailedToOK, OKToFailed and Other
	// split the changed ones.
	Trials     int `json:"trials"`
	Unchanged  int `json:"unchanged"`
	FailedToOK int `json:"failed_to_ok"`
	OKToFailed int `json:"ok_to_failed"`
	Other      int `json:"other"`
	// Changed are the trials whose judgement changed, in campaign and
	// index order.
	Changed []TrialChange `json:"changed"`
	// NotRejudged are the trials that could not be re-judged, and why.
	NotRejudged []NotRejudged `json:"not_rejudged"`
	// Gone are the findings (report.New, one campaign at a time) the
	// stored judgements made and the new ones do not; Appeared the
	// reverse.
	Gone     []FindingChange `json:"gone"`
	Appeared []FindingChange `json:"appeared"`
}

// RejudgedCampaign is one re-judged campaign and what its checkers were
// given beside the stored trials.
type RejudgedCampaign struct {
	ID int64 `json:"id"`
	// Inputs say, one line each, where the checkers' inputs came from and
	// which are approximated (the log baseline, the progress bound, the
	// network sites, the workload's timeouts).
	Inputs []string `json:"inputs"`
}

// Judgement is a trial's status and its failing checkers with their
// symptoms ("checker: symptom").
type Judgement struct {
	Status  record.Status `json:"status"`
	Failing []string      `json:"failing,omitempty"`
}

// TrialChange is a trial whose judgement changed.
type TrialChange struct {
	Trial string    `json:"trial"`
	Old   Judgement `json:"old"`
	New   Judgement `json:"new"`
}

// NotRejudged is a trial that could not be re-judged.
type NotRejudged struct {
	Trial string `json:"trial"`
	Why   string `json:"why"`
}

// FindingChange is a finding that went or appeared: its ID (stable: a
// hash of its checker and symptom), campaign, whether it is a fault-free
// failure (report.Report.FaultFree), checker, symptom and trials.
type FindingChange struct {
	ID        string   `json:"id"`
	Campaign  int64    `json:"campaign"`
	FaultFree bool     `json:"fault_free,omitempty"`
	Checker   string   `json:"checker"`
	Symptom   string   `json:"symptom"`
	Trials    []string `json:"trials"`
}

// Rejudge re-judges the stored trials of the campaigns ids of st with
// cfg's checker settings (this gofault's checkers and the current profile,
// --set included), as the runner judged them (judgeTrial), and reports
// the trials whose judgement changed and the findings that went or
// appeared. What the store does not hold is recovered or approximated, and
// RejudgedCampaign.Inputs says how: the log baseline is the campaign's
// final stored one (the runner judged each trial against the baseline
// learned until then); the progress bound is checkers.progress when set,
// else the campaign's stored calibrated bound raised to this gofault's
// floor (progressFloor); the network sites come from the catalog of the
// last build in the work dir; a workload killed at its timeout is known
// from its trial's error. It writes neither st nor the trial dirs.
func Rejudge(ctx context.Context, st *store.Store, cfg *config.Config, ids []int64) (*Rejudged, error) {
	waits, err := slowWaits(cfg.Checkers.WaitsForSlow)
	if err != nil {
		return nil, err
	}
	cat, catKey, catErr := build.LastCatalog(cfg)
	out := &Rejudged{Changed: []TrialChange{}, NotRejudged: []NotRejudged{}, Gone: []FindingChange{}, Appeared: []FindingChange{}}
	opts := report.Options{GenericSites: cfg.Checkers.GenericSites}
	for _, id := range ids {
		camp, err := st.Campaign(ctx, id)
		if err != nil {
			return nil, err
		}
		baseline, err := st.Baseline(ctx, id)
		if err != nil {
			return nil, err
		}
		trials, err := st.Trials(ctx, id)
		if err != nil {
			return nil, err
		}
		rc := RejudgedCampaign{ID: id, Inputs: []string{"log baseline: the campaign's final stored one (the runner judged each trial against the baseline learned until it ran)"}}
		env := judgeEnv{baseline: baseline, slowWaits: waits}
		var how string
		env.bound, how = rejudgeBound(cfg, camp)
		rc.Inputs = append(rc.Inputs, fmt.Sprintf("progress bound %s (%s)", env.bound, how))
		switch key, err := st.BuildKey(ctx, id); {
		case catErr != nil:
			rc.Inputs = append(rc.Inputs, fmt.Sprintf("network sites: none (approximated: %v)", catErr))
		case err == nil && key == catKey:
			env.netSites = netSites(cat)
			rc.Inputs = append(rc.Inputs, "network sites: the catalog of the campaign's build")
		default:
			env.netSites = netSites(cat)
			rc.Inputs = append(rc.Inputs, "network sites: the catalog of the last build in the work dir, not the campaign's (approximated)")
		}
		rc.Inputs = append(rc.Inputs, `workload timeouts: a trial's error "workload timed out", or the workload's timeout event`)
		out.Campaigns = append(out.Campaigns, rc)
		now, whys, err := rejudgeAll(ctx, cfg, trials, env)
		if err != nil {
			return nil, err
		}
		for i, tr := range trials {
			if whys[i] != "" {
				out.NotRejudged = append(out.NotRejudged, NotRejudged{Trial: tr.ID, Why: whys[i]})
				continue
			}
			out.count(tr, now[i])
		}
		old, cur := findingsOf(report.New(trials, opts)), findingsOf(report.New(now, opts))
		out.Gone = append(out.Gone, missing(id, old, cur)...)
		out.Appeared = append(out.Appeared, missing(id, cur, old)...)
	}
	return out, nil
}

// rejudgeAll re-judges trials in env, as many at once as there are CPUs:
// now[i] is trials[i] re-judged, or trials[i] itself where whys[i] says
// why it could not be (rejudgeTrial).
func rejudgeAll(ctx context.Context, cfg *config.Config, trials []*record.Trial, env judgeEnv) (now []*record.Trial, whys []string, err error) {
	now, whys = make([]*record.Trial, len(trials)), make([]string, len(trials))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, tr := range trials {
		g.Go(func() error {
			nt, why, err := rejudgeTrial(gctx, cfg, tr, env)
			if nt == nil {
				nt = tr
			}
			now[i], whys[i] = nt, why
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return now, whys, nil
}

// rejudgeTrial re-judges a copy of stored trial tr in env, or says why it
// cannot: a trial whose cluster did not start was never judged, and one
// whose dir or node logs are gone has lost what the checkers read.
func rejudgeTrial(ctx context.Context, cfg *config.Config, tr *record.Trial, env judgeEnv) (*record.Trial, string, error) {
	switch {
	case strings.HasPrefix(tr.Err, clusterNotStarted):
		return nil, "never judged: the cluster did not start", nil
	case tr.Dir == "":
		return nil, "no trial dir recorded", nil
	}
	if _, err := os.Stat(tr.Dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "trial dir gone: " + tr.Dir, nil
		}
		return nil, "", fmt.Errorf("trial %s: %w", tr.ID, err)
	}
	var gone []string
	for _, n := range tr.Nodes {
		if n.Log == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(tr.Dir, filepath.Base(n.Log))); err != nil {
			gone = append(gone, filepath.Base(n.Log))
		}
	}
	if len(gone) > 0 {
		return nil, "logs missing: " + strings.Join(gone, ", "), nil
	}
	nt := *tr
	nt.Err = unjudgedErr(tr.Err)
	how := trialJudged{baseline: tr.Policy == baselinePolicy, timedOut: strings.Contains(nt.Err, workloadTimedOut)}
	if err := judgeTrial(ctx, cfg, &nt, how, env); err != nil {
		return nil, "", err
	}
	return &nt, "", nil
}

// rejudgeBound is the progress bound a campaign's trials are re-judged
// with, and how it was chosen: checkers.progress when cfg sets it, else
// the campaign's stored bound raised to this gofault's floor for cfg's
// timers, which is what the calibration that measured it would choose now
// (the bound is the measured failover's, never below the floor); the
// floor when none was stored.
func rejudgeBound(cfg *config.Config, camp *store.Campaign) (time.Duration, string) {
	if !cfg.Checkers.Progress.Auto() {
		return cfg.Checkers.Progress.Duration(), howExplicit
	}
	floor, floorHow := progressFloor(cfg.Faults.Timers)
	switch {
	case camp.Progress <= 0:
		return floor, "none stored; " + floorHow
	case camp.Progress < floor:
		return floor, fmt.Sprintf("stored %s (%s), raised to this gofault's %s", camp.Progress, camp.ProgressHow, floorHow)
	}
	return camp.Progress, "stored: " + camp.ProgressHow
}

// judgementOf is tr's status and failing verdicts.
func judgementOf(tr *record.Trial) Judgement {
	j := Judgement{Status: tr.Status}
	for _, v := range tr.Verdicts {
		if v.Failed {
			s := v.Checker + ": " + v.Symptom
			if len(v.Symptoms) > 1 {
				s += " (" + strings.Join(v.Symptoms, "; ") + ")"
			}
			j.Failing = append(j.Failing, s)
		}
	}
	return j
}

// count adds re-judged trial nt, stored as old, to r's tallies.
func (r *Rejudged) count(old, nt *record.Trial) {
	r.Trials++
	o, n := judgementOf(old), judgementOf(nt)
	if o.Status == n.Status && slices.Equal(o.Failing, n.Failing) {
		r.Unchanged++
		return
	}
	r.Changed = append(r.Changed, TrialChange{Trial: old.ID, Old: o, New: n})
	switch {
	case o.Status == record.StatusFailed && n.Status == record.StatusOK:
		r.FailedToOK++
	case o.Status == record.StatusOK && n.Status == record.StatusFailed:
		r.OKToFailed++
	default:
		r.Other++
	}
}

// findingsOf are a report's findings and fault-free failures (their IDs
// prefixed with faultFreeKey) by ID.
func findingsOf(rep report.Report) map[string]report.Finding {
	m := map[string]report.Finding{}
	for _, f := range rep.Findings {
		m[f.ID] = f
	}
	for _, f := range rep.FaultFree {
		m[faultFreeKey+f.ID] = f
	}
	return m
}

// faultFreeKey prefixes a fault-free failure's ID in findingsOf.
const faultFreeKey = "fault-free "

// missing are the findings of campaign id in a and not in b, in ID order.
func missing(id int64, a, b map[string]report.Finding) []FindingChange {
	var out []FindingChange
	for key, f := range a {
		if _, ok := b[key]; !ok {
			out = append(out, FindingChange{ID: f.ID, Campaign: id, FaultFree: strings.HasPrefix(key, faultFreeKey), Checker: f.Checker, Symptom: f.Symptom, Trials: f.Trials})
		}
	}
	slices.SortFunc(out, func(x, y FindingChange) int { return strings.Compare(x.ID, y.ID) })
	return out
}
