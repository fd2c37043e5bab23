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
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/gofault/gofault/workload"
)

func main() { workload.Main(run) }

// vars are the workload's variables, beside the workload contract.
var vars = workload.KVVars{Duration: "MINIKV_WORKLOAD_DURATION", Recovery: "MINIKV_RECOVERY",
	Keys: "MINIKV_WORKLOAD_KEYS", Rate: "MINIKV_WORKLOAD_RATE", Port: "MINIKV_WORKLOAD_PORT"}

func loadConfig(getenv func(string) string) (workload.KVConfig, error) {
	s := workload.NewSettings(getenv)
	c := s.KV(vars, workload.KVConfig{Duration: 1500 * time.Millisecond, Recovery: 8 * time.Second, Keys: 5, Rate: 100, Port: "client"})
	return c, s.Err()
}

// mix is the load: linearizable reads and writes only.
var mix = workload.Mix{Get: 45, Put: 25, Delete: 5, CAS: 25}

// service is how the workload speaks to a node: /kv/KEY, /cas/KEY?expect=,
// a write's ID in X-Request-ID (minikv deduplicates retried writes by it).
var service = &workload.KVService{
	IDHeader: "X-Request-ID",
	KeyPath:  kvPath,
	GetPath:  kvPath,
	CASPath: func(key, expect string) string {
		return "/cas/" + key + "?expect=" + url.QueryEscape(expect)
	},
	Status:     status,
	VerifyRead: "read",
}

func kvPath(key string) string { return "/kv/" + key }

func run(ctx context.Context, t *workload.T) error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	clients, err := workload.NewKVClients(t, service, cfg.Port, cfg.Keys)
	if err != nil {
		return err
	}
	return workload.RunKV(t, clients, workload.KVPhases{
		KVConfig: cfg, Ready: waitHealthy, Mix: mix,
		Digest: func(ctx context.Context) error { return digests(ctx, clients) },
	})
}

// digests reports, for the replicas checker, the data digest of every
// member that has applied the most entries, once the members agree on that
// index or after a short wait: members at the same applied index must hold
// the same data. A member behind or unreachable reports nothing.
func digests(ctx context.Context, clients []*workload.KVClient) error {
	type status struct {
		Applied uint64 `json:"applied"`
		Digest  string `json:"digest"`
	}
	top, err := workload.CaughtUp(ctx, len(clients), 2*time.Second, func(ctx context.Context, i int) (string, uint64, bool) {
		out, err := clients[i].Do(ctx, http.MethodGet, "/status", "", "")
		var st status
		if err != nil || json.Unmarshal([]byte(out), &st) != nil {
			return "", 0, false
		}
		return st.Digest, st.Applied, true
	})
	for _, m := range top {
		clients[m.Member].Client().Digest("end", fmt.Sprintf("applied %d data %s", m.Index, m.State))
	}
	return err
}

// waitHealthy waits until the node answers /health (workload.Client.Setup:
// the attempts that fail while the node comes up are not client errors;
// giving up after workload.DefaultSetupTimeout is).
func waitHealthy(ctx context.Context, c *workload.KVClient) error {
	err := c.Client().Setup(ctx, "health", func(ctx context.Context) error {
		_, err := c.Do(ctx, http.MethodGet, "/health", "", "")
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s never became healthy: %w", c.Client().Node(), err)
	}
	return nil
}

// status asks the node for its status: the leader says so (the
// calibration trial kills it), a node that answers serves, one that
// answers with an error says why.
func status(ctx context.Context, c *workload.KVClient) (workload.NodeHealth, error) {
	out, err := c.Do(ctx, http.MethodGet, "/status", "", "")
	var es *workload.StatusError
	var st struct {
		Role string `json:"role"`
	}
	switch {
	case err == nil && json.Unmarshal([]byte(out), &st) == nil && st.Role == "leader":
		return workload.NodeHealth{Leader: true}, nil
	case err == nil:
		return workload.NodeHealth{OK: true, Msg: "serving"}, nil
	case errors.As(err, &es):
		return workload.NodeHealth{Msg: es.Msg}, nil
	}
	return workload.NodeHealth{}, err
}
