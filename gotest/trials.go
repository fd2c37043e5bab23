package gotest

// The runs of a campaign: the fault-free pass and the fault trials, each a
// list of jobs that Options.Parallel test processes run at once
// (engine.Run), stored in the order of their trial indices.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// job is one run of the test binary: a trial of the campaign.
type job struct {
	index    int
	test     string
	bound    time.Duration
	baseline bool     // a fault-free run of the measuring pass
	reach    []uint32 // a fault trial's live sites (TrialSpec.Reach)
	expected int      // its test's requests there fault-free (TrialSpec.Expected)
	// again runs the test twice in its process (again.go): the last
	// fault-free run of each test, and the fault trials of a test that
	// passed twice there (Measure.Again).
	again bool
	// left is a fault trial's baseline of the leak check (left.go).
	left Leftovers
}

// ran is a job that ran: the test's run, its trial record and the
// controller's result.
type ran struct {
	job
	r   Attempt
	tr  *record.Trial
	res controller.Result
	// worker names the worker that ran it when another machine did
	// (Options.Queue); "" for a run here.
	worker string
}

// runJobs runs jobs under ctl, c.parallel at a time (engine.Run), and
// hands each one that ran to commit in the order of the jobs (a job that
// ended early waits for those before it), one at a time; commit may say
// engine.ErrEnded. Indices are taken from c.next in order. With c.remote,
// fault jobs run there too: a job runs here when one of the c.parallel
// local processes is free, else remotely, up to the remote's slots more
// at once. The first error (a run that could not start, a commit that
// failed, ctx done) stops the others; the jobs not committed then are not
// stored.
func (c *campaignRun) runJobs(ctx context.Context, ctl *controller.Controller, jobs []job, commit func(ran) error) error {
	for i := range jobs {
		jobs[i].index = c.next
		c.next++
	}
	var remote engine.Remote // the fault-free pass runs here
	if c.remote != nil && len(jobs) > 0 && !jobs[0].baseline {
		remote = c.remote
	}
	err := engine.Run(ctx, engine.Schedule[ran]{
		Trials: len(jobs), Local: c.parallel, Remote: remote, InOrder: true,
		Begin: func(_ context.Context, i int, remote bool) (func(context.Context) (ran, error), error) {
			return func(ctx context.Context) (ran, error) { return c.runJob(ctx, ctl, jobs[i], remote) }, nil
		},
		Done: commit,
	})
	if err != nil {
		return err
	}
	return ctx.Err()
}

// runJob runs j under ctl: here, or on c.remote when remote.
func (c *campaignRun) runJob(ctx context.Context, ctl *controller.Controller, j job, remote bool) (ran, error) {
	id := record.TrialID(c.id, j.index)
	if remote {
		return c.runRemote(ctx, ctl, id, j)
	}
	r, tr, res, err := c.attempt(ctx, ctl, id, j)
	if err != nil {
		return ran{}, err
	}
	if !j.baseline {
		out := policy.OutcomeOf(tr)
		out.Timeouts = res.Timeouts // a test trial's record keeps none
		ch := ctl.TellPolicy(out)
		tr.Choice, tr.Why = ch.Technique, ch.Why
	} else {
		tr.Policy = record.BaselinePolicy
	}
	return ran{job: j, r: r, tr: tr, res: res}, nil
}

// save stores a trial that ran and counts its requests in c.sum; a fault
// trial's save stores the policy's state after it too, so a resumed
// campaign goes on from here.
func (c *campaignRun) save(ctx context.Context, d ran) error {
	sctx := context.WithoutCancel(ctx) // a trial that ran is stored whole
	if err := c.st.SaveTrial(sctx, c.id, d.tr); err != nil {
		return err
	}
	c.trials = append(c.trials, d.tr)
	if c.sum != nil {
		c.sum.Requests += d.res.Requests
		c.sum.MemberRequests += d.res.MemberRequests
		c.sum.MemberSends += d.res.MemberSends
		c.sum.MostMembers = max(c.sum.MostMembers, len(d.res.Members))
		if d.worker != "" {
			c.sum.RemoteTrials++
			if c.sum.Workers == nil {
				c.sum.Workers = map[string]int{}
			}
			c.sum.Workers[d.worker]++
		}
	}
	if d.baseline {
		return nil
	}
	return engine.SavePolicy(sctx, c.st, c.id, c.faults)
}

