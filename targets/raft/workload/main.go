// Command workload is gofault's workload for the hashicorp/raft key-value
// service (targets/raft/node): one HTTP client per member (each talking to
// that member only) drives a seeded mix of writes (put, delete,
// compare-and-swap, forwarded to the leader by followers), reads of the
// three consistencies (linearizable through a Barrier, leader through
// VerifyLeader, stale from the member's own state) and the admin calls of
// hashicorp/raft's API (admin.go: barrier, user snapshot, restore,
// membership cycle, leadership transfer), records the linearizable
// operations for the linearizability checker, reports each member's role
// for the gray-failure checker and the calibration trial, and checks these
// guarantees itself (violation names are stable):
//
//   - write-lost: a write whose response was received (so it committed) is
//     not in the state of a member that has applied everything the
//     cluster committed;
//   - write-applied-twice: a write (acknowledged or not; each has a unique
//     request ID and the service never retries) applied more than once;
//   - entry-reapplied: raft handed the state machine a log entry at or
//     below an index it had already applied;
//   - recovery: once the load stops, a member serves no linearizable read
//     and write within RAFT_WORKLOAD_RECOVERY;
//   - barrier-stale: after a Barrier returned, the leader's state lacks a
//     write acknowledged before the barrier was sent;
//   - snapshot-state: two states seen at the same command index differ (a
//     user snapshot decoded from the snapshot store, the snapshot a restore
//     took, a caught-up member's final state);
//   - restore-state: an acknowledged restore (the leader's state, writes
//     held off, snapshotted and restored with raft.Restore) whose snapshot
//     differs from the state it was taken of, that restored nothing, or
//     after which the leader holds another state;
//   - membership: the caught-up members disagree on the voters, or a
//     member none of whose removals is left unacknowledged is not a voter;
//   - transfer: a leadership transfer acknowledged while the old leader
//     still leads its term.
//
// The restore and the transfer hold the leader's writes off, so write-lost
// and the linearizability checker hold across them.
//
// Phases: setup (every member answers /health, i.e. knows a leader), load
// (the mix for RAFT_WORKLOAD_DURATION), verify (members whose membership
// cycle failed are added back, then the recovery check and a final
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
//	RAFT_WORKLOAD_MIX       weights of the operations, ETCD_WORKLOAD_MIX's syntax,
//	                        e.g. "get=30,put=20" (unnamed ones weigh 0); the
//	                        operations: get, leader-read, stale-read, put,
//	                        delete, cas, barrier, snapshot, restore,
//	                        membership, transfer (default "get=300,
//	                        leader-read=100,stale-read=100,put=200,delete=50,
//	                        cas=215,barrier=15,snapshot=8,restore=4,
//	                        membership=4,transfer=4"). The first admin
//	                        operation drawn runs each admin operation of
//	                        non-zero weight once (so every trial calls each).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gofault/gofault/workload"
)

func main() { workload.Main(run) }

// Guarantee names reported with violations (checker "violations").
const (
	checkLost      = "write-lost"
	checkTwice     = "write-applied-twice"
	checkReapplied = "entry-reapplied"
)

// vars are the workload's variables, beside the workload contract.
var vars = workload.KVVars{Duration: "RAFT_WORKLOAD_DURATION", Recovery: "RAFT_WORKLOAD_RECOVERY",
	Keys: "RAFT_WORKLOAD_KEYS", Rate: "RAFT_WORKLOAD_RATE", Port: "RAFT_WORKLOAD_PORT"}

// config is the workload's tunables: the key-value ones and the mix's
// weights (in opNames order).
type config struct {
	workload.KVConfig
	weights []int
}

func loadConfig(getenv func(string) string) (config, error) {
	s := workload.NewSettings(getenv)
	c := config{KVConfig: s.KV(vars, workload.KVConfig{Duration: 4 * time.Second, Recovery: 8 * time.Second, Keys: 5, Rate: 50, Port: "http"})}
	if err := s.Err(); err != nil {
		return c, err
	}
	var err error
	c.weights, err = parseMix(s.String("RAFT_WORKLOAD_MIX", ""))
	return c, err
}

// service is how the workload speaks to a member: /kv/KEY, reads of a
// consistency with ?read=, /cas/KEY?expect=, a write's ID in X-Request-ID
// (the service never retries it).
func service(writes *ledger) *workload.KVService {
	return &workload.KVService{
		IDHeader: "X-Request-ID",
		KeyPath:  func(key string) string { return "/kv/" + key },
		GetPath:  func(key string) string { return "/kv/" + key },
		ReadPath: func(key, consistency string) string { return "/kv/" + key + "?read=" + consistency },
		CASPath: func(key, expect string) string {
			return "/cas/" + key + "?expect=" + url.QueryEscape(expect)
		},
		Status:     status,
		VerifyRead: "linearizable read",
		Sent:       writes.sent,
		Acked:      writes.ack,
	}
}

