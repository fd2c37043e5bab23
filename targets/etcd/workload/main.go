// Command workload is gofault's etcd workload: one etcd client per node
// (each talking to that node only) drives a trial-sized mix of the client
// API users call — KV get/put/delete, prefix ranges with a limit, prefix
// deletes, compare-and-swap and multi-op transactions with several
// compares; leases (grant, keep-alive, revoke, keys attached to leases);
// watches with progress notifications, long-lived and started from old
// revisions, with RequestProgress; frequent compaction and defragmentation;
// and the maintenance calls Status, AlarmList, HashKV and MemberList — and
// reports every request's progress or error, a KV history for the
// linearizability checker (single-key get/put/delete/cas on kv/k*: the
// multi-key writes go to kv/m/, outside it), and violations of etcd's
// documented guarantees (the checker names are stable):
//
//   - revision-monotonic: a response header revision a client saw went
//     backwards: a request sent after a response with revision r returned
//     a revision below r (the client talks to one member, also across its
//     crash and restart; etcd #17780, #14685);
//   - watch-order: a watch event older than one delivered before it, or
//     than the watch's start revision;
//   - watch-duplicate: the same key at the same revision delivered twice;
//   - watch-lost-event: a write whose response was received (so it
//     committed), in the watched range, at or below the revision the watch
//     reached by events or progress notifications, never delivered — a
//     PUT or a DELETE (etcd #19179, #18089, #17529). A watch cancelled
//     with ErrCompacted resumes from the compaction revision, and the
//     compacted revisions are excused; a watch that silently skips is not.
//     Writes whose outcome is unknown may or may not appear;
//   - watch-mismatch: an event differs from the write at its revision
//     (another key, a PUT for a DELETE, another value);
//   - watch-atomic: one revision's events split over two responses;
//   - watch-progress: a progress notification went backwards or came
//     below the revision the running watch call started from (a stale
//     RequestProgress response, etcd v3.5.35), an event arrived at or
//     below a revision a progress notification had already declared
//     complete, or a notification that came before any event of its
//     watch call declared delivered events the watch never got (the same
//     stale response on a new watch: the loss is the notification's, and
//     one finding apart from watch-lost-event's);
//   - lease-keepalive: a key on a lease that was being kept alive vanished
//     before the lease could have expired;
//   - lease-revoke: a key on a revoked lease was still there.
//
// It runs in four phases: setup (connect, grant the long-lived leases,
// start the watchers), mixed (the random mix — each client opens with
// every operation of the mix, maintenance once per call, in random order —
// with compaction and defragmentation, for ETCD_WORKLOAD_DURATION), verify (final reads,
// revoke the leases, check the watchers against the acknowledged writes)
// and digest (every member's HashKV). Its choices are deterministic given
// GOFAULT_SEED.
//
// Environment, beside the workload contract (see package workload):
//
//	ETCD_WORKLOAD_DURATION         length of the mixed phase (default 3s); the
//	                               runner may end it earlier (workload.adaptive_end)
//	ETCD_WORKLOAD_KEYS             number of KV keys (default 5)
//	ETCD_WORKLOAD_RATE             operations per second per client (default 100)
//	ETCD_WORKLOAD_PORT             name of the nodes' client port (default "client")
//	ETCD_WORKLOAD_MIX              weights of the operations, e.g. "get=30,put=20"
//	                               (unnamed ones get 0; default "get=25,put=15,
//	                               delete=7,cas=18,range=6,txn=8,delete-range=3,
//	                               lease-check=5,lease-cycle=4,watch-old=3,
//	                               progress=3,maintenance=3")
//	ETCD_WORKLOAD_COMPACT_EVERY    compact this often, alternately to the last
//	                               revision written one interval ago and to the
//	                               last acknowledged write (default 1s; 0: never)
//	ETCD_WORKLOAD_COMPACT_TO       "lag" (the last revision written one interval
//	                               ago), "latest" (the last acknowledged write)
//	                               or "both", alternately (default both)
//	ETCD_WORKLOAD_COMPACT_PHYSICAL "true": wait for physical compaction (default false)
//	ETCD_WORKLOAD_DEFRAG_EVERY     defragment one member (in turn) this often
//	                               (default 2s; 0: never)
//	ETCD_WORKLOAD_SKIP_CHECKS      guarantees checked but not reported (logged
//	                               instead), a comma list of the names above;
//	                               known-bug scenarios use it to keep an older
//	                               release's unrelated bug out (default none)
//
// The operations of the mix: get, put, delete, cas (single keys, in the
// history), range (a prefix range with a limit), txn (two compares, then
// two puts and a delete, else a put and a get), delete-range (a prefix
// delete), lease-check (read the kept-alive lease's key), lease-cycle
// (grant, attach, revoke, read), watch-old (a watch from a random earlier
// revision, for up to 2s), progress (RequestProgress on the client's watch
// stream) and maintenance (Status, AlarmList, HashKV, MemberList in turn).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

func main() { workload.Main(run) }

