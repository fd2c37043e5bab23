package engine

// Trials run on other machines: what a coordinator hands a worker
// (RemoteJob), what comes back (RemoteResult), the coordinator's side of
// the transport (Remote, package fleet's) and the worker's side (Host). A
// cluster campaign's and a test campaign's trials travel alike.

import (
	"context"
	"time"

	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// Remote runs trials of a campaign on other machines: Run hands it a
// trial when none of the campaign's local slots (Schedule.Local) is free.
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
	// Again runs a test campaign's test twice in its process, the second
	// run with no fault (gofault test: a test that passed twice in one
	// process fault-free).
	Again bool
	// LeftChecked and Left are a test campaign's baseline of its leak
	// check: whether the test's fault-free runs reported what they left
	// running, and the keys of those goroutines (gotest.Leftovers).
	LeftChecked bool
	Left        []string
}

// Host runs the trials of one campaign on a worker machine for its
// coordinator (gofault worker): a cluster campaign's (campaign.NewHost)
// or a test campaign's (gotest.NewHost), under a controller whose policy
// is the coordinator's, by proxy; it never learns.
type Host interface {
	// Trial runs the trial job names (its Index, ID, Bound and Baseline;
	// a test campaign's Test, Reach and Expected) and judges it; the
	// result's Trial.Dir holds its files here. job.Policy is not asked:
	// the host's own controller decides.
	Trial(ctx context.Context, job RemoteJob) (*RemoteResult, error)
	// Close stops the host's controller.
	Close()
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
