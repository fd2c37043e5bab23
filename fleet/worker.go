package fleet

// The worker's side: trials taken from the work queue and run with the
// bundle's binaries.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/cluster"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// WorkerOptions set a worker up.
type WorkerOptions struct {
	// Parallel is how many trials it runs at once (at least 1).
	Parallel int
	// Dir holds the bundles it fetched (by digest) and its trials' work
	// dirs.
	Dir string
	// Name names it in the coordinator's log (default: host name and
	// process ID).
	Name string
	// AckWait is how long a trial may go without a sign of life from its
	// worker before it is redelivered to another (default 30s); a running
	// trial signals every third of it.
	AckWait time.Duration
	// CallTimeout bounds each call to the coordinator (default 10s).
	CallTimeout time.Duration
	// HostIdle is how long a campaign's runner (its controller, its work
	// dir, its bundle) is kept after its last trial here (default 10m): a
	// worker that serves campaign after campaign keeps the recent ones, not
	// every one it ever served.
	HostIdle time.Duration
	Log      *slog.Logger
}

// worker runs trials from the queue.
type worker struct {
	conn *Conn
	obj  jetstream.ObjectStore
	opts WorkerOptions

	mu    sync.Mutex
	hosts map[string]*host // by coordinator and campaign
}

// host is a campaign's runner on this worker, a cluster campaign's
// (campaign.Host) or a test campaign's (gotest.Host), and its policy's
// proxy.
type host struct {
	engine.Host
	// test: a test campaign's, whose every task names a test and its
	// live sites.
	test  bool
	proxy *proxy
	// bundle and work are the bundle's and the work dir's paths, removed
	// with the host (the bundle once no other host runs from it).
	bundle, work string
	// running counts its trials running here; last is when the last one
	// ended (worker.mu).
	running int
	last    time.Time
}