const (
	kvPrefix = "kv/"
	// multiPrefix holds the keys of the multi-key writes (txn,
	// delete-range): under kvPrefix, so watched, but apart from the
	// single-key registers of the linearizability history.
	multiPrefix = kvPrefix + "m/"
	leasePrefix = "lease/"
	// leaseTTL is the long-lived leases' TTL in seconds; they are kept
	// alive every leaseTTL/3.
	leaseTTL = 6
	// expiryMargin absorbs the lessor's expiry granularity (it checks
	// every 500 ms, and can only expire late).
	expiryMargin = 500 * time.Millisecond
	// setupBudget bounds connecting in the setup phase.
	setupBudget = 10 * time.Second
	// setupGrace is how long setup waits for the other nodes once one
	// answered.
	setupGrace = 2 * time.Second
	// catchUp bounds how long verify waits for watchers to see every write.
	catchUp = 3 * time.Second
	// healthEvery is how often a client asks its node for its status.
	healthEvery = 500 * time.Millisecond
	// oldWatchFor bounds a watch-old watch.
	oldWatchFor = 2 * time.Second
)

// The operations of the mix.
const (
	opGet = iota
	opPut
	opDelete
	opCAS
	opRange
	opTxn
	opDeleteRange
	opLeaseCheck
	opLeaseCycle
	opWatchOld
	opProgress
	opMaintenance
	numOps
)

var opNames = [numOps]string{"get", "put", "delete", "cas", "range", "txn", "delete-range", "lease-check", "lease-cycle", "watch-old", "progress", "maintenance"}

// mix is the weight of each operation.
type mix [numOps]int

var defaultMix = mix{25, 15, 7, 18, 6, 8, 3, 5, 4, 3, 3, 3}

// parseMix reads "get=30,put=20,…"; operations not named get 0.
func parseMix(v string) (mix, error) {
	w, err := workload.ParseWeights("ETCD_WORKLOAD_MIX", v, opNames[:])
	if err != nil {
		return mix{}, err
	}
	return mix(w), nil
}

// String returns the mix in ETCD_WORKLOAD_MIX's form.
func (m *mix) String() string { return workload.FormatWeights(opNames[:], m[:]) }

// deck deals the mix to one client: every operation with a weight once
// (maintenance once per call of maintenanceCalls), in random order, then
// operations drawn by weight.
func (m *mix) deck(rng *rand.Rand) *workload.Deck {
	var times [numOps]int
	times[opMaintenance] = len(maintenanceCalls)
	return workload.NewDeck(rng, m[:], times[:])
}

// config is the workload's tunables.
type config struct {
	duration        time.Duration
	keys            int
	rate            int
	port            string
	mix             mix
	compactEvery    time.Duration // 0: never
	compactPhysical bool
	defragEvery     time.Duration   // 0: never
	compactTo       string          // compactBoth, compactLag or compactLatest
	skip            map[string]bool // guarantees checked but not reported
}

// The compaction targets of ETCD_WORKLOAD_COMPACT_TO.
const (
	// compactLag compacts to the last revision written one interval
	// before.
	compactLag = "lag"
	// compactLatest compacts to the last acknowledged write, often the
	// store's latest revision, maybe a tombstone.
	compactLatest = "latest"
	// compactBoth alternates between the two.
	compactBoth = "both"
)

func loadConfig(getenv func(string) string) (config, error) {
	s := workload.NewSettings(getenv)
	c := config{
		duration: s.Duration("ETCD_WORKLOAD_DURATION", 3*time.Second),
		keys:     s.Int("ETCD_WORKLOAD_KEYS", 5),
		rate:     s.Int("ETCD_WORKLOAD_RATE", 100),
		port:     s.String("ETCD_WORKLOAD_PORT", "client"),
		mix:      defaultMix,
	}
	var errs []error
	if v := s.String("ETCD_WORKLOAD_MIX", ""); v != "" {
		m, err := parseMix(v)
		errs = append(errs, err)
		c.mix = m
	}
	var err error
	c.compactEvery, err = interval(s, "ETCD_WORKLOAD_COMPACT_EVERY", time.Second)
	errs = append(errs, err)
	c.defragEvery, err = interval(s, "ETCD_WORKLOAD_DEFRAG_EVERY", 2*time.Second)
	errs = append(errs, err)
	if v := s.String("ETCD_WORKLOAD_COMPACT_PHYSICAL", "false"); v != "" {
		c.compactPhysical, err = strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("ETCD_WORKLOAD_COMPACT_PHYSICAL=%q: want true or false", v))
		}
	}
	switch c.compactTo = s.String("ETCD_WORKLOAD_COMPACT_TO", compactBoth); c.compactTo {
	case compactBoth, compactLag, compactLatest:
	default:
		errs = append(errs, fmt.Errorf("ETCD_WORKLOAD_COMPACT_TO=%q: want %s, %s or %s", c.compactTo, compactBoth, compactLag, compactLatest))
	}
	c.skip, err = parseSkip(s.String("ETCD_WORKLOAD_SKIP_CHECKS", ""))
	errs = append(errs, err)
	if err := s.Err(); err != nil {
		return c, err
	}
	return c, errors.Join(errs...)
}

