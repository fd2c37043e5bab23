package campaign

// Judging one executed trial: the one place that turns a trial's record
// and logs into its verdicts and status, for a campaign's runner and for
// re-judging a stored campaign (Rejudge), so the two never drift.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
)

// notJudgedPrefix starts the line a trial's Err gets when its workload
// could not judge it (record.StatusNotJudged).
const notJudgedPrefix = "not judged: "

// judgeEnv is what judges a campaign's trials beside the config's
// checker settings and the trial itself.
type judgeEnv struct {
	// baseline is the log baseline the trial is judged against.
	baseline *record.LogBaseline
	// bound is the hang, gray and slow checkers' progress bound.
	bound time.Duration
	// netSites are the catalog's network sites (check.Input.NetSites).
	netSites map[string]bool
	// slowWaits are the profile's checkers.waits_for_slow.
	slowWaits []check.SlowWait
	// visualize draws the linearizability checker's visualisations into
	// the trial's dir (off for a read-only re-judge).
	visualize bool
}

// trialJudged says how a trial was run, for its judge: baseline, a
// fault-free baseline trial (not judged by the log checker, which it
// teaches); timedOut, the workload was killed at its timeout.
type trialJudged struct {
	baseline bool
	timedOut bool
}

// judgeTrial judges executed trial tr (its record, and its nodes' logs in
// tr.Dir) with cfg's enabled checkers in env, and sets its Verdicts and
// Status; a trial its workload could not judge gets the reason as the
// first line of its Err. With env.visualize the checkers' visualisations
// are written into tr.Dir.
func judgeTrial(ctx context.Context, cfg *config.Config, tr *record.Trial, how trialJudged, env judgeEnv) error {
	checkers := cfg.Checkers.Enabled
	if how.baseline {
		// A baseline trial teaches the log checker; it is not judged by it.
		checkers = without(checkers, check.NameLog)
	}
	j, err := check.Run(ctx, &check.Input{
		Trial:                  tr,
		Logs:                   os.DirFS(tr.Dir),
		Baseline:               env.baseline,
		Progress:               env.bound,
		LinearizabilityTimeout: cfg.Checkers.Linearizability,
		RecoveryBound:          cfg.Checkers.RecoveryBound,
		LogIgnore:              cfg.Checkers.LogIgnore,
		LogFormat:              cfg.Checkers.LogFormat,
		LogDowngraded:          cfg.Checkers.LogDowngraded,
		NetSites:               env.netSites,
		SlowWaits:              env.slowWaits,
		WorkloadTimedOut:       how.timedOut,
		Visualize:              env.visualize,
	}, checkers)
	if err != nil {
		return fmt.Errorf("trial %s: checkers: %w", tr.ID, err)
	}
	tr.Verdicts = j.Verdicts
	if env.visualize {
		writeVisuals(tr, j.Visuals)
	}
	reason, notJudged := check.NotJudgedReason(tr.Client)
	tr.Status = check.TrialStatus(tr.Verdicts, tr.Err, len(tr.Injections), notJudged)
	if tr.Status == record.StatusNotJudged {
		tr.Err = joinErr(notJudgedPrefix+reason, tr.Err)
	}
	return nil
}

// unjudgedErr is a judged trial's Err as it was before judgeTrial: without
// the line that says why its workload could not judge it.
func unjudgedErr(err string) string {
	if !strings.HasPrefix(err, notJudgedPrefix) {
		return err
	}
	_, rest, _ := strings.Cut(err, "\n")
	return rest
}

// joinErr joins a trial's error lines, skipping empty ones.
func joinErr(first, rest string) string {
	if rest == "" {
		return first
	}
	return first + "\n" + rest
}
