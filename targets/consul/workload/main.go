// Command workload is gofault's workload for a three-server Consul cluster
// (targets/consul): one HTTP client per server (each talking to that server
// only, as an agent or application would) drives a seeded mix on Consul's
// key-value store — writes (put, delete; a follower forwards them to the
// leader over Consul's RPC) and reads of Consul's three consistency modes
// (consistent: linearizable, the leader confirms its leadership with a
// quorum first; default: the leader's state under its lease; stale: the
// server's own state) — records the linearizable operations for the
// linearizability checker, reports each server's role for the gray-failure
// checker and the calibration trial, and checks these guarantees itself
// (violation names are stable):
//
//   - recovery: once the load stops, a server serves no consistent read and
//     write within CONSUL_WORKLOAD_RECOVERY.
//
// Phases: setup (every server knows a leader), load (the mix for
// CONSUL_WORKLOAD_DURATION), verify (the recovery check, then a consistent
// read of every key, so a write acknowledged and then lost shows in the
// history), digest (once the servers agree on their raft applied index, or
// after a short wait: each caught-up server's digest of its own key-value
// state, read with ?stale, for the replicas checker). Every choice derives
// from GOFAULT_SEED.
//
// Environment, beside the workload contract (see package workload):
//
//	CONSUL_WORKLOAD_DURATION  length of the load phase (default 4s)
//	CONSUL_WORKLOAD_KEYS      number of keys (default 5)
//	CONSUL_WORKLOAD_RATE      operations per second per client (default 40)
//	CONSUL_WORKLOAD_RECOVERY  recovery bound of the verify phase (default 8s)
//	CONSUL_WORKLOAD_PORT      name of the servers' HTTP port (default "http")
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

func main() { workload.Main(run) }

// checkRecovery is the name of the guarantee the verify phase checks.
const checkRecovery = "recovery"

// prefix is where the workload's keys live in Consul's key-value store.
const prefix = "gofault/"

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
		duration: s.Duration("CONSUL_WORKLOAD_DURATION", 4*time.Second),
		recovery: s.Duration("CONSUL_WORKLOAD_RECOVERY", 8*time.Second),
		keys:     s.Int("CONSUL_WORKLOAD_KEYS", 5),
		rate:     s.Int("CONSUL_WORKLOAD_RATE", 40),
		port:     s.String("CONSUL_WORKLOAD_PORT", "http"),
	}
	if err := s.Err(); err != nil {
		return c, err
	}
	if c.keys < 1 || c.rate < 1 {
		return c, errors.New("CONSUL_WORKLOAD_KEYS and CONSUL_WORKLOAD_RATE must be at least 1")
	}
	return c, nil
}