// interval reads a duration variable in which 0 means never.
func interval(s *workload.Settings, name string, def time.Duration) (time.Duration, error) {
	v := s.String(name, "")
	if v == "" {
		return def, nil
	}
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return def, fmt.Errorf("%s=%q: want a duration like 1s, or 0 for never", name, v)
	}
	return d, nil
}

func run(ctx context.Context, t *workload.T) error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	slog.Info("etcd workload", "duration", cfg.duration, "keys", cfg.keys, "rate", cfg.rate, "mix", cfg.mix.String(),
		"compact_every", cfg.compactEvery, "compact_to", cfg.compactTo, "compact_physical", cfg.compactPhysical,
		"defrag_every", cfg.defragEvery, "skip_checks", slices.Sorted(maps.Keys(cfg.skip)))
	w, err := newWorkload(t, cfg)
	if err != nil {
		return err
	}
	defer w.close()
	if err := t.Phase("setup", w.setup); err != nil {
		return err
	}
	if err := t.Phase("mixed", w.mixed); err != nil {
		return err
	}
	if err := t.Phase("verify", w.verify); err != nil {
		return err
	}
	return t.Phase("digest", w.digest)
}

// wl is one run of the workload.
type wl struct {
	t         *workload.T
	cfg       config
	clients   []*client
	keys      []string // the single-key registers
	multiKeys []string // the keys of multi-key writes, under multiPrefix

	mu       sync.Mutex
	writes   truth // every acknowledged write under kvPrefix
	maxWrite int64
	startRev int64 // watchers start after this revision

	compactRev atomic.Int64 // the last compaction's revision
}

func newWorkload(t *workload.T, cfg config) (*wl, error) {
	w := &wl{t: t, cfg: cfg, writes: truth{}}
	for i := 0; i < cfg.keys; i++ {
		w.keys = append(w.keys, fmt.Sprintf("%sk%d", kvPrefix, i))
	}
	for i := 0; i < max(3, cfg.keys); i++ {
		w.multiKeys = append(w.multiKeys, fmt.Sprintf("%s%d", multiPrefix, i))
	}
	for i, n := range t.Nodes() {
		addr := n.Addr(cfg.port)
		if addr == "" {
			return nil, fmt.Errorf("node %s has no %q port", n.Name, cfg.port)
		}
		wc := t.Client(n.Name)
		rng := rand.New(rand.NewPCG(uint64(t.Seed()), uint64(i)))
		w.clients = append(w.clients, &client{
			w:        w,
			wc:       wc,
			endpoint: "http://" + addr,
			rng:      rng,
			deck:     cfg.mix.deck(rng),
			leaseKey: leasePrefix + wc.Name(),
			last:     map[string]string{},
		})
	}
	return w, nil
}

func (w *wl) close() {
	for _, c := range w.clients {
		c.close()
	}
}

// noteWrite records an acknowledged write, made of changes at revision
// rev, that every watcher must see.
func (w *wl) noteWrite(rev int64, changes ...change) {
	if len(changes) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes[rev] = changes
	if rev > w.maxWrite {
		w.maxWrite = rev
	}
}

// lastWrite is the revision of the last acknowledged write.
func (w *wl) lastWrite() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxWrite
}

// readyClients returns the clients that are connected, for the
// workload-wide jobs (compaction, defragmentation).
func (w *wl) readyClients() []*client {
	var cs []*client
	for _, c := range w.clients {
		if c.isReady.Load() {
			cs = append(cs, c)
		}
	}
	return cs
}

// each runs fn for every client concurrently (workload.Each) and waits
// for all.
func (w *wl) each(fn func(c *client)) {
	_ = workload.Each(w.clients, func(c *client) error { fn(c); return nil })
}

// setup connects every client, grants each a kept-alive lease with a key on
// it, and starts the watchers from one common revision. It waits for the
// cluster with workload.Client.Setup, so the attempts that fail while the
// cluster settles are not client errors. It fails only when no client could
// connect: a node that is down is the fault under test, and its client
// keeps trying in the mixed phase.
func (w *wl) setup(ctx context.Context) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ready atomic.Int32
	var rev atomic.Int64
	var once sync.Once
	var grace *time.Timer
	defer func() {
		if grace != nil {
			grace.Stop()
		}
	}()
	w.each(func(c *client) {
		c.wc.SetupTimeout = setupBudget
		r, err := c.waitReady(sctx)
		if err != nil {
			return
		}
		ready.Add(1)
		for old := rev.Load(); r > old && !rev.CompareAndSwap(old, r); old = rev.Load() {
		}
		// Once one node answers, the others get a short grace: a node
		// that is down is the fault under test, not a reason to delay
		// the trial.
		once.Do(func() { grace = time.AfterFunc(setupGrace, cancel) })
	})
	if ready.Load() == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		return errors.New("no etcd node answered within " + setupBudget.String())
	}
	w.startRev = rev.Load()
	w.each(func(c *client) {
		if c.isReady.Load() {
			c.grantLease(ctx)
			c.startWatch(w.startRev + 1)
		}
	})
	return ctx.Err()
}

