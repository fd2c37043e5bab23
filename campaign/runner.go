package campaign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/cluster"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
	"github.com/gofault/gofault/workload"
)

// baselinePolicy is the policy name recorded for fault-free baseline trials.
const baselinePolicy = record.BaselinePolicy

// clusterNotStarted starts the Err of a trial whose cluster did not start
// (never judged); workloadTimedOut is the Err of one whose workload was
// killed at its timeout.
const (
	clusterNotStarted = "cluster did not start: "
	workloadTimedOut  = "workload timed out"
)

// restartDelay is how long a node killed by a crash fault stays down before
// it is restarted, so the trial also exercises its recovery.
const restartDelay = time.Second

// runner runs the trials of one campaign.
type runner struct {
	cfg      *config.Config
	bt       *build.Built
	campaign int64
	ctl      *controller.Controller
	sock     string        // the controller's socket (controller.SocketPath)
	nodeSpec cluster.Nodes // how to run each node
	keep     *keeper       // bounds the trials' disk use
	log      *slog.Logger
	nodes    []string

	bmu      sync.Mutex
	baseline *record.LogBaseline
	// bound is the hang and gray checkers' progress bound: checkers.progress,
	// or what calibrate measured (check.DefaultProgress while zero). Set
	// before any trial is judged.
	bound time.Duration
	// cov is the campaign's coverage union (set by openExecution).
	cov *coverage
	// netSites are the catalog's network sites (check.Input.NetSites).
	netSites map[string]bool
	// slowWaits are the profile's checkers.waits_for_slow
	// (check.Input.SlowWaits).
	slowWaits []check.SlowWait
	// tmpl are the template slots with cluster.template; nil without.
	tmpl *templates
}

func newRunner(cfg *config.Config, bt *build.Built, campaign int64, pol policy.Policy, baseline *record.LogBaseline, log *slog.Logger) (*runner, error) {
	// Orphans of the nodes' own children become gofault's, so a trial's
	// end finds and reaps them (cluster.Cluster.Stop).
	if err := cluster.BecomeSubreaper(); err != nil {
		log.Warn("cannot become a child subreaper; daemonised node helpers go to init", "err", err)
	}
	sock, err := controller.SocketPath()
	if err != nil {
		return nil, err
	}
	nodes, err := clusterNodes(cfg.Cluster)
	if err != nil {
		return nil, err
	}
	nodes = powerLossEnv(nodes, cfg.Faults.Kinds, bt.Catalog)
	waits, err := slowWaits(cfg.Checkers.WaitsForSlow)
	if err != nil {
		return nil, err
	}
	keep, err := newKeeper(filepath.Join(cfg.Path(cfg.WorkDir), "trials"), cmp.Or(cfg.Store.KeepFailed, config.DefaultKeepFailed))
	if err != nil {
		return nil, err
	}
	ctl, err := controller.Listen("unix", sock, controller.Options{Catalog: bt.Catalog, Policy: pol, Logger: log,
		Disconnects: slices.ContainsFunc(cfg.Faults.Kinds, peerCut)})
	if err != nil {
		controller.RemoveSocketDir(sock)
		return nil, err
	}
	r := &runner{cov: &coverage{}, cfg: cfg, bt: bt, campaign: campaign, ctl: ctl, sock: sock, log: log, baseline: baseline, nodeSpec: nodes, keep: keep,
		bound: cfg.Checkers.Progress.Duration(), slowWaits: waits}
	for i := 1; i <= cfg.Cluster.Nodes; i++ {
		r.nodes = append(r.nodes, cluster.NodeName(i))
	}
	if cfg.Cluster.Template {
		r.tmpl = newTemplates(cfg.Path(cfg.WorkDir), campaign)
	}
	r.netSites = netSites(bt.Catalog)
	return r, nil
}

// netSites are the stable IDs of cat's network sites
// (check.Input.NetSites).
func netSites(cat *catalog.Catalog) map[string]bool {
	m := map[string]bool{}
	for _, s := range cat.Sites {
		if s.IO == "net" {
			m[s.ID] = true
		}
	}
	return m
}

// slowWaits maps the profile's checkers.waits_for_slow to the checkers'
// input.
func slowWaits(ws []config.SlowWait) ([]check.SlowWait, error) {
	out := make([]check.SlowWait, 0, len(ws))
	for i, w := range ws {
		k, err := catalog.ParseKind(w.Kind)
		if err != nil {
			return nil, fmt.Errorf("checkers.waits_for_slow[%d]: %w", i, err)
		}
		out = append(out, check.SlowWait{Kind: k, Role: w.Role, Site: w.Site, Node: w.Node, Reason: w.Reason})
	}
	return out, nil
}

