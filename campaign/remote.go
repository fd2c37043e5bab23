package campaign

// Trials run on other machines: what a coordinator hands a worker
// (RemoteJob), what comes back (RemoteResult), and the worker's side
// (Host). The transport is package fleet's; the run loop stays Run's.

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// Remote runs fault trials of a campaign on other machines
// (Options.Remote): Run hands it a trial when none of the campaign's
// local clusters (Options.Parallel) is free.
type Remote interface {
	// Slots is how many trials it runs at once at most.
	Slots() int
	// Run runs job on some worker and returns its judged record once the
	// trial's files are under job.Dir. It returns an error only when ctx
	// is done or the trial cannot be run anywhere.
	Run(ctx context.Context, job RemoteJob) (*RemoteResult, error)
}

// RemoteJob is one fault trial for a worker, with what it needs to judge
// the trial as the coordinator would have.
type RemoteJob struct {
	Campaign int64
	Index    int
	ID       string
	// Dir is where the coordinator keeps the trial's files (its trial
	// dir), so reports, --restore and replay find them as a local
	// trial's.
	Dir string
	// Bound is the hang and gray checkers' progress bound; Baseline the
	// log baseline learned so far.
	Bound    time.Duration
	Baseline *record.LogBaseline
	// Policy serves the worker's policy calls: the coordinator's policy,
	// serialised with the calls of its local trials; PolicyName is its
	// name.
	Policy     PolicyCalls
	PolicyName string
	// Test and Reach are a test campaign's (gofault test): the test the
	// trial runs and its live sites (controller.TrialSpec.Reach, never
	// nil there); empty for a cluster campaign's trial.
	Test  string
	Reach []uint32
	// Expected is the trial's policy.TrialInfo.Expected (the
	// coordinator's policy plans the trial; it does not travel).
	Expected int
}

// PolicyCalls are a policy's per-trial calls made on behalf of a trial run
// elsewhere (*controller.Controller implements them); the outcome is told
// when the result arrives.
type PolicyCalls interface {
	PlanTrial(info policy.TrialInfo) policy.Plan
	Decide(req *policy.Request) policy.Decision
	Observe(ob *policy.Observation) policy.Partition
}

// RemoteResult is what a worker ran: the judged trial (Dir rewritten to
// the coordinator's RemoteJob.Dir) and the coverage blocks it covered.
type RemoteResult struct {
	Trial  *record.Trial
	Blocks []uint32
	// Worker names the worker that ran it.
	Worker string
	// Members, MemberRequests and MemberSends are a test trial's
	// in-process member counts (controller.Result's, gofault test with a
	// member rule), which its record does not carry.
	Members        []controller.Member
	MemberRequests int
	MemberSends    int
}

// runRemote runs fault trial index on opts.Remote and lets the campaign
// learn from it as from a local trial.
func (s *execution) runRemote(ctx context.Context, index int) (*record.Trial, error) {
	id := trialIDOf(s.r, index)
	res, err := s.opts.Remote.Run(ctx, RemoteJob{
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
	s.r.learn(index, false, tr, controller.Result{Requests: tr.Requests, Injections: tr.Injections, Timeouts: tr.Timeouts, Blocks: res.Blocks})
	return tr, nil
}

// Host runs the trials of one campaign for its coordinator on a worker
// machine: a runner whose controller asks pol (the coordinator's policy,
// by proxy) and never learns.
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

// Trial runs fault trial index and judges it against baseline with the
// progress bound. A failed trial's data dirs are packed as a local
// trial's (the members it hit whole); a passing trial's are removed. It
// returns the record, whose Dir holds the trial's files (its logs and its
// pack), and the coverage blocks it covered.
func (h *Host) Trial(ctx context.Context, index int, baseline *record.LogBaseline, bound time.Duration) (*record.Trial, []uint32, error) {
	t, err := h.r.begin(index, false)
	if err != nil {
		return nil, nil, err
	}
	tr, res, err := h.r.judged(ctx, t, func() *record.LogBaseline { return baseline }, bound)
	if err != nil {
		return nil, nil, err
	}
	tr.Blocks = len(res.Blocks)
	if tr.Status == record.StatusFailed {
		if _, err := packTrial(tr.Dir, hitMembers(tr)); err != nil {
			return nil, nil, err
		}
	} else if err := pruneData(tr.Dir); err != nil {
		return nil, nil, err
	}
	return tr, res.Blocks, nil
}

// Close stops the host's controller.
func (h *Host) Close() { h.r.close() }

// trialIDOf is the ID of trial index of r's campaign.
func trialIDOf(r *runner, index int) string { return record.TrialID(r.campaign, index) }