// Work runs trials from the queue until ctx is done.
func Work(ctx context.Context, conn *Conn, opts WorkerOptions) error {
	if opts.Parallel < 1 {
		opts.Parallel = 1
	}
	if opts.AckWait <= 0 {
		opts.AckWait = 30 * time.Second
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 10 * time.Second
	}
	if opts.HostIdle <= 0 {
		opts.HostIdle = 10 * time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Name == "" {
		h, _ := os.Hostname()
		opts.Name = h + ":" + strconv.Itoa(os.Getpid())
	}
	_, obj, err := setup(ctx, conn.JS)
	if err != nil {
		return err
	}
	cons, err := conn.JS.CreateOrUpdateConsumer(ctx, Stream, consumerConfig(opts.AckWait))
	if err != nil {
		return fmt.Errorf("queue: consumer: %w", err)
	}
	w := &worker{conn: conn, obj: obj, opts: opts, hosts: map[string]*host{}}
	defer w.close()
	opts.Log.Info("queue: worker ready", "worker", opts.Name, "parallel", opts.Parallel)
	g, gctx := errgroup.WithContext(ctx)
	for range opts.Parallel {
		g.Go(func() error {
			for gctx.Err() == nil {
				batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
				if err != nil {
					if gctx.Err() != nil {
						return nil
					}
					opts.Log.Warn("queue: fetch", "err", err)
					sleep(gctx, time.Second)
					continue
				}
				for msg := range batch.Messages() {
					w.handle(gctx, msg)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// consumerConfig is the workers' shared consumer: explicit acks, a trial
// redelivered when its worker shows no sign of life for ackWait.
func consumerConfig(ackWait time.Duration) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable: Consumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait,
		FilterSubject: "gofault.trials.>", MaxAckPending: -1,
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (w *worker) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range w.hosts {
		h.Close()
	}
}

// handle runs one delivered trial and acknowledges it once its result is
// recorded; a trial it could not run goes back to the queue.
func (w *worker) handle(ctx context.Context, msg jetstream.Msg) {
	log := w.opts.Log
	var task Task
	if err := json.Unmarshal(msg.Data(), &task); err != nil {
		log.Warn("queue: not a trial; dropped", "err", err)
		msg.Term()
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		log.Warn("queue: no delivery metadata", "trial", task.ID, "err", err)
		msg.Nak()
		return
	}
	d := Delivery{Index: task.Index, Attempt: int(meta.NumDelivered), Worker: w.opts.Name}
	log = log.With("trial", task.ID, "delivery", d.Attempt)
	// Signs of life while the bundle is fetched and the trial runs.
	alive, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(w.opts.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-alive.Done():
				return
			case <-t.C:
				msg.InProgress()
			}
		}
	}()
	err = w.run(ctx, task, d, log)
	switch {
	case err == nil:
		msg.Ack()
	case errors.Is(err, errDrop):
		log.Info("queue: trial dropped", "why", err)
		msg.Term()
	case ctx.Err() != nil:
		msg.Nak() // stopped: another worker runs it now
	default:
		log.Warn("queue: trial not run; back to the queue", "err", err)
		msg.NakWithDelay(5 * time.Second)
	}
}

// errDrop marks a task that must not run: recorded already, or its
// coordinator gone.
var errDrop = errors.New("dropped")

// gone wraps the error of a call to the coordinator: errDrop when no
// coordinator listens (it ended), so the task is dropped; else the task
// goes back to the queue.
func gone(err error) error {
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("%w: its coordinator is gone: %v", errDrop, err)
	}
	return fmt.Errorf("the coordinator did not answer: %w", err)
}

// run runs one delivery of a trial and sends its result.
func (w *worker) run(ctx context.Context, task Task, d Delivery, log *slog.Logger) error {
	h, err := w.host(ctx, task)
	if err != nil {
		return err
	}
	defer w.done(h)
	var begin BeginReply
	if err := h.proxy.call(ctx, "begin", BeginRequest{Delivery: d, Nodes: h.proxy.nodes}, &begin); err != nil {
		return gone(err)
	}
	switch {
	case begin.Recorded:
		return fmt.Errorf("%w: trial %s is recorded already", errDrop, task.ID)
	case begin.Err != "":
		return fmt.Errorf("%w: %s", errDrop, begin.Err)
	}
	data, err := w.obj.GetBytes(ctx, task.Baseline)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	baseline := &record.LogBaseline{}
	if err := json.Unmarshal(data, baseline); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	tctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	h.proxy.started(d, begin.Plan, stop)
	defer h.proxy.ended(d.Index)
	log.Info("queue: trial started", "sites", len(begin.Plan.Sites))
	tr, out, err := h.trial(tctx, task, baseline)
	if cause := context.Cause(tctx); ctx.Err() == nil && errors.Is(cause, errGone) {
		if err == nil {
			os.RemoveAll(tr.Dir)
		}
		return fmt.Errorf("%w: %w: stopped while it ran", errDrop, cause)
	}
	if err != nil {
		return err
	}
	defer os.RemoveAll(tr.Dir)
	return w.send(ctx, h.proxy, task, d, tr, out)
}

// send puts a trial's record and files in the object store and asks the
// coordinator to record them.
func (w *worker) send(ctx context.Context, p *proxy, task Task, d Delivery, tr *record.Trial, out Outcome) error {
	rec, err := json.Marshal(tr)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	files, err := packDir(tr.Dir)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("result-%s-%d-%d", task.Coordinator, task.Index, d.Attempt)
	req := ResultRequest{Delivery: d, Record: name + ".json", Files: name + ".tar.gz", Outcome: out}
	if _, err := w.obj.PutBytes(ctx, req.Record, rec); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if _, err := w.obj.PutBytes(ctx, req.Files, files); err != nil {
		w.deleteObjects(req.Record, req.Files)
		return fmt.Errorf("trial files: %w", err)
	}
	var res ResultReply
	err = p.call(ctx, "result", req, &res)
	if err == nil && res.Err == "" {
		w.opts.Log.Info("queue: trial recorded", "trial", tr.ID, "status", tr.Status, "files", len(files))
		return nil
	}
	// A result not recorded leaves nothing behind: no coordinator will
	// read it (it is gone, or it answered that it could not), and a
	// later delivery of the trial sends its own. (A coordinator that
	// recorded it but whose answer was lost deleted it already.)
	w.deleteObjects(req.Record, req.Files)
	if err != nil {
		return gone(err)
	}
	return fmt.Errorf("the coordinator did not record it: %s", res.Err)
}

// deleteObjects deletes objects of the bucket this worker put.
func (w *worker) deleteObjects(names ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range names {
		if err := w.obj.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			w.opts.Log.Warn("queue: delete a result's object", "object", name, "err", err)
		}
	}
}

// done marks one trial of h ended.
func (w *worker) done(h *host) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h.running--
	h.last = time.Now()
}

// evict closes and forgets the hosts that ran no trial for HostIdle before
// now (none runs one now), with their work dirs and the bundles no host
// left runs from, and returns their keys.
func (w *worker) evict(now time.Time) []string {
	var gone []string
	for key, h := range w.hosts {
		if h.running > 0 || now.Sub(h.last) < w.opts.HostIdle {
			continue
		}
		h.Close()
		delete(w.hosts, key)
		gone = append(gone, key)
		if h.work != "" {
			os.RemoveAll(h.work)
		}
		used := false
		for _, o := range w.hosts {
			used = used || o.bundle == h.bundle
		}
		if h.bundle != "" && !used {
			os.RemoveAll(h.bundle)
		}
	}
	sort.Strings(gone)
	if len(gone) > 0 {
		w.opts.Log.Info("queue: idle campaigns closed", "campaigns", gone, "idle", w.opts.HostIdle)
	}
	return gone
}

// host returns the runner of a task's campaign, fetching its bundle first
// when it is not cached, and counts the task's trial as running on it
// (done ends it). The hosts idle for HostIdle go first.
func (w *worker) host(ctx context.Context, task Task) (*host, error) {
	key := task.Coordinator + "/" + strconv.FormatInt(task.Campaign, 10)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.evict(time.Now())
	if h := w.hosts[key]; h != nil {
		h.running++
		return h, nil
	}
	h, err := w.newHost(ctx, task)
	if err != nil {
		return nil, err
	}
	h.running++
	w.hosts[key] = h
	return h, nil
}

// newHost sets up the runner of a task's campaign (worker.mu held).
func (w *worker) newHost(ctx context.Context, task Task) (*host, error) {
	dir, err := w.bundle(ctx, task.Bundle)
	if err != nil {
		return nil, err
	}
	p := &proxy{nc: w.conn.NC, coordinator: task.Coordinator, name: task.Policy, timeout: w.opts.CallTimeout,
		log: w.opts.Log, live: map[int]live{}}
	work := filepath.Join(w.opts.Dir, "work", task.Coordinator+"-"+strconv.FormatInt(task.Campaign, 10))
	_, m, err := build.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if m.Kind == build.KindTest {
		h, err := testHost(dir, work, p, w.opts.Log)
		if err != nil {
			return nil, err
		}
		h.bundle, h.work = dir, work
		return h, nil
	}
	bd, err := build.OpenBundle(dir)
	if err != nil {
		return nil, err
	}
	// The campaign's config goes beside the bundle's own, so its relative
	// paths mean what they mean in the bundle.
	confFile := filepath.Join(dir, task.Config+".yaml")
	if _, err := os.Stat(confFile); err != nil {
		data, err := w.obj.GetBytes(ctx, task.Config)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", task.Config, err)
		}
		if "config-"+digest(data) != task.Config {
			return nil, fmt.Errorf("config %s: the object's digest is %s", task.Config, digest(data))
		}
		if err := os.WriteFile(confFile, data, 0o644); err != nil {
			return nil, fmt.Errorf("config %s: %w", task.Config, err)
		}
	}
	cfg, err := config.Open(confFile, config.Known{Policies: policy.Names(), Checkers: check.Names()}, "workdir="+work)
	if err != nil {
		return nil, err
	}
	bt, err := bd.Built(cfg)
	if err != nil {
		return nil, err
	}
	for i := 1; i <= cfg.Cluster.Nodes; i++ {
		p.nodes = append(p.nodes, cluster.NodeName(i))
	}
	h, err := campaign.NewHost(cfg, bt, task.Campaign, p, w.opts.Log)
	if err != nil {
		return nil, err
	}
	return &host{Host: h, proxy: p, bundle: dir, work: work}, nil
}

