// Command workload is gofault's workload for the hashicorp/raft key-value
// service (targets/raft/node): one HTTP client per member (each talking to
// that member only) drives a seeded mix of writes (put, delete,
// compare-and-swap, forwarded to the leader by followers) and reads of the
// three consistencies (linearizable through a Barrier, leader through
// VerifyLeader, stale from the member's own state), records the
// linearizable operations for the linearizability checker, reports each
// member's role for the gray-failure checker and the calibration trial, and
// checks these guarantees itself (violation names are stable):
//
//   - write-lost: a write whose response was received (so it committed) is
//     not in the state of a member that has applied everything the
//     cluster committed;
//   - write-applied-twice: a write (acknowledged or not; each has a unique
//     request ID and the service never retries) applied more than once;
//   - entry-reapplied: raft handed the state machine a log entry at or
//     below an index it had already applied;
//   - recovery: once the load stops, a member serves no linearizable read
//     and write within RAFT_WORKLOAD_RECOVERY.
//
// Phases: setup (every member answers /health, i.e. knows a leader), load
// (the mix for RAFT_WORKLOAD_DURATION), verify (the recovery check, a final
// linearizable read of every key), digest (once the members agree on the
// last applied command, or after a short wait: each caught-up member's
// state digest for the replicas checker, and the write checks above).
// Every choice derives from GOFAULT_SEED.
//
// Environment, beside the workload contract (see package workload):
//
//	RAFT_WORKLOAD_DURATION  length of the load phase (default 4s)
//	RAFT_WORKLOAD_KEYS      number of keys (default 5)
//	RAFT_WORKLOAD_RATE      operations per second per client (default 50)
//	RAFT_WORKLOAD_RECOVERY  recovery bound of the verify phase (default 8s)
//	RAFT_WORKLOAD_PORT      name of the members' HTTP port (default "http")
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

func main() { workload.Main(run) }

// Guarantee names reported with violations (checker "violations").
const (
	checkLost      = "write-lost"
	checkTwice     = "write-applied-twice"
	checkReapplied = "entry-reapplied"
	checkRecovery  = "recovery"
)

// config is the workload's tunables.
type config struct {
	duration time.Duration
	recovery time.Duration
	keys     int
	rate     int
	port     string
}

func loadConfig(getenv func(string) string) (config, error) {
	s := workload.NewSettings(getenv)
	c := config{
		duration: s.Duration("RAFT_WORKLOAD_DURATION", 4*time.Second),
		recovery: s.Duration("RAFT_WORKLOAD_RECOVERY", 8*time.Second),
		keys:     s.Int("RAFT_WORKLOAD_KEYS", 5),
		rate:     s.Int("RAFT_WORKLOAD_RATE", 50),
		port:     s.String("RAFT_WORKLOAD_PORT", "http"),
	}
	if err := s.Err(); err != nil {
		return c, err
	}
	if c.keys < 1 || c.rate < 1 {
		return c, errors.New("RAFT_WORKLOAD_KEYS and RAFT_WORKLOAD_RATE must be at least 1")
	}
	return c, nil
}

func run(ctx context.Context, t *workload.T) error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	writes := &ledger{acked: map[string]bool{}}
	var clients []*client
	for i, n := range t.Nodes() {
		addr := n.Addr(cfg.port)
		if addr == "" {
			return fmt.Errorf("node %s has no %q port (set RAFT_WORKLOAD_PORT)", n.Name, cfg.port)
		}
		clients = append(clients, &client{
			cfg:    cfg,
			wc:     t.Client(n.Name),
			base:   "http://" + addr,
			http:   &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}},
			rng:    rand.New(rand.NewPCG(uint64(t.Seed()), uint64(i))),
			last:   map[string]string{},
			writes: writes,
		})
	}
	if err := t.Phase("setup", func(ctx context.Context) error {
		return workload.Each(clients, func(c *client) error { return c.waitHealthy(ctx) })
	}); err != nil {
		return err
	}
	if err := t.Phase("load", func(ctx context.Context) error {
		lctx, cancel := context.WithTimeout(ctx, cfg.duration)
		defer cancel()
		workload.Each(clients, func(c *client) error { c.load(lctx); return nil })
		return ctx.Err()
	}); err != nil {
		return err
	}
	if err := t.Phase("verify", func(ctx context.Context) error {
		workload.Each(clients, func(c *client) error { c.verify(ctx); return nil })
		return ctx.Err()
	}); err != nil {
		return err
	}
	return t.Phase("digest", func(ctx context.Context) error { return digests(ctx, clients, writes) })
}