// mixed runs the random mix on every client, and compaction and
// defragmentation beside it, for the configured duration (or less, when
// the runner ends the load early: workload.T.Load).
func (w *wl) mixed(ctx context.Context) error {
	mctx, cancel := w.t.Load(ctx, w.cfg.duration)
	defer cancel()
	var bg sync.WaitGroup
	if w.cfg.compactEvery > 0 {
		bg.Go(func() { w.compactLoop(mctx) })
	}
	if w.cfg.defragEvery > 0 {
		bg.Go(func() { w.defragLoop(mctx) })
	}
	w.each(func(c *client) {
		c.mix(mctx)
		c.oldWG.Wait() // the watch-old watches end with mctx
	})
	bg.Wait()
	return ctx.Err()
}

// compactLoop compacts every compactEvery, through each connected member
// in turn, alternately to the last revision written an interval before (as
// etcd's periodic compactor keeps one interval of history) and to the last
// acknowledged write (often the store's latest revision, maybe a
// tombstone: etcd #17780 lost revisions after a crash during such a
// compaction). The digest phase hashes at the last write's revision, which
// a compaction keeps.
func (w *wl) compactLoop(ctx context.Context) {
	tick := time.NewTicker(w.cfg.compactEvery)
	defer tick.Stop()
	var prev, done int64
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		target, last := prev, w.lastWrite()
		prev = last
		if w.cfg.compactTo == compactLatest || w.cfg.compactTo == compactBoth && i%2 == 1 {
			target = last
		}
		if target <= done {
			continue
		}
		cs := w.readyClients()
		if len(cs) == 0 {
			continue
		}
		if cs[i%len(cs)].compact(ctx, target) == nil {
			done = target
			w.compactRev.Store(target)
			slog.Info("compacted", "revision", target)
		}
	}
}

// defragLoop defragments one connected member, in turn, every
// defragEvery.
func (w *wl) defragLoop(ctx context.Context) {
	tick := time.NewTicker(w.cfg.defragEvery)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if cs := w.readyClients(); len(cs) > 0 {
			cs[i%len(cs)].defragment(ctx)
		}
	}
}

// verify reads every key once more, checks and revokes the leases and
// checks that every watcher saw every acknowledged write in order.
func (w *wl) verify(ctx context.Context) error {
	w.each(func(c *client) {
		if !c.isReady.Load() {
			return
		}
		// A node that fails a request is down or cut off: one error says
		// so, and waiting for the others would only lengthen the trial.
		for _, k := range w.keys {
			if c.get(ctx, k) != nil {
				c.down = true
				c.stopKeepAlive()
				return
			}
		}
		if c.checkLeaseKey(ctx) != nil {
			c.down = true
			c.stopKeepAlive()
			return
		}
		c.revokeLease(ctx)
	})
	// Every write has returned: the ground truth is final.
	target := w.lastWrite()
	w.mu.Lock()
	writes := w.writes
	w.mu.Unlock()
	w.each(func(c *client) {
		if c.watch == nil {
			return
		}
		if !c.down {
			c.watch.waitFor(ctx, target, catchUp)
		}
		c.watch.check(writes, target, true)
		for _, o := range c.olds {
			o.check(writes, 0, false)
		}
	})
	return ctx.Err()
}

// digest reports every reachable member's HashKV at the revision of the
// last acknowledged write, for the replicas checker: members that applied
// the same history have the same hash there. A member that has not reached
// the revision yet is waited for briefly; one that stays behind or cannot
// be reached reports nothing (it is the hang checker's).
func (w *wl) digest(ctx context.Context) error {
	w.mu.Lock()
	rev := w.maxWrite
	w.mu.Unlock()
	if rev == 0 {
		return nil
	}
	w.each(func(c *client) {
		if !c.isReady.Load() || c.down {
			return
		}
		for deadline := time.Now().Add(catchUp); ; {
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			resp, err := c.cli.HashKV(rctx, c.endpoint, rev)
			cancel()
			if err == nil {
				c.wc.Digest("last write", fmt.Sprintf("rev %d compact %d hash %d", rev, resp.CompactRevision, resp.Hash))
				return
			}
			if ctx.Err() != nil || time.Now().After(deadline) {
				return
			}
			workload.Sleep(ctx, 100*time.Millisecond) // not caught up yet
		}
	})
	return ctx.Err()
}

// client is one etcd client, talking to one node.
type client struct {
	w        *wl
	wc       *workload.Client
	endpoint string
	rng      *rand.Rand
	deck     *workload.Deck // the mixed phase's operations
	cli      *clientv3.Client
	isReady  atomic.Bool // connected and answered once; cli is set
	seq      int
	last     map[string]string // last value this client saw per key
	revs     revFloor          // the revisions of the responses
	revBad   atomic.Int32      // revision-monotonic findings reported
	maint    int               // the next maintenance call

	lease    clientv3.LeaseID
	leaseKey string
	// keptUntil is the unix-nano time before which the lease cannot have
	// expired: send time of the last successful keep-alive plus its TTL.
	keptUntil atomic.Int64
	health    time.Time
	down      bool // a verify request failed: the node is unreachable
	kaStop    context.CancelFunc
	kaWG      sync.WaitGroup

	watch     *watcher
	watchStop context.CancelFunc
	watchWG   sync.WaitGroup

	olds    []*watcher // the watch-old watches, checked in verify
	oldBusy atomic.Bool
	oldWG   sync.WaitGroup
}

