// Command workload is gofault's etcd workload: one etcd client per node
// (each talking to that node only) drives a trial-sized mix of KV
// get/put/delete and compare-and-swap transactions, leases (grant,
// keep-alive, revoke, keys attached to leases) and watches, and reports
// every request's progress or error, a KV history for the linearizability
// checker, and violations of etcd's documented guarantees:
//
//   - watch-order: a watcher saw events out of revision order, twice, or
//     skipped a write it must see;
//   - lease-keepalive: a key on a lease that was being kept alive vanished
//     before the lease could have expired;
//   - lease-revoke: a key on a revoked lease was still there.
//
// It runs in three phases: setup (connect, grant the long-lived leases,
// start the watchers), mixed (the random mix, for ETCD_WORKLOAD_DURATION)
// and verify (final reads, revoke the leases, check the watchers). Its
// choices are deterministic given GOFAULT_SEED.
//
// Environment, beside the workload contract (see package workload):
//
//	ETCD_WORKLOAD_DURATION  length of the mixed phase (default 3s)
//	ETCD_WORKLOAD_KEYS      number of KV keys (default 5)
//	ETCD_WORKLOAD_RATE      operations per second per client (default 100)
//	ETCD_WORKLOAD_PORT      name of the nodes' client port (default "client")
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

func main() { workload.Main(run) }

// Guarantee names reported with violations.
const (
	checkWatchOrder     = "watch-order"
	checkLeaseKeepAlive = "lease-keepalive"
	checkLeaseRevoke    = "lease-revoke"
)

const (
	kvPrefix    = "kv/"
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
)

// config is the workload's tunables.
type config struct {
	duration time.Duration
	keys     int
	rate     int
	port     string
}

func loadConfig(getenv func(string) string) (config, error) {
	s := workload.NewSettings(getenv)
	c := config{
		duration: s.Duration("ETCD_WORKLOAD_DURATION", 3*time.Second),
		keys:     s.Int("ETCD_WORKLOAD_KEYS", 5),
		rate:     s.Int("ETCD_WORKLOAD_RATE", 100),
		port:     s.String("ETCD_WORKLOAD_PORT", "client"),
	}
	return c, s.Err()
}

func run(ctx context.Context, t *workload.T) error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
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
	cfg     config
	clients []*client
	keys    []string

	mu       sync.Mutex
	writes   map[int64]string // revision → key of every acknowledged write under kvPrefix
	maxWrite int64
	startRev int64 // watchers start after this revision
}

func newWorkload(t *workload.T, cfg config) (*wl, error) {
	w := &wl{cfg: cfg, writes: map[int64]string{}}
	for i := 0; i < cfg.keys; i++ {
		w.keys = append(w.keys, fmt.Sprintf("%sk%d", kvPrefix, i))
	}
	for i, n := range t.Nodes() {
		addr := n.Addr(cfg.port)
		if addr == "" {
			return nil, fmt.Errorf("node %s has no %q port", n.Name, cfg.port)
		}
		wc := t.Client(n.Name)
		w.clients = append(w.clients, &client{
			w:        w,
			wc:       wc,
			endpoint: "http://" + addr,
			rng:      rand.New(rand.NewPCG(uint64(t.Seed()), uint64(i))),
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

// noteWrite records an acknowledged write that every watcher must see.
func (w *wl) noteWrite(rev int64, key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes[rev] = key
	if rev > w.maxWrite {
		w.maxWrite = rev
	}
}

// each runs fn for every client concurrently and waits for all.
func (w *wl) each(fn func(c *client)) {
	var wg sync.WaitGroup
	for _, c := range w.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(c)
		}()
	}
	wg.Wait()
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
		if c.isReady {
			c.grantLease(ctx)
			c.startWatch(w.startRev + 1)
		}
	})
	return ctx.Err()
}

// mixed runs the random mix on every client for the configured duration.
func (w *wl) mixed(ctx context.Context) error {
	mctx, cancel := context.WithTimeout(ctx, w.cfg.duration)
	defer cancel()
	w.each(func(c *client) { c.mix(mctx) })
	return ctx.Err()
}