// ledger is every write the clients sent: acked[id] is true once its
// response was received, false while (or if) its outcome is unknown.
type ledger struct {
	mu    sync.Mutex
	acked map[string]bool
}

func (l *ledger) sent(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked[id] = false
}

func (l *ledger) ack(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked[id] = true
}

// memberStatus is a member's GET /status?writes=1.
type memberStatus struct {
	Role      string         `json:"role"`
	Index     uint64         `json:"index"`
	Digest    string         `json:"digest"`
	Reapplied int            `json:"reapplied"`
	Writes    map[string]int `json:"writes"`
}

// digestWait bounds how long the digest phase waits for the members to
// agree on their last applied command.
const digestWait = 3 * time.Second

// digests waits until every member that answers has applied the same last
// command (or digestWait passed), then, for each member at the highest
// index, reports its digest for the replicas checker and checks every
// write against its write counts.
func digests(ctx context.Context, clients []*client, writes *ledger) error {
	deadline := time.Now().Add(digestWait)
	for {
		sts := make([]*memberStatus, len(clients))
		workload.Each(clients, func(c *client) error {
			sts[c.index(clients)] = c.status(ctx)
			return nil
		})
		var top uint64
		same := true
		for _, st := range sts {
			if st != nil {
				if top != 0 && st.Index != top {
					same = false
				}
				top = max(top, st.Index)
			}
		}
		if same || time.Now().After(deadline) || ctx.Err() != nil {
			for i, st := range sts {
				if st != nil && st.Index == top {
					c := clients[i]
					c.wc.Digest("end", fmt.Sprintf("index %d state %s", st.Index, st.Digest))
					for _, f := range checkWrites(st, writes) {
						c.wc.Violation(f.check, f.msg)
					}
				}
			}
			return ctx.Err()
		}
		workload.Sleep(ctx, 100*time.Millisecond)
	}
}

// finding is one broken guarantee.
type finding struct{ check, msg string }

// checkWrites checks a caught-up member's write counts against the
// ledger: every acknowledged write applied exactly once, no write applied
// twice, no entry reapplied.
func checkWrites(st *memberStatus, writes *ledger) []finding {
	writes.mu.Lock()
	defer writes.mu.Unlock()
	var lost, twice []string
	for id, acked := range writes.acked {
		n := st.Writes[id]
		switch {
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s×%d", id, n))
		case n == 0 && acked:
			lost = append(lost, id)
		}
	}
	var fs []finding
	if len(lost) > 0 {
		fs = append(fs, finding{checkLost, fmt.Sprintf("%d acknowledged writes missing at index %d: %s", len(lost), st.Index, sample(lost))})
	}
	if len(twice) > 0 {
		fs = append(fs, finding{checkTwice, fmt.Sprintf("%d writes applied more than once at index %d: %s", len(twice), st.Index, sample(twice))})
	}
	if st.Reapplied > 0 {
		fs = append(fs, finding{checkReapplied, fmt.Sprintf("%d log entries applied at or below an index already applied", st.Reapplied)})
	}
	return fs
}

// sample lists up to five items, sorted.
func sample(items []string) string {
	sort.Strings(items)
	if len(items) > 5 {
		return strings.Join(items[:5], ", ") + ", …"
	}
	return strings.Join(items, ", ")
}

