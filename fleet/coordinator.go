package fleet

// The coordinator's side: engine.Remote over the work queue.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// CoordinatorOptions set a coordinator up.
type CoordinatorOptions struct {
	// Bundle is the directory of the campaign's bundle (gofault build
	// --bundle), published for the workers.
	Bundle string
	// Config is the campaign's resolved config as YAML (what a bundle
	// holds as gofault.yaml: overrides applied, no defaults, no work
	// dir); the workers run it instead of the bundle's, so a campaign of
	// a bundle keeps its --set overrides. A test campaign's bundle
	// (gofault test --queue) has none: its options are in the bundle.
	Config []byte
	// Catalog is the bundle's catalog: a worker's requests name sites and
	// observation points by index.
	Catalog *catalog.Catalog
	// Slots bounds the trials in the queue or running at once (default
	// 16).
	Slots int
	Log   *slog.Logger
}

// Coordinator hands a campaign's fault trials to workers
// (engine.Remote).
type Coordinator struct {
	conn   *Conn
	stream jetstream.Stream
	obj    jetstream.ObjectStore
	key    string
	bundle string
	config string
	cat    *catalog.Catalog
	slots  int
	log    *slog.Logger
	subs   []*nats.Subscription

	mu       sync.Mutex
	pending  map[int]*pending
	recorded map[int]bool
	baseline string // the object holding the last baseline sent
}

// pending is a trial handed out and not yet recorded.
type pending struct {
	job     engine.RemoteJob
	attempt int         // the delivery planned last; its calls are answered
	plan    policy.Plan // that delivery's plan
	done    chan *engine.RemoteResult
}

// NewCoordinator publishes the bundle and answers the workers' calls
// until Close.
func NewCoordinator(ctx context.Context, conn *Conn, opts CoordinatorOptions) (*Coordinator, error) {
	if len(opts.Config) == 0 && bundleKind(opts.Bundle) != build.KindTest {
		return nil, fmt.Errorf("queue: no config to publish")
	}
	st, obj, err := setup(ctx, conn.JS)
	if err != nil {
		return nil, err
	}
	// A test bundle's whole tree: the package dir's files and testdata.
	data, err := packBundle(opts.Bundle, bundleKind(opts.Bundle) == build.KindTest)
	if err != nil {
		return nil, err
	}
	c := &Coordinator{conn: conn, stream: st, obj: obj, cat: opts.Catalog, slots: opts.Slots, log: opts.Log,
		key: strconv.FormatInt(time.Now().UnixNano(), 36), pending: map[int]*pending{}, recorded: map[int]bool{},
		bundle: "bundle-" + digest(data)}
	if c.slots <= 0 {
		c.slots = 16
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	objects := map[string][]byte{c.bundle: data}
	if len(opts.Config) > 0 {
		c.config = "config-" + digest(opts.Config)
		objects[c.config] = opts.Config
	}
	for name, data := range objects {
		if _, err := obj.GetInfo(ctx, name); err == nil {
			continue // published before, by this or an earlier campaign
		}
		if _, err := obj.PutBytes(ctx, name, data); err != nil {
			return nil, fmt.Errorf("queue: publish %s: %w", name, err)
		}
	}
	c.log.Info("queue: bundle published", "object", c.bundle, "bytes", len(data), "coordinator", c.key)
	sweepResults(ctx, conn.NC, obj, c.log)
	ping := func(m *nats.Msg) { m.Respond(nil) }
	for call, h := range map[string]nats.MsgHandler{"begin": c.begin, "decide": c.decide, "observe": c.observe, "result": c.result, "ping": ping} {
		sub, err := conn.NC.Subscribe(callSubject(c.key, call), h)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("queue: subscribe: %w", err)
		}
		c.subs = append(c.subs, sub)
	}
	return c, nil
}