// clusterNodes maps the config's cluster section to the cluster runner's
// input; zero values take the config's defaults.
func clusterNodes(c config.Cluster) (cluster.Nodes, error) {
	d := config.Config{Cluster: c}
	d.Defaults()
	c = d.Cluster
	sig, err := config.ParseSignal(c.Shutdown.Signal)
	if err != nil {
		return cluster.Nodes{}, fmt.Errorf("cluster.shutdown.signal: %w", err)
	}
	return cluster.Nodes{
		Count: c.Nodes, Ports: c.Ports, Command: c.Command, Env: c.Env,
		Ready:    cluster.Ready{TCP: c.Ready.TCP, HTTP: c.Ready.HTTP, Timeout: c.Ready.Timeout},
		Shutdown: cluster.Shutdown{Signal: sig, Grace: c.Shutdown.Grace, Sequential: c.Shutdown.Order == config.ShutdownSequential, LeaderLast: c.Shutdown.Order == config.ShutdownLeaderLast},
	}, nil
}

func (r *runner) close() {
	r.tmpl.close()
	r.ctl.Close()
	controller.RemoveSocketDir(r.sock)
}

// trialRun is one trial in progress.
type trialRun struct {
	index    int
	id       string
	baseline bool
	// shortLoad lets the load end early although the trial is a baseline:
	// a re-run of a fault-free failure whose trial ended its load early
	// runs as that trial did (loadEnd.FullLength).
	shortLoad bool
	ct        *controller.Trial
	start     time.Time

	// notStarted is set when the trial's cluster did not start: the trial
	// could not run, and no checker judges it.
	notStarted bool

	mu       sync.Mutex
	cl       *cluster.Cluster
	restarts sync.WaitGroup
	ctx      context.Context
	// restartErrs says, by node, why a node did not come back after a
	// crash fault.
	restartErrs map[string]string
	// kills counts the kill faults of each node: a restart that fails
	// because a later fault of a sequence killed the node again (during
	// its recovery) is that fault's doing, not a node that did not come
	// back.
	kills map[string]int
	// restarting counts the nodes ended by a fault and not yet started
	// again (crash runs).
	restarting int
	// calibrating marks the calibration trial; calibKill is its kill once
	// chosen (zero before).
	calibrating bool
	calibKill   kill
}

// ending is how a fault that ends a node's process ends it.
type ending int

const (
	endCrash     ending = iota // SIGKILL
	endPowerLoss               // SIGKILL, then the data dir rolled back to what was synced
	endReboot                  // the shutdown signal: a clean shutdown
)

// crash carries out a fault that ends the node's process: end it now as
// how says, restart it down later (restartDelay when 0). A power loss also
// rolls the node's data dir back to what it synced (powerloss.go) before
// the restart.
func (t *trialRun) crash(r *runner, node string, how ending, down time.Duration) {
	powerLoss := how == endPowerLoss
	t.mu.Lock()
	cl, ctx := t.cl, t.ctx
	if cl == nil {
		t.mu.Unlock()
		return
	}
	t.restarts.Add(1)
	if t.kills == nil {
		t.kills = map[string]int{}
	}
	t.kills[node]++
	gen := t.kills[node]
	t.restarting++
	t.mu.Unlock()
	defer t.restarts.Done()
	defer func() {
		t.mu.Lock()
		t.restarting--
		t.mu.Unlock()
	}()
	if powerLoss {
		if err := stopForPowerLoss(cl, node); err != nil {
			r.log.Warn("power-loss fault: offsets not recorded; unsynced appends inside a file's size are kept", "trial", t.id, "node", node, "err", err)
		}
	}
	if how == endReboot {
		if err := cl.Shutdown(node); err != nil {
			r.log.Warn("reboot fault: shutdown failed", "trial", t.id, "node", node, "err", err)
			return
		}
	} else if err := cl.Kill(node); err != nil {
		r.log.Warn("crash fault: kill failed", "trial", t.id, "node", node, "err", err)
		return
	}
	if powerLoss {
		st, err := rollBack(cl, node, r.cfg.Faults)
		if err != nil {
			r.log.Warn("power-loss fault: rollback failed; restarting as after a crash", "trial", t.id, "node", node, "err", err)
		} else {
			r.log.Info("power-loss fault: data dir rolled back", "trial", t.id, "node", node,
				"removed", st.Removed, "truncated", st.Truncated, "restored", st.Restored, "zeroed", st.Zeroed, "zeroed_bytes", st.ZeroedBytes, "reverted", st.Reverted, "reverted_bytes", st.RevertedBytes)
		}
	}
	select {
	case <-time.After(cmp.Or(down, restartDelay)):
	case <-ctx.Done():
		return
	case <-cl.Done():
		return
	}
	if err := cl.Restart(ctx, node); err != nil {
		select {
		case <-ctx.Done(): // the trial ended or was stopped under the restart
			return
		case <-cl.Done():
			return
		default:
		}
		t.mu.Lock()
		if t.kills[node] != gen {
			t.mu.Unlock()
			return // killed again under the restart: the later fault restarts it
		}
		r.log.Warn("crash fault: node did not come back", "trial", t.id, "node", node, "err", err)
		if t.restartErrs == nil {
			t.restartErrs = map[string]string{}
		}
		t.restartErrs[node] = err.Error() // the crash checker reports it
		t.mu.Unlock()
	}
}

