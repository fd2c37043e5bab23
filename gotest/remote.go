package gotest

// Fault trials on other machines (gofault test --queue): the
// coordinator's side hands a trial to Options.Queue's remote as a
// engine.RemoteJob naming the test, its bound and its live sites; the
// worker's side (Host) runs it from the campaign's bundle under a
// controller whose policy is the coordinator's, by proxy.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
)

// Queued is what Options.Queue is handed: the directory of the bundle
// written, the campaign's work dir and its catalog (a worker's requests
// name sites by their index in it).
type Queued struct {
	Bundle, WorkDir string
	Catalog         *catalog.Catalog
}

// distribute writes the campaign's bundle when Options.Bundle or
// Options.Queue asks for one, and sets up Options.Queue's remote.
func (c *campaignRun) distribute(ctx context.Context, sum *Summary) error {
	if c.o.Bundle == "" && c.o.Queue == nil {
		return nil
	}
	dir, err := filepath.Abs(cmp.Or(c.o.Bundle, filepath.Join(c.o.WorkDir, "bundle")))
	if err != nil {
		return fmt.Errorf("test bundle: %w", err)
	}
	n, err := c.writeBundle(dir)
	if err != nil {
		return err
	}
	sum.Bundle, sum.BundleBytes = dir, n
	c.o.Log.Info("test bundle written", "dir", dir, "bytes", n)
	if c.o.Queue == nil {
		return nil
	}
	if c.remote, err = c.o.Queue(ctx, Queued{Bundle: dir, WorkDir: c.o.WorkDir, Catalog: c.cat}); err != nil {
		return err
	}
	return nil
}

// runRemote runs fault job j, trial id, on c.remote and tells ctl's
// policy its outcome as for a local trial.
func (c *campaignRun) runRemote(ctx context.Context, ctl *controller.Controller, id string, j job) (ran, error) {
	res, err := c.remote.Run(ctx, engine.RemoteJob{
		Campaign: c.id, Index: j.index, ID: id, Dir: filepath.Join(c.o.WorkDir, "trials", id),
		Bound: j.bound, Policy: ctl, PolicyName: ctl.Policy().Name(), Test: j.test, Reach: j.reach, Expected: j.expected,
		Again: j.again, LeftChecked: j.left.Checked, Left: j.left.Keys,
	})
	if err != nil {
		return ran{}, err
	}
	tr := res.Trial
	if tr == nil || tr.Index != j.index || tr.ID != id || testOf(tr) != j.test {
		return ran{}, fmt.Errorf("remote trial %s: the worker %s sent back another trial", id, res.Worker)
	}
	c.o.Log.Info("remote trial recorded", "trial", id, "worker", res.Worker, "status", tr.Status)
	out := controller.Result{Requests: tr.Requests, Injections: tr.Injections, Timeouts: tr.Timeouts, Reached: tr.Reached, States: tr.States,
		Members: res.Members, MemberRequests: res.MemberRequests, MemberSends: res.MemberSends}
	ch := ctl.TellPolicy(policy.OutcomeOf(tr))
	tr.Choice, tr.Why = ch.Technique, ch.Why
	return ran{job: j, r: Attempt{Test: j.test}, tr: tr, res: out, worker: cmp.Or(res.Worker, "?")}, nil
}

// Host runs the fault trials of a test campaign's bundle on a worker
// machine (gofault worker; an engine.Host), each under a controller whose
// policy is the coordinator's by proxy; it never learns.
type Host struct {
	c *campaignRun
}

// NewHost sets up the runs of bundle b's trials: their files under
// workDir, their requests decided by pol.
func NewHost(b *Bundle, workDir string, pol policy.Policy, log *slog.Logger) (*Host, error) {
	o := b.Options
	o.WorkDir = workDir
	o.Log, o.Progress = cmp.Or(log, slog.Default()), io.Discard
	c := &campaignRun{o: o, bin: b.Binary, pkgDir: b.PkgDir, cat: b.Catalog}
	var err error
	if c.faults, err = c.listen(pol); err != nil {
		c.close()
		return nil, err
	}
	return &Host{c: c}, nil
}

// Node is the node the test process is (Node, or ProcessNode with a
// member rule): a trial's nodes as the policy plans them.
func (h *Host) Node() string { return h.c.o.node() }

// Trial runs trial job.ID (job.Index) of job.Test, hung past job.Bound,
// with job.Reach its live sites, and returns its judged record, whose Dir
// holds the test's log, and the member counts the record does not carry
// (Members, MemberRequests, MemberSends).
func (h *Host) Trial(ctx context.Context, job engine.RemoteJob) (*engine.RemoteResult, error) {
	_, tr, res, err := h.c.attempt(ctx, h.c.faults, job.ID, jobOf(job))
	if err != nil {
		return nil, err
	}
	return &engine.RemoteResult{Trial: tr, Members: res.Members, MemberRequests: res.MemberRequests, MemberSends: res.MemberSends}, nil
}

// Close stops the host's controller.
func (h *Host) Close() { h.c.close() }

// jobOf is the fault trial a worker runs for its coordinator.
func jobOf(j engine.RemoteJob) job {
	return job{index: j.Index, test: j.Test, bound: j.Bound, reach: j.Reach, expected: j.Expected, again: j.Again,
		left: Leftovers{Checked: j.LeftChecked, Keys: j.Left}}
}