// bundleKind is the Manifest.Kind of the bundle in dir ("" when its
// manifest cannot be read: the workers' OpenBundle says why).
func bundleKind(dir string) string {
	var m build.Manifest
	data, err := os.ReadFile(filepath.Join(dir, build.BundleManifest))
	if err != nil || json.Unmarshal(data, &m) != nil {
		return ""
	}
	return m.Kind
}

// Close stops answering and drops the coordinator's trials still queued.
func (c *Coordinator) Close() {
	for _, s := range c.subs {
		s.Unsubscribe()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.stream.Purge(ctx, jetstream.WithPurgeSubject(TrialSubject(c.key))); err != nil {
		c.log.Warn("queue: drop the trials still queued", "err", err)
	}
}

// Slots is how many trials may be queued or running at once.
func (c *Coordinator) Slots() int { return c.slots }

// Run queues job and waits for its result.
func (c *Coordinator) Run(ctx context.Context, job engine.RemoteJob) (*engine.RemoteResult, error) {
	base, err := c.putBaseline(ctx, job)
	if err != nil {
		return nil, err
	}
	p := &pending{job: job, done: make(chan *engine.RemoteResult, 1)}
	c.mu.Lock()
	c.pending[job.Index] = p
	c.mu.Unlock()
	task, err := json.Marshal(Task{Coordinator: c.key, Campaign: job.Campaign, Index: job.Index, ID: job.ID,
		Policy: job.PolicyName, Bundle: c.bundle, Config: c.config, Baseline: base, Bound: job.Bound,
		Test: job.Test, Reach: job.Reach, Again: job.Again, LeftChecked: job.LeftChecked, Left: job.Left})
	if err != nil {
		return nil, fmt.Errorf("queue: trial %s: %w", job.ID, err)
	}
	if _, err := c.conn.JS.Publish(ctx, TrialSubject(c.key), task, jetstream.WithMsgID(c.key+"-"+job.ID)); err != nil {
		return nil, fmt.Errorf("queue: publish trial %s: %w", job.ID, err)
	}
	select {
	case res := <-p.done:
		return res, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, job.Index)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// putBaseline stores the job's log baseline, named by its digest, unless
// the last one sent was the same.
func (c *Coordinator) putBaseline(ctx context.Context, job engine.RemoteJob) (string, error) {
	data, err := json.Marshal(job.Baseline)
	if err != nil {
		return "", fmt.Errorf("queue: baseline: %w", err)
	}
	name := "baseline-" + digest(data)
	c.mu.Lock()
	same := c.baseline == name
	c.mu.Unlock()
	if same {
		return name, nil
	}
	if _, err := c.obj.PutBytes(ctx, name, data); err != nil {
		return "", fmt.Errorf("queue: baseline: %w", err)
	}
	c.mu.Lock()
	c.baseline = name
	c.mu.Unlock()
	return name, nil
}

// call returns the pending trial of a, if a is its current delivery.
func (c *Coordinator) call(a Delivery) (*pending, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[a.Index]
	return p, p != nil && p.attempt == a.Attempt
}

// begin plans a delivery of a trial: the first, or a later one of a trial
// whose worker died (its earlier delivery's state in the policy is
// replaced: a fault it granted was never judged).
func (c *Coordinator) begin(m *nats.Msg) {
	var req BeginRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		reply(m, BeginReply{Err: err.Error()}, c.log)
		return
	}
	c.mu.Lock()
	p, recorded := c.pending[req.Index], c.recorded[req.Index]
	switch {
	case recorded:
		c.mu.Unlock()
		reply(m, BeginReply{Recorded: true}, c.log)
		return
	case p == nil:
		c.mu.Unlock()
		reply(m, BeginReply{Err: fmt.Sprintf("trial %d is not this coordinator's", req.Index)}, c.log)
		return
	case req.Attempt < p.attempt:
		c.mu.Unlock()
		reply(m, BeginReply{Err: fmt.Sprintf("delivery %d of trial %d is stale: %d began", req.Attempt, req.Index, p.attempt)}, c.log)
		return
	case req.Attempt == p.attempt:
		plan := p.plan // the same delivery asked again
		c.mu.Unlock()
		reply(m, BeginReply{Plan: plan}, c.log)
		return
	}
	if p.attempt > 0 {
		c.log.Warn("queue: trial redelivered; planned afresh", "trial", p.job.ID, "delivery", req.Attempt, "worker", req.Worker)
	}
	p.attempt = req.Attempt
	p.plan = p.job.Policy.PlanTrial(policy.TrialInfo{Index: req.Index, Nodes: req.Nodes, Reach: p.job.Reach, Expected: p.job.Expected})
	plan := p.plan
	c.mu.Unlock()
	reply(m, BeginReply{Plan: plan}, c.log)
}

// decide answers a policy request of a trial's current delivery; a stale
// delivery is granted nothing.
func (c *Coordinator) decide(m *nats.Msg) {
	var req DecideRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		reply(m, DecideReply{}, c.log)
		return
	}
	p, ok := c.call(req.Delivery)
	site := c.cat.Site(req.Site)
	if !ok || site == nil {
		reply(m, DecideReply{}, c.log)
		return
	}
	req.Request.Site = site
	req.Request.Trial = req.Index
	reply(m, DecideReply{Decision: p.job.Policy.Decide(&req.Request)}, c.log)
}