// pause carries out a pause fault: node's whole process stops for d,
// then goes on. The trial's end does not wait for it: the cluster's stop
// lets a paused node go on before its shutdown signal (cluster.Pause).
func (t *trialRun) pause(r *runner, node string, d time.Duration) {
	t.mu.Lock()
	cl, ctx := t.cl, t.ctx
	t.mu.Unlock()
	if cl == nil {
		return
	}
	if err := cl.Pause(node); err != nil {
		r.log.Warn("pause fault: could not stop the node", "trial", t.id, "node", node, "err", err)
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	case <-cl.Done():
		return
	}
	if err := cl.Resume(node); err != nil {
		r.log.Warn("pause fault: could not let the node go on", "trial", t.id, "node", node, "err", err)
	}
}

// begin registers trial index with the controller; the policy plans it.
func (r *runner) begin(index int, baseline bool) (*trialRun, error) {
	return r.beginID(record.TrialID(r.campaign, index), index, baseline)
}

// beginID is begin for a run of trial index under its own ID (a re-run).
func (r *runner) beginID(id string, index int, baseline bool) (*trialRun, error) {
	t := &trialRun{index: index, id: id, baseline: baseline, start: time.Now()}
	spec := controller.TrialSpec{ID: t.id, Index: index, Nodes: r.nodes, NoFaults: baseline}
	spec.Crash = func(node string) { t.crash(r, node, endCrash, 0) }
	spec.PowerLoss = func(node string) { t.crash(r, node, endPowerLoss, 0) }
	spec.Reboot = func(node string) { t.crash(r, node, endReboot, 0) }
	spec.Stop = func(node string, down time.Duration) { t.crash(r, node, endCrash, down) }
	spec.Pause = func(node string, d time.Duration) { t.pause(r, node, d) }
	ct, err := r.ctl.BeginTrial(spec)
	if err != nil {
		return nil, err
	}
	t.ct = ct
	return t, nil
}

// trial runs one trial start to end.
func (r *runner) trial(ctx context.Context, index int, baseline bool) (*record.Trial, error) {
	t, err := r.begin(index, baseline)
	if err != nil {
		return nil, err
	}
	return r.finish(ctx, t)
}

// finish runs a begun trial: cluster and workload (execute), checkers,
// status (judged), then the policy, the coverage and the log baseline learn
// from it (learn). It returns an error only when the trial could not be
// judged (ctx cancelled, or gofault itself failed); a target that fails is a
// judged trial.
func (r *runner) finish(ctx context.Context, t *trialRun) (*record.Trial, error) {
	tr, res, err := r.judged(ctx, t, r.baselineNow, r.bound)
	if err != nil {
		return nil, err
	}
	r.learn(t.baseline, tr, res)
	return tr, nil
}

// baselineNow is a copy of the log baseline as learned so far: other
// trials keep learning into r.baseline.
func (r *runner) baselineNow() *record.LogBaseline {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	return r.baseline.Clone()
}