func (c *client) connect() error {
	if c.cli != nil {
		return nil
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            []string{c.endpoint},
		DialTimeout:          workload.DefaultTimeout,
		DialKeepAliveTime:    time.Second,
		DialKeepAliveTimeout: workload.DefaultTimeout,
		Logger:               zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("connect %s: %w", c.endpoint, err)
	}
	c.cli = cli
	return nil
}

func (c *client) close() {
	c.stopKeepAlive()
	if c.watchStop != nil {
		c.watchStop()
	}
	c.watchWG.Wait()
	c.oldWG.Wait()
	if c.cli != nil {
		c.cli.Close()
	}
}

// ready connects and reads the KV prefix once, returning the revision; a
// failure is a client error (the mixed phase's retries of a node that was
// down at setup).
func (c *client) ready(ctx context.Context) (int64, error) {
	var rev int64
	err := c.wc.Do(ctx, "connect", "", func(ctx context.Context) (err error) {
		rev, err = c.readOnce(ctx)
		return err
	})
	c.isReady.Store(err == nil)
	return rev, err
}

// waitReady is ready for the setup phase: it retries until the node
// answers, and only giving up is a client error.
func (c *client) waitReady(ctx context.Context) (int64, error) {
	var rev int64
	err := c.wc.Setup(ctx, "connect", func(ctx context.Context) (err error) {
		rev, err = c.readOnce(ctx)
		return err
	})
	c.isReady.Store(err == nil)
	return rev, err
}