// observe hands an observation of a trial's current delivery to the
// policy.
func (c *Coordinator) observe(m *nats.Msg) {
	var req ObserveRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		reply(m, ObserveReply{}, c.log)
		return
	}
	p, ok := c.call(req.Delivery)
	if !ok || int(req.Point) >= len(c.cat.ObservePoints) {
		reply(m, ObserveReply{}, c.log)
		return
	}
	ob := &policy.Observation{Trial: req.Index, Point: &c.cat.ObservePoints[req.Point], Observation: req.Observation}
	reply(m, ObserveReply{Partition: p.job.Policy.Observe(ob)}, c.log)
}

// result records a trial's result: the first for its index; a later one
// is dropped and logged.
func (c *Coordinator) result(m *nats.Msg) {
	var req ResultRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		reply(m, ResultReply{Err: err.Error()}, c.log)
		return
	}
	c.mu.Lock()
	p, recorded := c.pending[req.Index], c.recorded[req.Index]
	c.mu.Unlock()
	if recorded || p == nil {
		if recorded {
			c.log.Warn("queue: a second result for a recorded trial dropped", "index", req.Index, "delivery", req.Attempt, "worker", req.Worker)
		} else {
			c.log.Warn("queue: a result no run waits for dropped (the campaign stopped)", "index", req.Index, "delivery", req.Attempt, "worker", req.Worker)
		}
		c.deleteObjects(req)
		reply(m, ResultReply{}, c.log)
		return
	}
	res, err := c.fetch(p.job, req)
	if err != nil {
		c.log.Warn("queue: result not recorded", "trial", p.job.ID, "worker", req.Worker, "err", err)
		reply(m, ResultReply{Err: err.Error()}, c.log)
		return
	}
	c.mu.Lock()
	if c.recorded[req.Index] || c.pending[req.Index] != p {
		c.mu.Unlock()
		c.log.Warn("queue: a second result for a recorded trial dropped", "index", req.Index, "delivery", req.Attempt, "worker", req.Worker)
		reply(m, ResultReply{}, c.log)
		return
	}
	c.recorded[req.Index] = true
	delete(c.pending, req.Index)
	c.mu.Unlock()
	if req.Attempt != p.attempt {
		c.log.Info("queue: result of an earlier delivery recorded; the later one's will be dropped", "trial", p.job.ID, "delivery", req.Attempt, "worker", req.Worker)
	}
	p.done <- res
	c.deleteObjects(req)
	reply(m, ResultReply{}, c.log)
}