// verify reads every key once more, checks and revokes the leases and
// checks that every watcher saw every acknowledged write in order.
func (w *wl) verify(ctx context.Context) error {
	w.each(func(c *client) {
		if !c.isReady {
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
	w.mu.Lock()
	target := w.maxWrite
	w.mu.Unlock()
	w.each(func(c *client) {
		if c.watch == nil {
			return
		}
		if !c.down {
			c.watch.waitFor(ctx, target, catchUp)
		}
		w.mu.Lock()
		writes := make(map[int64]string, len(w.writes))
		for r, k := range w.writes {
			writes[r] = k
		}
		w.mu.Unlock()
		c.watch.checkComplete(writes, target)
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
		if !c.isReady || c.down {
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
			sleep(ctx, 100*time.Millisecond) // not caught up yet
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
	cli      *clientv3.Client
	isReady  bool // connected and answered once
	seq      int
	last     map[string]string // last value this client saw per key

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
	c.isReady = err == nil
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
	c.isReady = err == nil
	return rev, err
}

// readOnce connects and reads the KV prefix's count, returning the
// revision.
func (c *client) readOnce(ctx context.Context) (int64, error) {
	if err := c.connect(); err != nil {
		return 0, err
	}
	resp, err := c.cli.Get(ctx, kvPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
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
		resp, err := c.cli.Get(ctx, c.leaseKey)
		if err != nil {
			return err
		}
		done := time.Now()
		if len(resp.Kvs) == 0 {
			if until := time.Unix(0, c.keptUntil.Load()); done.Add(expiryMargin).Before(until) {
				c.wc.Violation(checkLeaseKeepAlive, fmt.Sprintf("key %s on lease %x is gone at revision %d although the lease was kept alive until at least %s",
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
		resp, err := c.cli.Get(ctx, key)
		if err != nil {
			return err
		}
		if len(resp.Kvs) > 0 {
			c.wc.Violation(checkLeaseRevoke, fmt.Sprintf("key %s still on lease %x at revision %d after the lease was revoked",
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
		if !c.isReady {
			if _, err := c.ready(ctx); err != nil {
				sleep(ctx, 200*time.Millisecond)
				continue
			}
			c.startWatch(c.w.startRev + 1)
		}
		if time.Since(c.health) >= healthEvery {
			c.reportHealth(ctx)
		}
		key := c.w.keys[c.rng.IntN(len(c.w.keys))]
		switch r := c.rng.IntN(100); {
		case r < 30:
			_ = c.get(ctx, key)
		case r < 55:
			c.put(ctx, key)
		case r < 65:
			c.del(ctx, key)
		case r < 88:
			c.cas(ctx, key)
		case r < 95:
			_ = c.checkLeaseKey(ctx)
		default:
			c.shortLease(ctx)
		}
		sleep(ctx, pause)
	}
}

func (c *client) value() string {
	c.seq++
	return fmt.Sprintf("%s#%d", c.wc.Name(), c.seq)
}

func (c *client) get(ctx context.Context, key string) error {
	out, err := c.wc.DoOp(ctx, record.Op{Kind: "get", Key: key}, func(ctx context.Context) (string, error) {
		resp, err := c.cli.Get(ctx, key)
		if err != nil {
			return "", err
		}
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
		resp, err := c.cli.Put(ctx, key, v)
		if err != nil {
			return "", err
		}
		c.w.noteWrite(resp.Header.Revision, key)
		return "", nil
	})
	if err == nil {
		c.last[key] = v
	}
}

func (c *client) del(ctx context.Context, key string) {
	_, err := c.wc.DoOp(ctx, record.Op{Kind: "delete", Key: key}, func(ctx context.Context) (string, error) {
		resp, err := c.cli.Delete(ctx, key)
		if err != nil {
			return "", err
		}
		if resp.Deleted > 0 {
			c.w.noteWrite(resp.Header.Revision, key)
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
		resp, err := c.cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, v)).Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return "", err
		}
		if resp.Succeeded {
			c.w.noteWrite(resp.Header.Revision, key)
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
	c.watchWG.Add(1)
	go func() {
		defer c.watchWG.Done()
		c.watch.run(wctx)
	}()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