// readOnce connects and reads the KV prefix's count, returning the
// revision.
func (c *client) readOnce(ctx context.Context) (int64, error) {
	if err := c.connect(); err != nil {
		return 0, err
	}
	at := c.revs.begin()
	resp, err := c.cli.Get(ctx, kvPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	c.sawRev(at, resp.Header.GetRevision(), "count "+kvPrefix)
	return resp.Header.Revision, nil
}

// grantLease grants the client's long-lived lease, puts its key on it and
// starts keeping it alive.
func (c *client) grantLease(ctx context.Context) {
	err := c.wc.Do(ctx, "lease-grant", c.leaseKey, func(ctx context.Context) error {
		sent := time.Now()
		resp, err := c.cli.Grant(ctx, leaseTTL)
		if err != nil {
			return err
		}
		c.lease = resp.ID
		c.keptUntil.Store(sent.Add(time.Duration(resp.TTL) * time.Second).UnixNano())
		_, err = c.cli.Put(ctx, c.leaseKey, "alive", clientv3.WithLease(resp.ID))
		return err
	})
	if err != nil {
		c.lease = 0
		return
	}
	kctx, cancel := context.WithCancel(context.Background())
	c.kaStop = cancel
	c.kaWG.Add(1)
	go func() {
		defer c.kaWG.Done()
		c.keepAlive(kctx)
	}()
}

func (c *client) stopKeepAlive() {
	if c.kaStop != nil {
		c.kaStop()
	}
	c.kaWG.Wait()
}

// keepAlive renews the lease every TTL/3 with KeepAliveOnce, so the send
// time of each renewal is known.
func (c *client) keepAlive(ctx context.Context) {
	tick := time.NewTicker(leaseTTL * time.Second / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_ = c.wc.Do(ctx, "lease-keepalive", c.leaseKey, func(ctx context.Context) error {
			sent := time.Now()
			resp, err := c.cli.KeepAliveOnce(ctx, c.lease)
			if err != nil {
				return err
			}
			if resp.TTL <= 0 {
				return errors.New("lease not found")
			}
			c.keptUntil.Store(sent.Add(time.Duration(resp.TTL) * time.Second).UnixNano())
			return nil
		})
	}
}

// checkLeaseKey reads the lease key: it must exist while the lease cannot
// have expired.
func (c *client) checkLeaseKey(ctx context.Context) error {
	if c.lease == 0 {
		return nil
	}
	return c.wc.Do(ctx, "lease-check", c.leaseKey, func(ctx context.Context) error {
		at := c.revs.begin()
		resp, err := c.cli.Get(ctx, c.leaseKey)
		if err != nil {
			return err
		}
		c.sawRev(at, resp.Header.GetRevision(), "get "+c.leaseKey)
		done := time.Now()
		if len(resp.Kvs) == 0 {
			if until := time.Unix(0, c.keptUntil.Load()); done.Add(expiryMargin).Before(until) {
				c.violation(checkLeaseKeepAlive, fmt.Sprintf("key %s on lease %x is gone at revision %d although the lease was kept alive until at least %s",
					c.leaseKey, int64(c.lease), resp.Header.Revision, until.UTC().Format(time.StampMilli)))
			}
		}
		return nil
	})
}

// revokeLease revokes the long-lived lease; its key must be gone after.
func (c *client) revokeLease(ctx context.Context) {
	if c.lease == 0 {
		return
	}
	c.stopKeepAlive()
	c.revokeAndCheck(ctx, c.lease, c.leaseKey)
	c.lease = 0
}

// revokeAndCheck revokes lease and checks that key, which was on it, is
// gone.
func (c *client) revokeAndCheck(ctx context.Context, lease clientv3.LeaseID, key string) {
	if c.wc.Do(ctx, "lease-revoke", key, func(ctx context.Context) error {
		_, err := c.cli.Revoke(ctx, lease)
		return err
	}) != nil {
		return
	}
	_ = c.wc.Do(ctx, "lease-revoke-check", key, func(ctx context.Context) error {
		at := c.revs.begin()
		resp, err := c.cli.Get(ctx, key)
		if err != nil {
			return err
		}
		c.sawRev(at, resp.Header.GetRevision(), "get "+key)
		if len(resp.Kvs) > 0 {
			c.violation(checkLeaseRevoke, fmt.Sprintf("key %s still on lease %x at revision %d after the lease was revoked",
				key, int64(resp.Kvs[0].Lease), resp.Header.Revision))
		}
		return nil
	})
}

// shortLease grants a lease, puts a key on it, revokes it and checks the
// key is gone.
func (c *client) shortLease(ctx context.Context) {
	key := fmt.Sprintf("%s%s/tmp%d", leasePrefix, c.wc.Name(), c.seq)
	c.seq++
	var lease clientv3.LeaseID
	if c.wc.Do(ctx, "lease-grant", key, func(ctx context.Context) error {
		resp, err := c.cli.Grant(ctx, 30)
		if err != nil {
			return err
		}
		lease = resp.ID
		_, err = c.cli.Put(ctx, key, "tmp", clientv3.WithLease(lease))
		return err
	}) != nil {
		if lease != 0 {
			// Do not leave the lease behind if the put failed.
			_ = c.wc.Do(ctx, "lease-revoke", key, func(ctx context.Context) error {
				_, err := c.cli.Revoke(ctx, lease)
				return err
			})
		}
		return
	}
	c.revokeAndCheck(ctx, lease, key)
}

// mix runs random operations at the configured rate until ctx ends.
func (c *client) mix(ctx context.Context) {
	pause := time.Second / time.Duration(c.w.cfg.rate)
	for ctx.Err() == nil {
		if !c.isReady.Load() {
			if _, err := c.ready(ctx); err != nil {
				workload.Sleep(ctx, 200*time.Millisecond)
				continue
			}
			c.startWatch(c.w.startRev + 1)
		}
		if time.Since(c.health) >= healthEvery {
			c.reportHealth(ctx)
		}
		key := c.w.keys[c.rng.IntN(len(c.w.keys))]
		switch c.deck.Next() {
		case opGet:
			_ = c.get(ctx, key)
		case opPut:
			c.put(ctx, key)
		case opDelete:
			c.del(ctx, key)
		case opCAS:
			c.cas(ctx, key)
		case opRange:
			c.rangeLimit(ctx)
		case opTxn:
			c.txn(ctx)
		case opDeleteRange:
			c.deleteRange(ctx)
		case opLeaseCheck:
			_ = c.checkLeaseKey(ctx)
		case opLeaseCycle:
			c.shortLease(ctx)
		case opWatchOld:
			c.watchOld(ctx)
		case opProgress:
			c.requestProgress(ctx)
		case opMaintenance:
			c.maintenance(ctx)
		}
		workload.Sleep(ctx, pause)
	}
}

func (c *client) value() string {
	c.seq++
	return fmt.Sprintf("%s#%d", c.wc.Name(), c.seq)
}

// sawRev checks the revision of the response to request what, sent at
// floor at; a client reports at most maxFindings of these.
func (c *client) sawRev(at floor, rev int64, what string) {
	if f := c.revs.end(at, rev, what); f != nil && c.revBad.Add(1) <= maxFindings {
		c.violation(f.check, c.wc.Name()+": "+f.msg)
	}
}

func (c *client) get(ctx context.Context, key string) error {
	out, err := c.wc.DoOp(ctx, record.Op{Kind: "get", Key: key}, func(ctx context.Context) (string, error) {
		at := c.revs.begin()
		resp, err := c.cli.Get(ctx, key)
		if err != nil {
			return "", err
		}
		c.sawRev(at, resp.Header.GetRevision(), "get "+key)
		if len(resp.Kvs) == 0 {
			return "", nil
		}
		return string(resp.Kvs[0].Value), nil
	})
	if err == nil {
		c.last[key] = out
	}
	return err
}

func (c *client) put(ctx context.Context, key string) {
	v := c.value()
	_, err := c.wc.DoOp(ctx, record.Op{Kind: "put", Key: key, Value: v}, func(ctx context.Context) (string, error) {
		at := c.revs.begin()
		resp, err := c.cli.Put(ctx, key, v)
		if err != nil {
			return "", err
		}
		c.sawRev(at, resp.Header.GetRevision(), "put "+key)
		c.w.noteWrite(resp.Header.Revision, change{key: key, value: v})
		return "", nil
	})
	if err == nil {
		c.last[key] = v
	}
}

func (c *client) del(ctx context.Context, key string) {
	_, err := c.wc.DoOp(ctx, record.Op{Kind: "delete", Key: key}, func(ctx context.Context) (string, error) {
		at := c.revs.begin()
		resp, err := c.cli.Delete(ctx, key)
		if err != nil {
			return "", err
		}
		c.sawRev(at, resp.Header.GetRevision(), "delete "+key)
		if resp.Deleted > 0 {
			c.w.noteWrite(resp.Header.Revision, change{key: key, del: true})
		}
		return "", nil
	})
	if err == nil {
		c.last[key] = ""
	}
}

// cas swaps key from the value this client last saw to a new one with a
// transaction comparing the value ("" compares the key's absence).
func (c *client) cas(ctx context.Context, key string) {
	expect, v := c.last[key], c.value()
	out, err := c.wc.DoOp(ctx, record.Op{Kind: "cas", Key: key, Value: v, Expect: expect}, func(ctx context.Context) (string, error) {
		cmp := clientv3.Compare(clientv3.Value(key), "=", expect)
		if expect == "" {
			cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		}
		at := c.revs.begin()
		resp, err := c.cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, v)).Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return "", err
		}
		c.sawRev(at, resp.Header.GetRevision(), "cas "+key)
		if resp.Succeeded {
			c.w.noteWrite(resp.Header.Revision, change{key: key, value: v})
			return "true", nil
		}
		// Learn the current value for the next attempt.
		cur := ""
		if rr := resp.Responses[0].GetResponseRange(); rr != nil && len(rr.Kvs) > 0 {
			cur = string(rr.Kvs[0].Value)
		}
		c.last[key] = cur
		return "false", nil
	})
	if err == nil && out == "true" {
		c.last[key] = v
	}
}