// client talks to one member.
type client struct {
	cfg    config
	wc     *workload.Client
	base   string
	http   *http.Client
	rng    *rand.Rand
	seq    int
	last   map[string]string // the last value this client saw per key
	health time.Time
	writes *ledger
}

func (c *client) index(clients []*client) int {
	for i := range clients {
		if clients[i] == c {
			return i
		}
	}
	return -1
}

// errStatus is a non-2xx answer.
type errStatus struct {
	code int
	msg  string
}

func (e *errStatus) Error() string { return fmt.Sprintf("%d %s", e.code, e.msg) }

// do sends one request and returns the body of a 2xx answer.
func (c *client) do(ctx context.Context, method, path, id, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	if id != "" {
		req.Header.Set("X-Request-ID", id)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", &errStatus{code: resp.StatusCode, msg: strings.TrimSpace(string(b))}
	}
	return string(b), nil
}

// waitHealthy waits until the member knows a leader (workload.Client.Setup:
// the attempts that fail while the cluster elects are not client errors).
func (c *client) waitHealthy(ctx context.Context) error {
	err := c.wc.Setup(ctx, "health", func(ctx context.Context) error {
		_, err := c.do(ctx, http.MethodGet, "/health", "", "")
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s never knew a leader: %w", c.wc.Node(), err)
	}
	return nil
}

func (c *client) key() string { return fmt.Sprintf("k%d", c.rng.IntN(c.cfg.keys)) }

func (c *client) nextID() string {
	c.seq++
	return fmt.Sprintf("%s#%d", c.wc.Name(), c.seq)
}

// load runs the random mix until ctx ends.
func (c *client) load(ctx context.Context) {
	pause := time.Second / time.Duration(c.cfg.rate)
	for ctx.Err() == nil {
		if time.Since(c.health) >= 250*time.Millisecond {
			c.reportHealth(ctx)
		}
		key := c.key()
		switch r := c.rng.IntN(100); {
		case r < 30:
			c.get(ctx, key)
		case r < 40:
			c.read(ctx, key, "leader")
		case r < 50:
			c.read(ctx, key, "stale")
		case r < 70:
			c.put(ctx, key)
		case r < 75:
			c.del(ctx, key)
		default:
			c.cas(ctx, key)
		}
		workload.Sleep(ctx, pause)
	}
}

// get is a linearizable read, recorded in the history.
func (c *client) get(ctx context.Context, key string) error {
	out, err := c.wc.DoOp(ctx, record.Op{Kind: "get", Key: key}, func(ctx context.Context) (string, error) {
		v, err := c.do(ctx, http.MethodGet, "/kv/"+key, "", "")
		var es *errStatus
		if errors.As(err, &es) && es.code == http.StatusNotFound {
			return "", nil
		}
		return v, err
	})
	if err == nil {
		c.last[key] = out
	}
	return err
}

// read is a leader or stale read: not linearizable, so not in the history.
// A leader read needs a quorum (VerifyLeader), so its success is progress;
// a stale read is the member's own state, served even without a leader, so
// only its failure is reported.
func (c *client) read(ctx context.Context, key, consistency string) {
	fn := func(ctx context.Context) error {
		_, err := c.do(ctx, http.MethodGet, "/kv/"+key+"?read="+consistency, "", "")
		var es *errStatus
		if errors.As(err, &es) && es.code == http.StatusNotFound {
			return nil
		}
		return err
	}
	if consistency == "leader" {
		_ = c.wc.Do(ctx, "leader-read", key, fn)
		return
	}
	rctx, cancel := context.WithTimeout(ctx, workload.DefaultTimeout)
	defer cancel()
	if err := fn(rctx); err != nil && ctx.Err() == nil {
		c.wc.Error(fmt.Errorf("stale read %s: %w", key, err))
	}
}

// write sends one write with a fresh request ID and records it in the
// ledger; it returns the answer and whether it was received.
func (c *client) write(ctx context.Context, op record.Op, method, path string) (string, bool) {
	id := c.nextID()
	if op.Kind != "delete" {
		op.Value = id
	}
	c.writes.sent(id)
	out, err := c.wc.DoOp(ctx, op, func(ctx context.Context) (string, error) {
		out, err := c.do(ctx, method, path, id, op.Value)
		if op.Kind != "cas" {
			out = ""
		}
		return out, err
	})
	if err != nil {
		return "", false
	}
	c.writes.ack(id)
	switch {
	case op.Kind == "put", op.Kind == "cas" && out == "true":
		c.last[op.Key] = id
	case op.Kind == "delete":
		c.last[op.Key] = ""
	case op.Kind == "cas":
		delete(c.last, op.Key) // learn the value with the next get
	}
	return out, true
}

func (c *client) put(ctx context.Context, key string) bool {
	_, ok := c.write(ctx, record.Op{Kind: "put", Key: key}, http.MethodPut, "/kv/"+key)
	return ok
}

func (c *client) del(ctx context.Context, key string) {
	c.write(ctx, record.Op{Kind: "delete", Key: key}, http.MethodDelete, "/kv/"+key)
}

// cas swaps key from the value this client last saw to a new one.
func (c *client) cas(ctx context.Context, key string) {
	expect := c.last[key]
	c.write(ctx, record.Op{Kind: "cas", Key: key, Expect: expect}, http.MethodPost, "/cas/"+key+"?expect="+url.QueryEscape(expect))
}

// status reads the member's status with its write counts; nil when it does
// not answer.
func (c *client) status(ctx context.Context) *memberStatus {
	rctx, cancel := context.WithTimeout(ctx, workload.DefaultTimeout)
	defer cancel()
	out, err := c.do(rctx, http.MethodGet, "/status?writes=1", "", "")
	var st memberStatus
	if err != nil || json.Unmarshal([]byte(out), &st) != nil {
		return nil
	}
	return &st
}

// reportHealth reports the member's role: the leader says so (the
// calibration trial kills it), a member that knows a leader is healthy.
func (c *client) reportHealth(ctx context.Context) {
	c.health = time.Now()
	rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	out, err := c.do(rctx, http.MethodGet, "/status", "", "")
	var st struct {
		Role   string `json:"role"`
		Leader string `json:"leader"`
	}
	switch {
	case err == nil && json.Unmarshal([]byte(out), &st) == nil && st.Role == "Leader":
		c.wc.Leader()
	case err == nil && st.Leader != "":
		c.wc.Health(true, "leader "+st.Leader)
	case err == nil:
		c.wc.Health(false, "no leader")
	case ctx.Err() == nil:
		c.wc.Health(false, "status: "+err.Error())
	}
}

// verify checks that the member serves a linearizable read and a write
// again within the recovery bound, then reads every key once more.
func (c *client) verify(ctx context.Context) {
	vctx, cancel := context.WithTimeout(ctx, c.cfg.recovery)
	defer cancel()
	start := time.Now()
	for {
		if c.get(vctx, "k0") == nil && c.put(vctx, "k0") {
			break
		}
		if vctx.Err() != nil {
			if ctx.Err() == nil {
				c.wc.Violation(checkRecovery, fmt.Sprintf("node %s served no linearizable read and write within %s after the load stopped", c.wc.Node(), c.cfg.recovery))
			}
			return
		}
		workload.Sleep(vctx, 100*time.Millisecond)
	}
	if d := time.Since(start); d > time.Second {
		c.wc.Progress(fmt.Sprintf("recovered after %s", d.Round(time.Millisecond)))
	}
	for i := 1; i < c.cfg.keys; i++ {
		_ = c.get(ctx, fmt.Sprintf("k%d", i))
	}
}