func run(ctx context.Context, t *workload.T) error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	slog.Info("raft workload", "duration", cfg.Duration, "keys", cfg.Keys, "rate", cfg.Rate, "mix", workload.FormatWeights(opNames, cfg.weights))
	writes := &ledger{acked: map[string]bool{}}
	clients, err := workload.NewKVClients(t, service(writes), cfg.Port, cfg.Keys)
	if err != nil {
		return fmt.Errorf("%w (set RAFT_WORKLOAD_PORT)", err)
	}
	var members []string
	for _, n := range t.Nodes() {
		members = append(members, n.Name)
	}
	adm := newAdmin(members, writes)
	return workload.RunKV(t, clients, workload.KVPhases{
		KVConfig: cfg.KVConfig, Ready: waitHealthy, Mix: adm.mix(cfg.weights),
		Settle: func(ctx context.Context) error { return adm.settle(ctx, clients, cfg.Recovery) },
		Digest: func(ctx context.Context) error { return digests(ctx, clients, writes, adm) },
	})
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

// ackedIDs returns the IDs of the writes acknowledged so far.
func (l *ledger) ackedIDs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id, ok := range l.acked {
		if ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// memberStatus is a member's GET /status?writes=1.
type memberStatus struct {
	Role      string         `json:"role"`
	Index     uint64         `json:"index"`
	Digest    string         `json:"digest"`
	Reapplied int            `json:"reapplied"`
	Writes    map[string]int `json:"writes"`
	Voters    []string       `json:"voters"`
}

// digestWait bounds how long the digest phase waits for the members to
// agree on their last applied command.
const digestWait = 3 * time.Second

// digests waits until every member that answers has applied the same last
// command (or digestWait passed), then, for each member at the highest
// index, reports its digest for the replicas checker, checks every write
// against its write counts and its state against the snapshots seen at
// its index, and checks the members' configurations (judgeVoters).
func digests(ctx context.Context, clients []*workload.KVClient, writes *ledger, adm *admin) error {
	top, err := workload.CaughtUp(ctx, len(clients), digestWait, func(ctx context.Context, i int) (*memberStatus, uint64, bool) {
		st := memberState(ctx, clients[i])
		if st == nil {
			return nil, 0, false
		}
		return st, st.Index, true
	})
	voters := map[string][]string{}
	for _, m := range top {
		wc := clients[m.Member].Client()
		wc.Digest("end", fmt.Sprintf("index %d state %s", m.State.Index, m.State.Digest))
		for _, f := range checkWrites(m.State, writes) {
			wc.Violation(f.check, f.msg)
		}
		adm.sawState(wc, stateDigest{m.State.Index, m.State.Digest}, wc.Node()+"'s final state")
		if m.State.Voters != nil {
			voters[wc.Node()] = m.State.Voters
		}
	}
	if len(top) > 0 {
		adm.mu.Lock()
		fs := judgeVoters(adm.members, voters, adm.pending)
		adm.mu.Unlock()
		for _, f := range fs {
			clients[top[0].Member].Client().Violation(f.check, f.msg)
		}
	}
	return err
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

// waitHealthy waits until the member knows a leader (workload.Client.Setup:
// the attempts that fail while the cluster elects are not client errors).
func waitHealthy(ctx context.Context, c *workload.KVClient) error {
	err := c.Client().Setup(ctx, "health", func(ctx context.Context) error {
		_, err := c.Do(ctx, http.MethodGet, "/health", "", "")
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s never knew a leader: %w", c.Client().Node(), err)
	}
	return nil
}

// memberState reads the member's status with its write counts; nil when
// it does not answer.
func memberState(ctx context.Context, c *workload.KVClient) *memberStatus {
	rctx, cancel := context.WithTimeout(ctx, workload.DefaultTimeout)
	defer cancel()
	out, err := c.Do(rctx, http.MethodGet, "/status?writes=1", "", "")
	var st memberStatus
	if err != nil || json.Unmarshal([]byte(out), &st) != nil {
		return nil
	}
	return &st
}

// status reads the member's role: the leader says so, a member that
// knows a leader is healthy.
func status(ctx context.Context, c *workload.KVClient) (workload.NodeHealth, error) {
	out, err := c.Do(ctx, http.MethodGet, "/status", "", "")
	if err != nil {
		return workload.NodeHealth{}, err
	}
	var st struct {
		Role   string `json:"role"`
		Leader string `json:"leader"`
	}
	switch {
	case json.Unmarshal([]byte(out), &st) == nil && st.Role == "Leader":
		return workload.NodeHealth{Leader: true}, nil
	case st.Leader != "":
		return workload.NodeHealth{OK: true, Msg: "leader " + st.Leader}, nil
	}
	return workload.NodeHealth{Msg: "no leader"}, nil
}