// fetch reads a result's record and unpacks its files into the job's
// trial dir, where a local trial's would be.
func (c *Coordinator) fetch(job engine.RemoteJob, req ResultRequest) (*engine.RemoteResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	data, err := c.obj.GetBytes(ctx, req.Record)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	tr := &record.Trial{}
	if err := json.Unmarshal(data, tr); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if tr.Index != job.Index || tr.ID != job.ID {
		return nil, fmt.Errorf("record of trial %s sent for %s", tr.ID, job.ID)
	}
	files, err := c.obj.GetBytes(ctx, req.Files)
	if err != nil {
		return nil, fmt.Errorf("trial files: %w", err)
	}
	if err := os.RemoveAll(job.Dir); err != nil {
		return nil, fmt.Errorf("trial files: %w", err)
	}
	if err := unpackDir(files, job.Dir); err != nil {
		return nil, err
	}
	relocate(tr, job.Dir)
	return &engine.RemoteResult{Trial: tr, Blocks: req.Blocks, Worker: req.Worker,
		Members: req.Members, MemberRequests: req.MemberRequests, MemberSends: req.MemberSends}, nil
}

// relocate points a worker's record at the trial dir it was unpacked in:
// its Dir and its nodes' logs.
func relocate(tr *record.Trial, dir string) {
	old := tr.Dir
	tr.Dir = dir
	for i := range tr.Nodes {
		n := &tr.Nodes[i]
		if rel, err := filepath.Rel(old, n.Log); err == nil && n.Log != "" && filepath.IsLocal(rel) && !strings.Contains(rel, string(filepath.Separator)) {
			n.Log = filepath.Join(dir, rel)
		}
	}
}

func (c *Coordinator) deleteObjects(req ResultRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{req.Record, req.Files} {
		if err := c.obj.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			c.log.Warn("queue: delete a result's object", "object", name, "err", err)
		}
	}
}

// reply answers a request with v as JSON.
func reply(m *nats.Msg, v any, log *slog.Logger) {
	data, err := json.Marshal(v)
	if err == nil {
		err = m.Respond(data)
	}
	if err != nil {
		log.Warn("queue: reply", "subject", m.Subject, "err", err)
	}
}

// sweepResults deletes the result objects (result-<coordinator>-…) of
// coordinators that no longer listen: a worker deletes a result its
// coordinator did not record, but not when the server went down with the
// coordinator in the middle of the worker's put (a coordinator that ran an
// embedded server, killed); the next coordinator on the server removes
// them. A coordinator that answers its ping, or whose ping times out, keeps
// its objects.
func sweepResults(ctx context.Context, nc *nats.Conn, obj jetstream.ObjectStore, log *slog.Logger) {
	infos, err := obj.List(ctx)
	if err != nil {
		return // none (jetstream.ErrNoObjectsFound), or nothing to be done now
	}
	byKey := map[string][]string{}
	for _, in := range infos {
		if key, ok := resultCoordinator(in.Name); ok {
			byKey[key] = append(byKey[key], in.Name)
		}
	}
	for key, names := range byKey {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := nc.RequestWithContext(pctx, callSubject(key, "ping"), nil)
		cancel()
		if !errors.Is(err, nats.ErrNoResponders) {
			continue
		}
		for _, name := range names {
			if err := obj.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				log.Warn("queue: delete a gone coordinator's result", "object", name, "err", err)
			}
		}
		log.Info("queue: a gone coordinator's results deleted", "coordinator", key, "objects", len(names))
	}
}

// resultCoordinator returns the coordinator key of result object name
// (result-<key>-<index>-<delivery>.json or .tar.gz).
func resultCoordinator(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "result-")
	if !ok {
		return "", false
	}
	key, _, ok := strings.Cut(rest, "-")
	if !ok || key == "" {
		return "", false
	}
	return key, true
}