// rangeLimit reads a random number of keys of the KV prefix.
func (c *client) rangeLimit(ctx context.Context) {
	limit := int64(1 + c.rng.IntN(len(c.w.keys)+len(c.w.multiKeys)))
	_ = c.wc.Do(ctx, "range", kvPrefix, func(ctx context.Context) error {
		at := c.revs.begin()
		resp, err := c.cli.Get(ctx, kvPrefix, clientv3.WithPrefix(), clientv3.WithLimit(limit))
		if err != nil {
			return err
		}
		c.sawRev(at, resp.Header.GetRevision(), fmt.Sprintf("range %s limit %d", kvPrefix, limit))
		return nil
	})
}

// txn runs a transaction over three distinct multi-key keys a, b, d: if a
// exists (and b's mod revision is below MaxInt64, always), put a and b and
// delete d, else put a and read d. Every branch writes, so it makes one
// revision, with all its changes known from the response.
func (c *client) txn(ctx context.Context) {
	ks := c.w.multiKeys
	i := c.rng.IntN(len(ks))
	a, b, d := ks[i], ks[(i+1)%len(ks)], ks[(i+2)%len(ks)]
	va, vb := c.value(), c.value()
	_ = c.wc.Do(ctx, "txn", a, func(ctx context.Context) error {
		at := c.revs.begin()
		resp, err := c.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.Version(a), ">", 0), clientv3.Compare(clientv3.ModRevision(b), "<", math.MaxInt64)).
			Then(clientv3.OpPut(a, va), clientv3.OpPut(b, vb), clientv3.OpDelete(d, clientv3.WithPrevKV())).
			Else(clientv3.OpPut(a, va), clientv3.OpGet(d)).
			Commit()
		if err != nil {
			return err
		}
		rev := resp.Header.GetRevision()
		c.sawRev(at, rev, "txn on "+a)
		changes := []change{{key: a, value: va}}
		if resp.Succeeded {
			changes = append(changes, change{key: b, value: vb})
			if dr := resp.Responses[2].GetResponseDeleteRange(); dr != nil && dr.Deleted > 0 {
				changes = append(changes, change{key: d, del: true})
			}
		}
		c.w.noteWrite(rev, changes...)
		return nil
	})
}

// deleteRange deletes the multi-key prefix.
func (c *client) deleteRange(ctx context.Context) {
	_ = c.wc.Do(ctx, "delete-range", multiPrefix, func(ctx context.Context) error {
		at := c.revs.begin()
		resp, err := c.cli.Delete(ctx, multiPrefix, clientv3.WithPrefix(), clientv3.WithPrevKV())
		if err != nil {
			return err
		}
		c.sawRev(at, resp.Header.GetRevision(), "delete-range "+multiPrefix)
		var changes []change
		for _, kv := range resp.PrevKvs {
			changes = append(changes, change{key: string(kv.Key), del: true})
		}
		c.w.noteWrite(resp.Header.Revision, changes...)
		return nil
	})
}