// judged runs a begun trial and judges it against the log baseline that
// baseline returns once the trial ran, with the progress bound, learning
// nothing: a worker of a remote campaign (Host) runs only this, its
// coordinator learns (learn).
func (r *runner) judged(ctx context.Context, t *trialRun, baseline func() *record.LogBaseline, bound time.Duration) (*record.Trial, controller.Result, error) {
	tr, res, wres, err := r.execute(ctx, t)
	if err != nil {
		return nil, res, err
	}
	if t.notStarted {
		// Nothing ran: what the checkers would say (nodes that exited, no
		// client progress) is the setup's failure, not the target's.
		tr.Status = record.StatusError
		return tr, res, nil
	}
	err = judgeTrial(ctx, r.cfg, tr, trialJudged{baseline: t.baseline, timedOut: wres.TimedOut}, judgeEnv{
		baseline: baseline(), bound: bound, netSites: r.netSites, slowWaits: r.slowWaits, visualize: true,
	})
	if err != nil {
		return nil, res, err
	}
	return tr, res, nil
}

// learn lets the campaign learn from judged trial tr (a baseline trial
// when baseline), run here or by a worker: the coverage union grows, the
// policy is told the outcome (and tr keeps what it chose for the trial,
// and why), and a trial without a fault teaches the log baseline.
func (r *runner) learn(baseline bool, tr *record.Trial, res controller.Result) {
	r.cov.add(tr, res.Blocks)
	if !baseline {
		// A trial that could not be judged or could not run still did not
		// fail: the policy learns that (its states and coverage count),
		// never that it found something.
		ch := r.ctl.TellPolicy(policy.OutcomeOf(tr))
		tr.Choice, tr.Why = ch.Technique, ch.Why
	}
	if len(tr.Injections) == 0 && tr.Status != record.StatusError {
		// Any trial that ran without a fault is a baseline sample: what its
		// nodes log without faults is never a fault's finding, even when
		// the trial failed (it is then a fault-free failure).
		r.bmu.Lock()
		if err := check.Learn(r.baseline, tr, os.DirFS(tr.Dir), r.cfg.Checkers.LogFormat); err != nil {
			r.log.Warn("log baseline: learn", "trial", tr.ID, "err", err)
		}
		r.bmu.Unlock()
	}
}

// execute runs a begun trial's cluster and workload under the trial
// timeout and records what happened, unjudged. A cluster that does not
// start or a workload that fails is recorded in the trial's Err.
func (r *runner) execute(ctx context.Context, t *trialRun) (*record.Trial, controller.Result, cluster.WorkloadResult, error) {
	var (
		cfg       = r.cfg
		dir       = trialDir(cfg, t.id)
		wres      cluster.WorkloadResult
		wlEvents  []record.ClientEvent
		wlStarted bool
		res       controller.Result
	)
	if err := os.RemoveAll(dir); err != nil {
		t.ct.End()
		return nil, res, wres, fmt.Errorf("trial dir: %w", err)
	}
	tctx, cancel := context.WithTimeout(ctx, cfg.Trials.Timeout)
	defer cancel()
	t.mu.Lock()
	t.ctx = tctx
	t.mu.Unlock()

	tr := &record.Trial{
		ID: t.id, Campaign: cfg.Name, Index: t.index, Policy: r.ctl.Policy().Name(),
		Seed: cfg.Policy.Seed, Start: t.start, Dir: dir, Status: record.StatusOK,
	}
	if t.baseline {
		tr.Policy = baselinePolicy
	}
	spec := cluster.Spec{
		Dir: dir, Trial: t.id, Bin: r.bt.Binary, BaseDir: cfg.Dir,
		Nodes: r.nodeSpec, Controller: r.ctl.Addr(), Log: r.log,
		Leader: func() string { n, _ := t.ct.Leader(); return n },
	}
	cl, err := r.startCluster(tctx, spec)
	if err != nil {
		var se *cluster.StartError
		if !errors.As(err, &se) || ctx.Err() != nil {
			t.ct.End()
			if ctx.Err() != nil {
				return nil, res, wres, ctx.Err()
			}
			return nil, res, wres, fmt.Errorf("trial %s: %w", t.id, err)
		}
		tr.Nodes = se.Nodes
		tr.Err = clusterNotStarted + err.Error()
		t.notStarted = true
	} else {
		t.mu.Lock()
		t.cl = cl
		t.mu.Unlock()
		t.ct.SetAddresses(addresses(cl.Nodes()))
		t.ct.Arm() // faults strike the ready cluster under the workload
		wres, wlEvents, err = r.runWorkload(tctx, t, cl, dir)
		wlStarted = err == nil
		if err != nil && ctx.Err() == nil {
			tr.Err = "workload: " + err.Error()
		}
		// The workload is over: no fault may strike the shutdown.
		t.ct.End()
		t.mu.Lock()
		t.cl = nil
		t.mu.Unlock()
		t.restarts.Wait()
		tr.Nodes = cl.Stop()
		t.mu.Lock()
		for i := range tr.Nodes {
			tr.Nodes[i].RestartErr = t.restartErrs[tr.Nodes[i].Name]
		}
		t.mu.Unlock()
	}
	res = t.ct.End() // idempotent: the record as of the first End
	tr.End = time.Now()
	if ctx.Err() != nil {
		return nil, res, wres, ctx.Err() // an interrupted trial is not recorded
	}
	if h, bad := r.ctl.CatalogMismatch(); bad {
		// Every trial would run without a fault: stop the campaign.
		return nil, res, wres, fmt.Errorf("trial %s: the node binary %s was built with another catalog (its agent's %s, the campaign's %s): no fault can strike it; build it again (gofault run --rebuild)", t.id, r.bt.Binary, h, r.ctl.CatalogHash())
	}
	if v, bad := r.ctl.VersionMismatch(); bad {
		// A workload so built reports nothing (the checkers would judge
		// blind), a node so built takes no fault: stop the campaign.
		return nil, res, wres, fmt.Errorf("trial %s: the agent of %s speaks protocol %d, this gofault %d: it was built with another gofault (a workload module that requires another github.com/gofault/gofault than this CLI, or an older build); build it with this gofault (align the module's gofault version; gofault run --rebuild), or run the gofault it was built with", t.id, v.Node, v.Version, wire.Version)
	}
	tr.Injections = res.Injections
	tr.Requests = res.Requests
	tr.States = res.States
	tr.Timeouts = res.Timeouts
	tr.Reached = res.Reached
	tr.Roles = res.Roles
	tr.Observations = res.Observations
	tr.Client = mergeEvents(res.Client, wlEvents)
	if wlStarted && !wres.OK() && tr.Err == "" {
		tr.Err = fmt.Sprintf("workload exited with status %d", wres.ExitCode)
		if wres.TimedOut {
			tr.Err = workloadTimedOut
		}
	}
	return tr, res, wres, nil
}

