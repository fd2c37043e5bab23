// Command workload is gofault's minikv workload: one HTTP client per node
// (each talking to that node only) drives a mix of get, put, delete and
// compare-and-swap on a few keys, records every operation for the
// linearizability checker and the node's own status for the gray-failure
// checker, and checks one guarantee itself:
//
//   - recovery: once the load stops, every node serves a linearizable read
//     and a write again within MINIKV_RECOVERY (a correct minikv recovers from any
//     single fault: a restarted node replays its log, a follower that lost
//     its leader follows it again at the next heartbeat).
//
// Phases: setup (every node answers /health within 10 s), load (the mix, for
// MINIKV_WORKLOAD_DURATION), verify (the recovery check and a final read of
// every key). Its choices are deterministic given GOFAULT_SEED.
//
// Environment, beside the workload contract (see package workload):
//
//	MINIKV_WORKLOAD_DURATION  length of the load phase (default 1500ms)
//	MINIKV_WORKLOAD_KEYS      number of keys (default 5)
//	MINIKV_WORKLOAD_RATE      operations per second per client (default 100)
//	MINIKV_RECOVERY           recovery bound of the verify phase (default 8s, beyond
//	                          the longest delay the policies inject by default)
//	MINIKV_WORKLOAD_PORT      name of the nodes' port (default "client")
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
	"strings"
	"sync"
	"time"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

func main() { workload.Main(run) }

// checkRecovery names the recovery guarantee in violations.
const checkRecovery = "recovery"

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
		duration: s.Duration("MINIKV_WORKLOAD_DURATION", 1500*time.Millisecond),
		recovery: s.Duration("MINIKV_RECOVERY", 8*time.Second),
		keys:     s.Int("MINIKV_WORKLOAD_KEYS", 5),
		rate:     s.Int("MINIKV_WORKLOAD_RATE", 100),
		port:     s.String("MINIKV_WORKLOAD_PORT", "client"),
	}
	return c, s.Err()
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
			return fmt.Errorf("node %s has no %q port", n.Name, cfg.port)
		}
		clients = append(clients, &client{
			cfg:  cfg,
			wc:   t.Client(n.Name),
			base: "http://" + addr,
			http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}},
			rng:  rand.New(rand.NewPCG(uint64(t.Seed()), uint64(i))),
			last: map[string]string{},
		})
	}
	if err := t.Phase("setup", func(ctx context.Context) error {
		return each(clients, func(c *client) error { return c.waitHealthy(ctx) })
	}); err != nil {
		return err
	}
	if err := t.Phase("load", func(ctx context.Context) error {
		lctx, cancel := context.WithTimeout(ctx, cfg.duration)
		defer cancel()
		each(clients, func(c *client) error { c.load(lctx); return nil })
		return ctx.Err()
	}); err != nil {
		return err
	}
	if err := t.Phase("verify", func(ctx context.Context) error {
		each(clients, func(c *client) error { c.verify(ctx); return nil })
		return ctx.Err()
	}); err != nil {
		return err
	}
	return t.Phase("digest", func(ctx context.Context) error { return digests(ctx, clients) })
}