// measureAll runs every test o.Runs times fault-free and measures it;
// the tests a resumed campaign measured before keep their measure. Each
// measure is stored once its test's runs are.
func (c *campaignRun) measureAll(ctx context.Context, tests []string, sum *Summary) ([]Measure, error) {
	done := map[string]Measure{}
	for _, m := range c.prior.measured {
		done[m.Test] = m
	}
	var jobs []job
	for _, test := range tests {
		if _, ok := done[test]; ok {
			sum.ResumedTests++
			continue
		}
		for k := range c.o.Runs {
			// The last run twice in one process; its second run is
			// disarmed as a fault trial's is, so the requests and sites
			// it counts are its first run's (Measure.Requests).
			again := !c.o.Once && k == c.o.Runs-1
			jobs = append(jobs, job{test: test, bound: c.o.Timeout, baseline: true, again: again})
		}
	}
	runs := map[string][]Attempt{}
	err := c.runJobs(ctx, c.measure, jobs, func(d ran) error {
		// The sites a fault may strike: reached outside test setup.
		d.r.Sites, d.r.Eligible = c.reach.reached(d.index)
		if err := c.save(ctx, d); err != nil {
			return err
		}
		runs[d.test] = append(runs[d.test], d.r)
		if len(runs[d.test]) < c.o.Runs {
			return nil
		}
		m := Measured(d.test, runs[d.test])
		done[m.Test] = m
		fmt.Fprintf(c.o.Progress, "measured %s: %d of %d runs passed, slowest %s, %d sites reached\n", m.Test, m.Passed, m.Runs, m.Slowest.Round(time.Millisecond), len(m.Sites))
		return c.putMeasured(ctx, done)
	})
	if err != nil {
		return nil, err
	}
	ms := make([]Measure, 0, len(tests))
	for _, test := range tests {
		ms = append(ms, done[test])
	}
	return ms, nil
}

// faultTrials runs the fault trials of the chosen tests that o.Trials
// still owes after a resumed campaign's stored ones, each chosen test
// getting its share (Allot), counting them in sum.
func (c *campaignRun) faultTrials(ctx context.Context, sum *Summary) error {
	chosen := sum.Selection.Chosen
	order, shares := Allot(chosen, c.o.Trials, c.o.Seed)
	sum.Shares = shares
	for _, tr := range c.prior.fault {
		sum.count(tr.Status == record.StatusFailed, len(tr.Injections))
	}
	sum.ResumedTrials = len(c.prior.fault)
	if c.until() {
		sum.Ended = true
		return nil
	}
	var jobs []job
	for _, i := range Remaining(order, chosen, c.prior.ranTests(), c.o.Trials) {
		m := chosen[i]
		again := twice(m, c.o)
		bm := m // the hang bound of one run of the test, or of two
		if !again && m.Run > 0 {
			bm.Slowest = m.Run
		}
		jobs = append(jobs, job{test: m.Test, bound: HangBound(bm, c.delay, c.o.HangFloor), reach: Reach(c.cat, m), expected: m.Requests, again: again, left: m.Leftovers()})
	}
	err := c.runJobs(ctx, c.faults, jobs, func(d ran) error {
		if err := c.save(ctx, d); err != nil {
			return err
		}
		failed := d.tr.Status == record.StatusFailed
		sum.count(failed, len(d.tr.Injections))
		what := "no fault"
		if len(d.tr.Injections) > 0 {
			in := d.tr.Injections[0]
			what = in.Kind.String() + " at " + in.SiteID
		}
		fmt.Fprintf(c.o.Progress, "trial %s %s (%s): %s\n", d.tr.ID, d.test, what, trialOutcome(d.test, d.tr.Verdicts))
		if c.until() {
			sum.Ended = true
			return engine.ErrEnded
		}
		return nil
	})
	return err
}

// trialOutcome is how a fault trial of test ended, for its progress
// line: the finding's symptom ("panicked"), an informational verdict's
// kind ("test assumption", "fail-stop on the injected error", "timing
// assumption": the test failed, but not as a finding), or "passed".
func trialOutcome(test string, vs []record.Verdict) string {
	if len(vs) == 0 || vs[0].Symptom == "" {
		return "passed"
	}
	if vs[0].Failed {
		return strings.TrimPrefix(vs[0].Symptom, test+" ")
	}
	what, _, _ := strings.Cut(strings.TrimPrefix(vs[0].Symptom, "informational: "), " (")
	return what + " (not a finding)"
}

// until asks Options.Until about the trials stored so far.
func (c *campaignRun) until() bool {
	return c.o.Until != nil && c.o.Until(c.trials)
}

// Reach is the live sites of a fault trial of m's test: the indices in
// cat of the sites it reached fault-free, ascending (never nil: a test
// whose sites cat no longer has gets none live).
func Reach(cat *catalog.Catalog, m Measure) []uint32 {
	want := make(map[string]bool, len(m.Sites))
	for _, id := range m.Sites {
		want[id] = true
	}
	out := []uint32{}
	for _, s := range cat.Sites {
		if want[s.ID] {
			out = append(out, s.Index)
		}
	}
	slices.Sort(out)
	return out
}

// count counts one fault trial.
func (s *Summary) count(failed bool, injections int) {
	s.Trials++
	if injections > 0 {
		s.Injected++
	}
	if failed {
		s.Failed++
		if injections > 0 {
			s.FaultFailed++
		}
	}
}

// Remaining is the part of a fault-trial schedule (order, from Allot,
// indices into chosen) still to run when the tests in ran (test name ->
// fault trials an earlier run stored) have run: the schedule with each
// test's first ran[test] turns taken out, at most trials-len(ran) turns,
// so the campaign ends with trials fault trials in all.
func Remaining(order []int, chosen []Measure, ran map[string]int, trials int) []int {
	left := maps.Clone(ran)
	owed := trials
	for _, n := range ran {
		owed -= n
	}
	var out []int
	for _, i := range order {
		if len(out) >= owed {
			break
		}
		if t := chosen[i].Test; left[t] > 0 {
			left[t]--
			continue
		}
		out = append(out, i)
	}
	return out
}