// testHost sets up the runs of a test campaign's trials from the test
// bundle in dir, under work, their policy p: each task names its test,
// its hang bound and its live sites.
func testHost(dir, work string, p *proxy, log *slog.Logger) (*host, error) {
	b, err := gotest.OpenBundle(dir)
	if err != nil {
		return nil, err
	}
	h, err := gotest.NewHost(b, work, p, log)
	if err != nil {
		return nil, err
	}
	p.nodes = []string{h.Node()}
	return &host{Host: h, test: true, proxy: p}, nil
}

// trial runs task's trial on h and judges it against baseline: its
// record, whose Dir holds its files, and what the record does not carry.
func (h *host) trial(ctx context.Context, task Task, baseline *record.LogBaseline) (*record.Trial, Outcome, error) {
	if h.test && (task.Test == "" || task.Reach == nil) {
		return nil, Outcome{}, fmt.Errorf("%w: trial %s of a test bundle names no test or no live sites", errDrop, task.ID)
	}
	res, err := h.Trial(ctx, engine.RemoteJob{
		Campaign: task.Campaign, Index: task.Index, ID: task.ID, Bound: task.Bound, Baseline: baseline,
		PolicyName: task.Policy, Test: task.Test, Reach: task.Reach, Again: task.Again,
		LeftChecked: task.LeftChecked, Left: task.Left,
	})
	if err != nil {
		return nil, Outcome{}, err
	}
	return res.Trial, Outcome{Blocks: res.Blocks, Members: res.Members, MemberRequests: res.MemberRequests, MemberSends: res.MemberSends}, nil
}

// bundle returns the directory of the bundle object name, fetched and
// unpacked once (the name holds its digest).
func (w *worker) bundle(ctx context.Context, name string) (string, error) {
	dir := filepath.Join(w.opts.Dir, "bundles", name)
	if _, err := os.Stat(filepath.Join(dir, build.BundleManifest)); err == nil {
		return dir, nil
	}
	data, err := w.obj.GetBytes(ctx, name)
	if err != nil {
		return "", fmt.Errorf("bundle %s: %w", name, err)
	}
	if "bundle-"+digest(data) != name {
		return "", fmt.Errorf("bundle %s: the object's digest is %s", name, digest(data))
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := unpackTree(data, tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("bundle %s: %w", name, err)
	}
	w.opts.Log.Info("queue: bundle fetched", "bundle", name, "bytes", len(data))
	return dir, nil
}