// digests reports, for the replicas checker, the data digest of every
// member that has applied the most entries, once the members agree on that
// index or after a short wait: members at the same applied index must hold
// the same data. A member behind or unreachable reports nothing.
func digests(ctx context.Context, clients []*client) error {
	type status struct {
		Applied uint64 `json:"applied"`
		Digest  string `json:"digest"`
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		sts := make([]*status, len(clients))
		each(clients, func(c *client) error {
			out, err := c.do(ctx, http.MethodGet, "/status", "", "")
			var st status
			if err == nil && json.Unmarshal([]byte(out), &st) == nil {
				for i := range clients {
					if clients[i] == c {
						sts[i] = &st
					}
				}
			}
			return nil
		})
		var top uint64
		same := true
		for _, st := range sts {
			if st != nil {
				if top != 0 && st.Applied != top {
					same = false
				}
				top = max(top, st.Applied)
			}
		}
		if same || time.Now().After(deadline) || ctx.Err() != nil {
			for i, st := range sts {
				if st != nil && st.Applied == top {
					clients[i].wc.Digest("end", fmt.Sprintf("applied %d data %s", st.Applied, st.Digest))
				}
			}
			return ctx.Err()
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// each runs fn for every client concurrently and returns the first error.
func each(clients []*client, fn func(c *client) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// client talks to one node.
type client struct {
	cfg    config
	wc     *workload.Client
	base   string
	http   *http.Client
	rng    *rand.Rand
	seq    int
	last   map[string]string // last value this client saw per key
	health time.Time
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

// waitHealthy waits until the node answers /health (workload.Client.Setup:
// the attempts that fail while the node comes up are not client errors;
// giving up after workload.DefaultSetupTimeout is).
func (c *client) waitHealthy(ctx context.Context) error {
	err := c.wc.Setup(ctx, "health", func(ctx context.Context) error {
		_, err := c.do(ctx, http.MethodGet, "/health", "", "")
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s never became healthy: %w", c.wc.Node(), err)
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
		case r < 45:
			c.get(ctx, key)
		case r < 70:
			c.put(ctx, key)
		case r < 75:
			c.del(ctx, key)
		default:
			c.cas(ctx, key)
		}
		sleep(ctx, pause)
	}
}

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

func (c *client) put(ctx context.Context, key string) { c.putOK(ctx, key) }

// putOK writes a fresh value to key and reports whether it succeeded.
func (c *client) putOK(ctx context.Context, key string) bool {
	id := c.nextID()
	_, err := c.wc.DoOp(ctx, record.Op{Kind: "put", Key: key, Value: id}, func(ctx context.Context) (string, error) {
		_, err := c.do(ctx, http.MethodPut, "/kv/"+key, id, id)
		return "", err
	})
	if err == nil {
		c.last[key] = id
	}
	return err == nil
}

func (c *client) del(ctx context.Context, key string) {
	id := c.nextID()
	if _, err := c.wc.DoOp(ctx, record.Op{Kind: "delete", Key: key}, func(ctx context.Context) (string, error) {
		_, err := c.do(ctx, http.MethodDelete, "/kv/"+key, id, "")
		return "", err
	}); err == nil {
		c.last[key] = ""
	}
}

// cas swaps key from the value this client last saw to a new one.
func (c *client) cas(ctx context.Context, key string) {
	id, expect := c.nextID(), c.last[key]
	out, err := c.wc.DoOp(ctx, record.Op{Kind: "cas", Key: key, Value: id, Expect: expect}, func(ctx context.Context) (string, error) {
		return c.do(ctx, http.MethodPost, "/cas/"+key+"?expect="+url.QueryEscape(expect), id, id)
	})
	switch {
	case err == nil && out == "true":
		c.last[key] = id
	case err == nil:
		delete(c.last, key) // learn the value with the next get
	}
}

// reportHealth asks the node for its status.
func (c *client) reportHealth(ctx context.Context) {
	c.health = time.Now()
	rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	out, err := c.do(rctx, http.MethodGet, "/status", "", "")
	var es *errStatus
	var st struct {
		Role string `json:"role"`
	}
	switch {
	case err == nil && json.Unmarshal([]byte(out), &st) == nil && st.Role == "leader":
		c.wc.Leader() // the calibration trial kills this node
	case err == nil:
		c.wc.Health(true, "serving")
	case errors.As(err, &es):
		c.wc.Health(false, es.msg)
	case ctx.Err() == nil:
		c.wc.Health(false, "status: "+err.Error())
	}
}

// verify checks that the node serves a read and a write again within the
// recovery bound, then reads every key once more.
func (c *client) verify(ctx context.Context) {
	vctx, cancel := context.WithTimeout(ctx, c.cfg.recovery)
	defer cancel()
	start := time.Now()
	for {
		if c.get(vctx, "k0") == nil && c.putOK(vctx, "k0") {
			break
		}
		if vctx.Err() != nil {
			if ctx.Err() == nil {
				c.wc.Violation(checkRecovery, fmt.Sprintf("node %s served no read and write within %s after the load stopped", c.wc.Node(), c.cfg.recovery))
			}
			return
		}
		sleep(vctx, 100*time.Millisecond)
	}
	if d := time.Since(start); d > time.Second {
		c.wc.Progress(fmt.Sprintf("recovered after %s", d.Round(time.Millisecond)))
	}
	for i := 1; i < c.cfg.keys; i++ {
		_ = c.get(ctx, fmt.Sprintf("k%d", i))
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