// startCluster starts a trial's cluster: bootstrapped in its empty
// trial dir, or with cluster.template from a copy of the formed cluster of
// a template slot, on the slot's ports; the slot goes back to the pool
// when the cluster stops. A template that cannot form is a cluster that
// did not start (a *cluster.StartError).
func (r *runner) startCluster(ctx context.Context, spec cluster.Spec) (*cluster.Cluster, error) {
	if r.tmpl == nil {
		return cluster.Start(ctx, spec)
	}
	s, err := r.tmpl.get(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if se := (*cluster.StartError)(nil); errors.As(err, &se) {
			return nil, err // a node of the template did not start: cluster.Form says which
		}
		return nil, &cluster.StartError{Node: "(all)", Err: err}
	}
	spec.Reserved, spec.From = s.res, s.dir
	cl, err := cluster.Start(ctx, spec)
	if err != nil {
		r.tmpl.put(s)
		return nil, err
	}
	go func() {
		<-cl.Done()
		r.tmpl.put(s)
	}()
	return cl, nil
}

// runWorkload runs the workload against a started cluster.
func (r *runner) runWorkload(ctx context.Context, t *trialRun, cl *cluster.Cluster, dir string) (cluster.WorkloadResult, []record.ClientEvent, error) {
	cfg := r.cfg
	env := workload.Env{
		Controller: r.ctl.Addr(),
		Trial:      t.id,
		Deadline:   time.Now().Add(cfg.Workload.Timeout),
		Seed:       cfg.Policy.Seed + int64(t.index),
	}
	for _, v := range cl.Nodes() {
		env.Nodes = append(env.Nodes, v.WorkloadNode())
	}
	if cfg.Workload.AdaptiveEndOn() {
		env.LoadEnd = filepath.Join(dir, loadEndFile)
		env.LoadMin = cmp.Or(cfg.Workload.MinDuration, config.DefaultMinDuration)
		if t.calibrating {
			env.LoadFull = calibrateLoad(cfg.Workload.Timeout)
		}
		stop := r.watchLoadEnd(t, cl, env.LoadEnd)
		defer stop()
	}
	contract, err := env.Environ()
	if err != nil {
		return cluster.WorkloadResult{}, nil, fmt.Errorf("workload environment: %w", err)
	}
	logf, err := os.Create(filepath.Join(dir, "workload.log"))
	if err != nil {
		return cluster.WorkloadResult{}, nil, fmt.Errorf("workload log: %w", err)
	}
	defer logf.Close()
	var extra []string
	for k, v := range cfg.Workload.Env {
		extra = append(extra, k+"="+v)
	}
	sort.Strings(extra)
	var (
		mu     sync.Mutex
		events []record.ClientEvent
	)
	res, err := cluster.RunWorkload(ctx, cluster.Workload{
		Args:     r.bt.Workload,
		BaseDir:  cfg.Dir,
		Dir:      dir,
		Env:      append(extra, contract...),
		Deadline: env.Deadline,
		Stderr:   logf,
		OnEvent: func(e record.ClientEvent) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
			// Live, as the connection's events: calibration waits for
			// every node's progress, held cuts count requests.
			t.ct.Printed(e)
		},
		Log: slog.New(slog.NewTextHandler(logf, nil)),
	})
	return res, events, err
}