func run(ctx context.Context, t *workload.T) error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	var clients []*client
	for i, n := range t.Nodes() {
		addr := n.Addr(cfg.port)
		if addr == "" {
			return fmt.Errorf("node %s has no %q port (set CONSUL_WORKLOAD_PORT)", n.Name, cfg.port)
		}
		clients = append(clients, &client{
			cfg:  cfg,
			wc:   t.Client(n.Name),
			base: "http://" + addr,
			http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}},
			rng:  rand.New(rand.NewPCG(uint64(t.Seed()), uint64(i))),
		})
	}
	if err := t.Phase("setup", func(ctx context.Context) error {
		return workload.Each(clients, func(c *client) error { return c.waitLeader(ctx) })
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
	return t.Phase("digest", func(ctx context.Context) error { return digests(ctx, clients) })
}

// digestWait bounds how long the digest phase waits for the servers to
// agree on their applied index.
const digestWait = 3 * time.Second

// serverState is what a server says of its own state.
type serverState struct {
	applied uint64 // raft applied index (agent/self, Stats.raft.applied_index)
	digest  string // of its key-value pairs under prefix, read with ?stale
}

// digests waits until every server that answers has applied the same raft
// index (or digestWait passed), then reports the digest of each server at
// the highest index for the replicas checker.
func digests(ctx context.Context, clients []*client) error {
	deadline := time.Now().Add(digestWait)
	for {
		sts := make([]*serverState, len(clients))
		workload.Each(clients, func(c *client) error {
			sts[c.index(clients)] = c.state(ctx)
			return nil
		})
		var top uint64
		same := true
		for _, st := range sts {
			if st != nil {
				if top != 0 && st.applied != top {
					same = false
				}
				top = max(top, st.applied)
			}
		}
		if same || time.Now().After(deadline) || ctx.Err() != nil {
			for i, st := range sts {
				if st != nil && st.applied == top {
					clients[i].wc.Digest("end", fmt.Sprintf("applied %d kv %s", st.applied, st.digest))
				}
			}
			return ctx.Err()
		}
		workload.Sleep(ctx, 100*time.Millisecond)
	}
}

// kvPair is one entry of Consul's GET /v1/kv answer.
type kvPair struct {
	Key         string `json:"Key"`
	Value       []byte `json:"Value"` // base64 in JSON
	CreateIndex uint64 `json:"CreateIndex"`
	ModifyIndex uint64 `json:"ModifyIndex"`
}

// kvDigest is a digest of key-value pairs in any order: each key with its
// value and the raft indices that created and last modified it, which are
// the same on every server that applied the same log.
func kvDigest(pairs []kvPair) string {
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].Key < pairs[j].Key })
	h := sha256.New()
	for _, p := range pairs {
		fmt.Fprintf(h, "%q=%q@%d/%d\n", p.Key, p.Value, p.CreateIndex, p.ModifyIndex)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// client talks to one server.
type client struct {
	cfg    config
	wc     *workload.Client
	base   string
	http   *http.Client
	rng    *rand.Rand
	seq    int
	health time.Time
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
func (c *client) do(ctx context.Context, method, path, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	if err != nil {
		return "", err
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

// leader returns the leader's address as the server knows it, "" when it
// knows none.
func (c *client) leader(ctx context.Context) (string, error) {
	out, err := c.do(ctx, http.MethodGet, "/v1/status/leader", "")
	if err != nil {
		return "", err
	}
	var addr string
	if err := json.Unmarshal([]byte(out), &addr); err != nil {
		return "", fmt.Errorf("status/leader: %w", err)
	}
	return addr, nil
}

// waitLeader waits until the server knows a leader (workload.Client.Setup:
// the attempts that fail while the cluster elects are not client errors).
func (c *client) waitLeader(ctx context.Context) error {
	err := c.wc.Setup(ctx, "leader", func(ctx context.Context) error {
		addr, err := c.leader(ctx)
		if err == nil && addr == "" {
			err = errors.New("no leader yet")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s never knew a leader: %w", c.wc.Node(), err)
	}
	return nil
}

func (c *client) key() string { return fmt.Sprintf("k%d", c.rng.IntN(c.cfg.keys)) }

func (c *client) nextValue() string {
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
		case r < 35:
			c.get(ctx, key)
		case r < 45:
			c.read(ctx, key, "default")
		case r < 55:
			c.read(ctx, key, "stale")
		case r < 90:
			c.put(ctx, key)
		default:
			c.del(ctx, key)
		}
		workload.Sleep(ctx, pause)
	}
}

// value decodes a GET /v1/kv/KEY answer.
func value(body string) (string, error) {
	var pairs []kvPair
	if err := json.Unmarshal([]byte(body), &pairs); err != nil {
		return "", fmt.Errorf("kv answer: %w", err)
	}
	if len(pairs) != 1 {
		return "", fmt.Errorf("kv answer: %d pairs", len(pairs))
	}
	return string(pairs[0].Value), nil
}

// get is a consistent (linearizable) read, recorded in the history.
func (c *client) get(ctx context.Context, key string) error {
	_, err := c.wc.DoOp(ctx, record.Op{Kind: "get", Key: key}, func(ctx context.Context) (string, error) {
		out, err := c.do(ctx, http.MethodGet, "/v1/kv/"+prefix+key+"?consistent", "")
		var es *errStatus
		if errors.As(err, &es) && es.code == http.StatusNotFound {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return value(out)
	})
	return err
}

// read is a default (leader lease) or stale read: not linearizable, so not
// in the history. A default read needs a leader, so its success is
// progress; a stale read is the server's own state, served even without a
// leader, so only its failure is reported.
func (c *client) read(ctx context.Context, key, mode string) {
	path := "/v1/kv/" + prefix + key
	if mode == "stale" {
		path += "?stale"
	}
	fn := func(ctx context.Context) error {
		_, err := c.do(ctx, http.MethodGet, path, "")
		var es *errStatus
		if errors.As(err, &es) && es.code == http.StatusNotFound {
			return nil
		}
		return err
	}
	if mode == "default" {
		_ = c.wc.Do(ctx, "default-read", key, fn)
		return
	}
	rctx, cancel := context.WithTimeout(ctx, workload.DefaultTimeout)
	defer cancel()
	if err := fn(rctx); err != nil && ctx.Err() == nil {
		c.wc.Error(fmt.Errorf("stale read %s: %w", key, err))
	}
}

// write sends one write; a put writes a value no other write writes.
func (c *client) write(ctx context.Context, op record.Op, method string) bool {
	if op.Kind == "put" {
		op.Value = c.nextValue()
	}
	_, err := c.wc.DoOp(ctx, op, func(ctx context.Context) (string, error) {
		out, err := c.do(ctx, method, "/v1/kv/"+prefix+op.Key, op.Value)
		if err == nil && strings.TrimSpace(out) != "true" {
			err = fmt.Errorf("kv %s answered %q", method, out)
		}
		return "", err
	})
	return err == nil
}

func (c *client) put(ctx context.Context, key string) bool {
	return c.write(ctx, record.Op{Kind: "put", Key: key}, http.MethodPut)
}

func (c *client) del(ctx context.Context, key string) {
	c.write(ctx, record.Op{Kind: "delete", Key: key}, http.MethodDelete)
}

// agentSelf is the part of GET /v1/agent/self the workload reads.
type agentSelf struct {
	Stats struct {
		Raft struct {
			State        string `json:"state"`
			AppliedIndex string `json:"applied_index"`
		} `json:"raft"`
	} `json:"Stats"`
}

// self reads the server's agent/self.
func (c *client) self(ctx context.Context) (*agentSelf, error) {
	out, err := c.do(ctx, http.MethodGet, "/v1/agent/self", "")
	if err != nil {
		return nil, err
	}
	var s agentSelf
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		return nil, fmt.Errorf("agent/self: %w", err)
	}
	return &s, nil
}

// state reads the server's applied index and the digest of its own
// key-value pairs; nil when it does not answer.
func (c *client) state(ctx context.Context) *serverState {
	rctx, cancel := context.WithTimeout(ctx, workload.DefaultTimeout)
	defer cancel()
	s, err := c.self(rctx)
	if err != nil {
		return nil
	}
	applied, err := strconv.ParseUint(s.Stats.Raft.AppliedIndex, 10, 64)
	if err != nil {
		return nil
	}
	out, err := c.do(rctx, http.MethodGet, "/v1/kv/"+prefix+"?recurse&stale", "")
	var es *errStatus
	var pairs []kvPair
	switch {
	case errors.As(err, &es) && es.code == http.StatusNotFound: // no key at all
	case err != nil:
		return nil
	default:
		if json.Unmarshal([]byte(out), &pairs) != nil {
			return nil
		}
	}
	return &serverState{applied: applied, digest: kvDigest(pairs)}
}

// reportHealth reports the server's role: the leader says so (the
// calibration trial kills it), a server that knows a leader is healthy.
func (c *client) reportHealth(ctx context.Context) {
	c.health = time.Now()
	rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	s, err := c.self(rctx)
	if err == nil && s.Stats.Raft.State == "Leader" {
		c.wc.Leader()
		return
	}
	addr, lerr := c.leader(rctx)
	switch {
	case err == nil && lerr == nil && addr != "":
		c.wc.Health(true, "leader "+addr)
	case err == nil && lerr == nil:
		c.wc.Health(false, "no leader")
	case ctx.Err() == nil:
		c.wc.Health(false, "status: "+errors.Join(err, lerr).Error())
	}
}

// verify checks that the server serves a consistent read and a write again
// within the recovery bound, then reads every key once more.
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
				c.wc.Violation(checkRecovery, fmt.Sprintf("node %s served no consistent read and write within %s after the load stopped", c.wc.Node(), c.cfg.recovery))
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
