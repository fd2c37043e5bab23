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
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofault/gofault/workload"
)

func main() { workload.Main(run) }

// prefix is where the workload's keys live in Consul's key-value store.
const prefix = "gofault/"

// vars are the workload's variables, beside the workload contract.
var vars = workload.KVVars{Duration: "CONSUL_WORKLOAD_DURATION", Recovery: "CONSUL_WORKLOAD_RECOVERY",
	Keys: "CONSUL_WORKLOAD_KEYS", Rate: "CONSUL_WORKLOAD_RATE", Port: "CONSUL_WORKLOAD_PORT"}

func loadConfig(getenv func(string) string) (workload.KVConfig, error) {
	s := workload.NewSettings(getenv)
	c := s.KV(vars, workload.KVConfig{Duration: 4 * time.Second, Recovery: 8 * time.Second, Keys: 5, Rate: 40, Port: "http"})
	return c, s.Err()
}

// mix is the load: consistent reads, default and stale reads, puts and
// deletes (Consul's compare-and-swap is not used).
var mix = workload.Mix{
	Get:    35,
	Reads:  []workload.Read{{Consistency: "default", Percent: 10, Progress: true}, {Consistency: "stale", Percent: 10}},
	Put:    35,
	Delete: 10,
}

// service is how the workload speaks to a server: /v1/kv/gofault/KEY, a
// consistent read with ?consistent and a stale one with ?stale, values
// decoded from Consul's JSON, writes answered "true".
var service = &workload.KVService{
	KeyPath: kvPath,
	GetPath: func(key string) string { return kvPath(key) + "?consistent" },
	Value:   value,
	ReadPath: func(key, mode string) string {
		if mode == "stale" {
			return kvPath(key) + "?stale"
		}
		return kvPath(key)
	},
	Written: func(method, body string) error {
		if strings.TrimSpace(body) != "true" {
			return fmt.Errorf("kv %s answered %q", method, body)
		}
		return nil
	},
	Status:     status,
	VerifyRead: "consistent read",
}

func kvPath(key string) string { return "/v1/kv/" + prefix + key }

func run(ctx context.Context, t *workload.T) error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	clients, err := workload.NewKVClients(t, service, cfg.Port, cfg.Keys)
	if err != nil {
		return fmt.Errorf("%w (set CONSUL_WORKLOAD_PORT)", err)
	}
	return workload.RunKV(t, clients, workload.KVPhases{
		KVConfig: cfg, Ready: waitLeader, Mix: mix,
		Digest: func(ctx context.Context) error { return digests(ctx, clients) },
	})
}

// digestWait bounds how long the digest phase waits for the servers to
// agree on their applied index.
const digestWait = 3 * time.Second

// digests waits until every server that answers has applied the same raft
// index (or digestWait passed), then reports the digest of each server at
// the highest index for the replicas checker: the digest of its own
// key-value pairs under prefix, read with ?stale.
func digests(ctx context.Context, clients []*workload.KVClient) error {
	top, err := workload.CaughtUp(ctx, len(clients), digestWait, func(ctx context.Context, i int) (string, uint64, bool) {
		return state(ctx, clients[i])
	})
	for _, m := range top {
		clients[m.Member].Client().Digest("end", fmt.Sprintf("applied %d kv %s", m.Index, m.State))
	}
	return err
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

// leader returns the leader's address as the server knows it, "" when it
// knows none.
func leader(ctx context.Context, c *workload.KVClient) (string, error) {
	out, err := c.Do(ctx, http.MethodGet, "/v1/status/leader", "", "")
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
func waitLeader(ctx context.Context, c *workload.KVClient) error {
	err := c.Client().Setup(ctx, "leader", func(ctx context.Context) error {
		addr, err := leader(ctx, c)
		if err == nil && addr == "" {
			err = errors.New("no leader yet")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s never knew a leader: %w", c.Client().Node(), err)
	}
	return nil
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
func self(ctx context.Context, c *workload.KVClient) (*agentSelf, error) {
	out, err := c.Do(ctx, http.MethodGet, "/v1/agent/self", "", "")
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
// key-value pairs; false when it does not answer.
func state(ctx context.Context, c *workload.KVClient) (string, uint64, bool) {
	rctx, cancel := context.WithTimeout(ctx, workload.DefaultTimeout)
	defer cancel()
	s, err := self(rctx, c)
	if err != nil {
		return "", 0, false
	}
	applied, err := strconv.ParseUint(s.Stats.Raft.AppliedIndex, 10, 64)
	if err != nil {
		return "", 0, false
	}
	out, err := c.Do(rctx, http.MethodGet, "/v1/kv/"+prefix+"?recurse&stale", "", "")
	var pairs []kvPair
	switch {
	case workload.IsStatus(err, http.StatusNotFound): // no key at all
	case err != nil:
		return "", 0, false
	default:
		if json.Unmarshal([]byte(out), &pairs) != nil {
			return "", 0, false
		}
	}
	return kvDigest(pairs), applied, true
}

// status reads the server's role: the leader says so (agent/self), a
// server that knows a leader is healthy.
func status(ctx context.Context, c *workload.KVClient) (workload.NodeHealth, error) {
	s, err := self(ctx, c)
	if err == nil && s.Stats.Raft.State == "Leader" {
		return workload.NodeHealth{Leader: true}, nil
	}
	addr, lerr := leader(ctx, c)
	switch {
	case err == nil && lerr == nil && addr != "":
		return workload.NodeHealth{OK: true, Msg: "leader " + addr}, nil
	case err == nil && lerr == nil:
		return workload.NodeHealth{Msg: "no leader"}, nil
	}
	return workload.NodeHealth{}, errors.Join(err, lerr)
}