// watchLoadEnd decides, every loadEndPoll until stop is called, whether
// the trial's load may end (loadEnd.mayEnd), and once it may, creates the
// file path that tells the workload so.
func (r *runner) watchLoadEnd(t *trialRun, cl *cluster.Cluster, path string) (stop func()) {
	progress := cmp.Or(r.bound, check.DefaultProgress)
	bound := cmp.Or(r.cfg.Checkers.RecoveryBound, check.DefaultRecoveryBound) + progress
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(loadEndPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			l := loadEnd{FullLength: t.baseline && !t.shortLoad, Faults: t.ct.Faults(), Bound: bound, Settle: progress / 2, Client: t.ct.ClientEvents}
			t.mu.Lock()
			l.Restarting = t.restarting > 0
			k, struck := t.calibKill, t.kills[t.calibKill.node] > 0
			t.mu.Unlock()
			l.Calibrated = t.calibrating && struck && resumed(t.ct.LastProgress(), k.node, k.at)
			for _, n := range r.nodes {
				if rec, err := cl.Node(n); err == nil {
					l.Nodes = append(l.Nodes, rec)
				}
			}
			ok, why := l.mayEnd(time.Now())
			if !ok {
				continue
			}
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				r.log.Warn("adaptive end: cannot tell the workload; its load runs its full length", "trial", t.id, "err", err)
			} else {
				r.log.Debug("adaptive end: the load may end", "trial", t.id, "why", why)
			}
			return
		}
	})
	return func() { close(done); wg.Wait() }
}

// mergeEvents joins the events that came over the wire with those a
// command workload printed, in time order.
func mergeEvents(a, b []record.ClientEvent) []record.ClientEvent {
	out := append(append([]record.ClientEvent(nil), a...), b...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// save stores a judged trial, then the policy's and the baseline's state,
// so a resumed campaign continues from exactly this point.
func (r *runner) save(ctx context.Context, st *store.Store, tr *record.Trial) error {
	// Use a context that survives Ctrl-C: a judged trial is always saved
	// whole.
	sctx := context.WithoutCancel(ctx)
	if err := st.SaveTrial(sctx, r.campaign, tr); err != nil {
		return err
	}
	if err := r.keep.tidy(tr.Dir, tr.Status == record.StatusFailed, hitMembers(tr)); err != nil {
		return err
	}
	if err := r.cov.save(sctx, st, r.campaign); err != nil {
		return err
	}
	if err := engine.SavePolicy(sctx, st, r.campaign, r.ctl); err != nil {
		return err
	}
	r.bmu.Lock()
	bl := r.baseline.Clone()
	r.bmu.Unlock()
	return st.PutBaseline(sctx, r.campaign, bl)
}

// without returns names without name; empty names means every checker.
func without(names []string, name string) []string {
	if len(names) == 0 {
		names = check.Names()
	}
	var out []string
	for _, n := range names {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}

// addresses maps every port of every node to the node's name, for the
// controller to tell which member a peer-network call talks to.
func addresses(nodes []cluster.NodeVars) map[string]string {
	out := map[string]string{}
	for _, n := range nodes {
		for _, p := range n.Port {
			out[net.JoinHostPort(n.Host, strconv.Itoa(p))] = n.Name
		}
	}
	return out
}

// trialDir is where a trial's data and logs go.
func trialDir(cfg *config.Config, id string) string {
	return filepath.Join(cfg.Path(cfg.WorkDir), "trials", id)
}

// peerCut reports whether fault kind name cuts members by the peer of
// each call (a disconnect, a one-way cut, a split): the agents then tag
// goroutines with the peers they dial (controller.Options.Disconnects).
func peerCut(name string) bool {
	switch name {
	case catalog.KindDisconnect.String(), catalog.KindOneWay.String(), catalog.KindSplit.String():
		return true
	}
	return false
}