// watchOld starts, unless one is running, a watch from a random earlier
// revision — as often before the last compaction as after it — that runs
// until it covers the last write or for oldWatchFor, and is checked in
// verify.
func (c *client) watchOld(ctx context.Context) {
	last := c.w.lastWrite()
	if last <= c.w.startRev || !c.oldBusy.CompareAndSwap(false, true) {
		return
	}
	lo := c.w.startRev + 1
	if cr := c.w.compactRev.Load(); cr > 0 {
		lo = max(lo, cr-(last-cr))
	}
	from := lo + c.rng.Int64N(last-lo+1)
	o := newWatcher(c, from)
	c.olds = append(c.olds, o)
	octx, cancel := context.WithTimeout(ctx, oldWatchFor)
	c.oldWG.Go(func() {
		defer c.oldBusy.Store(false)
		defer cancel()
		o.run(octx, last)
	})
}

// requestProgress asks the node for a progress notification on the
// client's watch stream (the watches' context key: WithRequireLeader).
func (c *client) requestProgress(ctx context.Context) {
	if c.watch == nil {
		return
	}
	_ = c.wc.Do(ctx, "watch-progress-request", kvPrefix, func(ctx context.Context) error {
		return c.cli.RequestProgress(clientv3.WithRequireLeader(ctx))
	})
}

// maintenanceCalls are the calls maintenance makes in turn.
var maintenanceCalls = [...]string{"status", "alarm-list", "hashkv", "member-list"}

// maintenance makes the next of the maintenance calls.
func (c *client) maintenance(ctx context.Context) {
	what := maintenanceCalls[c.maint%len(maintenanceCalls)]
	c.maint++
	_ = c.wc.Do(ctx, what, "", func(ctx context.Context) error {
		at := c.revs.begin()
		var rev int64
		switch what {
		case "status":
			resp, err := c.cli.Status(ctx, c.endpoint)
			if err != nil {
				return err
			}
			rev = resp.Header.GetRevision()
		case "alarm-list":
			resp, err := c.cli.AlarmList(ctx)
			if err != nil {
				return err
			}
			rev = resp.Header.GetRevision()
		case "hashkv":
			// At revision 0, the current one: the header carries it (at
			// another revision it carries that one).
			resp, err := c.cli.HashKV(ctx, c.endpoint, 0)
			if err != nil {
				return err
			}
			rev = resp.Header.GetRevision()
		case "member-list":
			resp, err := c.cli.MemberList(ctx)
			if err != nil {
				return err
			}
			rev = resp.Header.GetRevision()
		}
		c.sawRev(at, rev, what)
		return nil
	})
}

// compact compacts the store to revision rev through the client's member.
func (c *client) compact(ctx context.Context, rev int64) error {
	var opts []clientv3.CompactOption
	if c.w.cfg.compactPhysical {
		opts = append(opts, clientv3.WithCompactPhysical())
	}
	return c.wc.Do(ctx, "compact", "", func(ctx context.Context) error {
		at := c.revs.begin()
		resp, err := c.cli.Compact(ctx, rev, opts...)
		if errors.Is(err, rpctypes.ErrCompacted) {
			return nil // an earlier attempt, whose outcome was unknown, did it
		}
		if err != nil {
			return err
		}
		c.sawRev(at, resp.Header.GetRevision(), fmt.Sprintf("compact to %d", rev))
		return nil
	})
}

// defragment defragments the client's member.
func (c *client) defragment(ctx context.Context) {
	_ = c.wc.Do(ctx, "defragment", "", func(ctx context.Context) error {
		at := c.revs.begin()
		resp, err := c.cli.Defragment(ctx, c.endpoint)
		if err != nil {
			return err
		}
		c.sawRev(at, resp.Header.GetRevision(), "defragment")
		return nil
	})
}

// reportHealth asks the node for its status: healthy when it answers, knows
// a leader and reports no alarms.
func (c *client) reportHealth(ctx context.Context) {
	c.health = time.Now()
	rctx, cancel := context.WithTimeout(ctx, workload.DefaultTimeout)
	defer cancel()
	resp, err := c.cli.Status(rctx, c.endpoint)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			c.wc.Health(false, "status: "+err.Error())
		}
	case resp.Leader == 0:
		c.wc.Health(false, "no leader")
	case len(resp.Errors) > 0:
		c.wc.Health(false, fmt.Sprintf("errors: %v", resp.Errors))
	case resp.Header != nil && resp.Leader == resp.Header.MemberId:
		c.wc.Leader() // the calibration trial kills this member
	default:
		c.wc.Health(true, fmt.Sprintf("leader %x", resp.Leader))
	}
}

// startWatch starts the client's watcher on the KV prefix from revision
// from, once; it lives until the workload ends.
func (c *client) startWatch(from int64) {
	if c.watch != nil {
		return
	}
	c.watch = newWatcher(c, from)
	wctx, cancel := context.WithCancel(context.Background())
	c.watchStop = cancel
	c.watchWG.Go(func() { c.watch.run(wctx, 0) })
}
