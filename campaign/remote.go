package campaign

// Fault trials on other machines: the coordinator's side hands a trial to
// Options.Remote (an engine.RemoteJob) and learns from what comes back as
// from a local trial; the worker's side (Host) runs it. The transport is
// package fleet's; the run loop is package engine's.

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// runRemote runs fault trial index on opts.Remote and lets the campaign
// learn from it as from a local trial.
func (s *campaignRun) runRemote(ctx context.Context, index int) (*record.Trial, error) {
	id := trialIDOf(s.r, index)
	res, err := s.opts.Remote.Run(ctx, engine.RemoteJob{
		Campaign: s.camp.ID, Index: index, ID: id, Dir: trialDir(s.opts.Config, id),
		Bound: s.r.bound, Baseline: s.r.baselineNow(), Policy: s.r.ctl, PolicyName: s.pol.Name(),
	})
	if err != nil {
		return nil, err
	}
	tr := res.Trial
	if tr == nil || tr.Index != index || tr.ID != id {
		return nil, fmt.Errorf("remote trial %s: the worker %s sent back another trial", id, res.Worker)
	}
	s.opts.Logger.Info("remote trial recorded", "trial", id, "worker", res.Worker, "status", tr.Status)
	s.r.learn(false, tr, controller.Result{Blocks: res.Blocks})
	return tr, nil
}

// Host runs the trials of one campaign for its coordinator on a worker
// machine (an engine.Host): a runner whose controller asks pol (the
// coordinator's policy, by proxy) and never learns.
type Host struct {
	r *runner
}

// NewHost sets up the runner for the trials of campaign on this machine:
// cfg is the bundle's config with this machine's work dir, bt its
// binaries, pol the proxy of the coordinator's policy.
func NewHost(cfg *config.Config, bt *build.Built, campaign int64, pol policy.Policy, log *slog.Logger) (*Host, error) {
	r, err := newRunner(cfg, bt, campaign, pol, &record.LogBaseline{}, log)
	if err != nil {
		return nil, err
	}
	return &Host{r: r}, nil
}

// Trial runs fault trial job.Index and judges it against job.Baseline
// with the progress bound job.Bound. A failed trial's data dirs are
// packed as a local trial's (the members it hit whole); a passing trial's
// are removed. It returns the record, whose Dir holds the trial's files
// (its logs and its pack), and the coverage blocks it covered.
func (h *Host) Trial(ctx context.Context, job engine.RemoteJob) (*engine.RemoteResult, error) {
	t, err := h.r.begin(job.Index, false)
	if err != nil {
		return nil, err
	}
	tr, res, err := h.r.judged(ctx, t, func() *record.LogBaseline { return job.Baseline }, job.Bound)
	if err != nil {
		return nil, err
	}
	tr.Blocks = len(res.Blocks)
	if tr.Status == record.StatusFailed {
		if _, err := packTrial(tr.Dir, hitMembers(tr)); err != nil {
			return nil, err
		}
	} else if err := pruneData(tr.Dir); err != nil {
		return nil, err
	}
	return &engine.RemoteResult{Trial: tr, Blocks: res.Blocks}, nil
}

// Close stops the host's controller.
func (h *Host) Close() { h.r.close() }

// trialIDOf is the ID of trial index of r's campaign.
func trialIDOf(r *runner, index int) string { return record.TrialID(r.campaign, index) }
