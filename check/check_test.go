package check

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

var t0 = time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// trialB builds synthetic trials.
type trialB struct {
	tr record.Trial
	// logs holds the nodes' logs (log), for Input.Logs.
	logs fstest.MapFS
}

func newTrial(nodes ...string) *trialB {
	b := &trialB{tr: record.Trial{ID: "t1", Start: t0, End: at(10000)}}
	for _, n := range nodes {
		b.tr.Nodes = append(b.tr.Nodes, record.Node{Name: n, PID: 100})
	}
	return b
}

func (b *trialB) ev(ms int, client, kind, msg string) *trialB {
	node, _, _ := strings.Cut(client, "/")
	if client == workloadClient {
		node = ""
	}
	b.tr.Client = append(b.tr.Client, record.ClientEvent{Time: at(ms), Client: client, Node: node, Kind: kind, Msg: msg})
	return b
}

// progress adds progress events of client every step ms in [from, to].
func (b *trialB) progress(client string, from, to, step int) *trialB {
	for ms := from; ms <= to; ms += step {
		b.ev(ms, client, record.EvProgress, "put k")
	}
	return b
}

// sent adds a progress event of client at ms for a request it sent at
// sentMS (record.ClientEvent.Sent).
func (b *trialB) sent(client string, sentMS, ms int) *trialB {
	b.ev(ms, client, record.EvProgress, "put k")
	b.tr.Client[len(b.tr.Client)-1].Sent = at(sentMS)
	return b
}

func (b *trialB) errors(client string, from, to, step int) *trialB {
	for ms := from; ms <= to; ms += step {
		b.ev(ms, client, record.EvError, "put k: context deadline exceeded")
	}
	return b
}

func (b *trialB) inject(ms int, node string, kind catalog.Kind, mod func(*record.Injection)) *trialB {
	in := record.Injection{Time: at(ms), Node: node, Kind: kind, SiteID: "s1"}
	if mod != nil {
		mod(&in)
	}
	b.tr.Injections = append(b.tr.Injections, in)
	return b
}

// client appends workload events to the trial.
func (b *trialB) client(es ...record.ClientEvent) *trialB {
	b.tr.Client = append(b.tr.Client, es...)
	return b
}

func (b *trialB) node(name string, mod func(*record.Node)) *trialB {
	for i := range b.tr.Nodes {
		if b.tr.Nodes[i].Name == name {
			mod(&b.tr.Nodes[i])
		}
	}
	return b
}

// healthy is three clients making steady progress for 6 s.
func healthy() *trialB {
	return newTrial("n1", "n2", "n3").
		progress("n1/0", 0, 6000, 100).progress("n2/0", 0, 6000, 100).progress("n3/0", 0, 6000, 100).
		ev(6001, workloadClient, record.EvPhase, "mixed")
}

func runOne(t *testing.T, name string, in *Input) record.Verdict {
	t.Helper()
	j, err := Run(context.Background(), in, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	return j.Verdicts[0]
}

type verdictWant struct {
	failed  bool
	unknown bool
	symptom string // exact, "" means none
	nodes   []string
	ev      string // a substring of some evidence line
}

func checkVerdict(t *testing.T, v record.Verdict, w verdictWant) {
	t.Helper()
	if v.Failed != w.failed || v.Unknown != w.unknown || v.Symptom != w.symptom {
		t.Fatalf("verdict failed=%v unknown=%v symptom=%q, want %v %v %q\nevidence:\n%s", v.Failed, v.Unknown, v.Symptom, w.failed, w.unknown, w.symptom, strings.Join(v.Evidence, "\n"))
	}
	if w.nodes != nil && !reflect.DeepEqual(v.Nodes, w.nodes) {
		t.Errorf("nodes = %v, want %v", v.Nodes, w.nodes)
	}
	if w.ev != "" && !strings.Contains(strings.Join(v.Evidence, "\n"), w.ev) {
		t.Errorf("no evidence containing %q in:\n%s", w.ev, strings.Join(v.Evidence, "\n"))
	}
}

// log gives node its log: lines, as <node>.log in b.logs.
func (b *trialB) log(node string, lines ...string) *trialB {
	if b.logs == nil {
		b.logs = fstest.MapFS{}
	}
	name := node + ".log"
	b.logs[name] = &fstest.MapFile{Data: []byte(strings.Join(lines, "\n") + "\n")}
	return b.node(node, func(n *record.Node) { n.Log = name })
}

// input is in on b's trial and logs.
func (b *trialB) input(in Input) *Input {
	in.Trial, in.Logs = &b.tr, b.logs
	return &in
}

// raftRestorePanic is hashicorp/raft v1.7.2's panic when restoring a
// user snapshot into the state machine fails (the raft hunt's trial
// 2-609, after an EIO injected at the snapshot's metadata read).
const raftRestorePanic = `panic: failed to restore snapshot: failed to open snapshot 2-44-1796571856892: read : input/output error

goroutine 1 [running]:
github.com/hashicorp/raft.(*Raft).restoreUserSnapshot(0xc000180000, 0xc0001a2000, {0x8d1a40, 0xc0001b4000})
	/root/go/pkg/mod/github.com/hashicorp/raft@v1.7.2/raft.go:1179 +0x9f1
github.com/hashicorp/raft.(*Raft).leaderLoop(0xc000180000)
	/root/go/pkg/mod/github.com/hashicorp/raft@v1.7.2/raft.go:720 +0x4d2
`

const goPanic = `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2b3c]

goroutine 112 [running]:
go.etcd.io/etcd/server/v3/etcdserver.(*EtcdServer).applyAll(0xc000123400, 0xc0001a2b00)
	/root/go/pkg/mod/go.etcd.io/etcd/server/v3@v3.5.35/etcdserver/server.go:1170 +0x1d
created by go.etcd.io/etcd/pkg/v3/schedule.(*fifo).run in goroutine 80`

func TestCrash(t *testing.T) {
	tests := []struct {
		name string
		b    func(t *testing.T) *trialB
		want verdictWant
	}{
		{"fault-free", func(*testing.T) *trialB { return healthy() }, verdictWant{}},
		{"killed by gofault", func(*testing.T) *trialB {
			return healthy().inject(100, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) {
				n.Exited, n.Killed, n.Signal, n.ExitCode, n.ExitTime = true, true, "SIGKILL", -1, at(100)
			})
		}, verdictWant{}},
		{"crash fault the runner did not mark", func(*testing.T) *trialB {
			return healthy().inject(100, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) {
				n.Exited, n.Signal, n.ExitCode, n.ExitTime = true, "SIGKILL", -1, at(110)
			})
		}, verdictWant{}},
		{"SIGKILL without a crash fault", func(*testing.T) *trialB {
			return healthy().inject(100, "n2", catalog.KindDelay, nil).node("n2", func(n *record.Node) {
				n.Exited, n.Signal, n.ExitCode, n.ExitTime = true, "SIGKILL", -1, at(110)
			})
		}, verdictWant{failed: true, symptom: "node was killed by SIGKILL", nodes: []string{"n2"}}},
		{"go panic", func(*testing.T) *trialB {
			return healthy().log("n3", `{"level":"info","msg":"serving"}`, goPanic).node("n3", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 2, at(3000) })
		}, verdictWant{failed: true, symptom: "node panicked: runtime error: invalid memory address or nil pointer dereference in go.etcd.io/etcd/server/v3/etcdserver.(*EtcdServer).applyAll", nodes: []string{"n3"}, ev: "panic: runtime error"}},
		{"zap fatal", func(*testing.T) *trialB {
			return healthy().log("n1", `{"level":"fatal","ts":"2026-11-21T05:00:01.123Z","caller":"etcdserver/storage.go:42","msg":"failed to save hard state and entries","error":"write /tmp/x/wal: input/output error"}`).node("n1", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(3000) })
		}, verdictWant{failed: true, symptom: "node fatal: failed to save hard state and entries", nodes: []string{"n1"}}},
		{"did not come back after a crash fault", func(*testing.T) *trialB {
			return healthy().log("n2", `{"level":"info","msg":"serving"}`, "=== gofault: restart 1 of node n2 ===", `{"level":"fatal","msg":"failed to open WAL","error":"wal: crc mismatch"}`).inject(100, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) {
				n.Exited, n.ExitCode, n.ExitTime, n.Restarts = true, 1, at(1200), 1
				n.RestartErr = "restart n2: exited before it was ready (exit status 1)"
			})
		}, verdictWant{failed: true, symptom: "node did not come back after a crash fault", nodes: []string{"n2"}, ev: "wal: crc mismatch"}},
		{"a fault hit the restart", func(*testing.T) *trialB {
			return healthy().inject(100, "n2", catalog.KindCrash, nil).inject(1150, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) {
				n.Exited, n.Killed, n.Signal, n.ExitCode, n.ExitTime, n.Restarts = true, true, "SIGKILL", -1, at(1150), 1
				n.RestartErr = "restart n2: exited before it was ready (signal: killed)"
			})
		}, verdictWant{symptom: "informational: a fault hit a node's restart", ev: "a crash fault hit it again during its restart"}},
		{"plain exit", func(*testing.T) *trialB {
			return healthy().node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 0, at(3000) })
		}, verdictWant{failed: true, symptom: "node exited with status 0", nodes: []string{"n2"}}},
		{"refused to start on an injected error", func(*testing.T) *trialB {
			return healthy().inject(-2000, "n2", catalog.KindError, func(in *record.Injection) { in.Error = `"expected IP in URL"` }).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(-1900) })
		}, verdictWant{symptom: "informational: node stopped on an injected error", ev: "node n2 exited with status 1 during start-up"}},
		{"start-up exit without a fault", func(*testing.T) *trialB {
			return healthy().node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(-1900) })
		}, verdictWant{failed: true, symptom: "node exited with status 1", nodes: []string{"n2"}}},
		{"start-up panic on an injected error", func(*testing.T) *trialB {
			return healthy().log("n2", goPanic).inject(-2000, "n2", catalog.KindError, nil).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 2, at(-1900) })
		}, verdictWant{failed: true, symptom: "node panicked: runtime error: invalid memory address or nil pointer dereference in go.etcd.io/etcd/server/v3/etcdserver.(*EtcdServer).applyAll"}},
		{"exit on an injected error while serving", func(*testing.T) *trialB {
			return healthy().inject(2000, "n2", catalog.KindError, nil).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2100) })
		}, verdictWant{failed: true, symptom: "node exited with status 1"}},
		{"fail-stop: fatal with the injected error while serving", func(*testing.T) *trialB {
			return healthy().log("n2", `{"level":"fatal","ts":"2026-11-21T05:00:02.123Z","caller":"backend/batch_tx.go:250","msg":"failed to commit tx","error":"input/output error"}`).inject(2000, "n2", catalog.KindError, nil).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2100) })
		}, verdictWant{symptom: "informational: node stopped on an injected error", ev: "failed to commit tx"}},
		{"fail-stop: a zap console fatal with the injected error while serving", func(*testing.T) *trialB {
			return healthy().log("n2", "2026-11-21T05:00:02.123Z\tFATAL\tbackend/batch_tx.go:250\tfailed to commit tx\t{\"error\": \"input/output error\"}").inject(2000, "n2", catalog.KindError, nil).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2100) })
		}, verdictWant{symptom: "informational: node stopped on an injected error", ev: "failed to commit tx"}},
		{"a zap console fatal on another node than the fault", func(*testing.T) *trialB {
			return healthy().log("n2", "2026-11-21T05:00:02.123Z\tFATAL\tbackend/batch_tx.go:250\tfailed to commit tx\t{\"error\": \"input/output error\"}").inject(2000, "n1", catalog.KindError, nil).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2100) })
		}, verdictWant{failed: true, symptom: "node fatal: failed to commit tx", nodes: []string{"n2"}}},
		{"fail-stop: a Go panic quoting the injected error while serving", func(*testing.T) *trialB {
			return healthy().log("n2", raftRestorePanic).inject(2000, "n2", catalog.KindError, func(in *record.Injection) { in.Error = "EIO" }).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 2, at(2100) })
		}, verdictWant{symptom: "informational: node stopped on an injected error", ev: "failed to restore snapshot"}},
		{"a Go panic quoting another error than the one injected", func(*testing.T) *trialB {
			return healthy().log("n2", raftRestorePanic).inject(2000, "n2", catalog.KindError, func(in *record.Injection) { in.Error = "ENOSPC" }).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 2, at(2100) })
		}, verdictWant{failed: true, symptom: "node panicked: failed to restore snapshot: failed to open snapshot <n><n><n>: read : input/output error in github.com/hashicorp/raft.(*Raft).restoreUserSnapshot", nodes: []string{"n2"}}},
		{"a Go panic quoting the error injected into another node", func(*testing.T) *trialB {
			return healthy().log("n2", raftRestorePanic).inject(2000, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO" }).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 2, at(2100) })
		}, verdictWant{failed: true, symptom: "node panicked: failed to restore snapshot: failed to open snapshot <n><n><n>: read : input/output error in github.com/hashicorp/raft.(*Raft).restoreUserSnapshot", nodes: []string{"n2"}}},
		{"fatal with an error but on another node than the fault", func(*testing.T) *trialB {
			return healthy().log("n2", `{"level":"fatal","msg":"failed to commit tx","error":"input/output error"}`).inject(2000, "n1", catalog.KindError, nil).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2100) })
		}, verdictWant{failed: true, symptom: "node fatal: failed to commit tx", nodes: []string{"n2"}}},
		{"logged panic without an error after a fault (an assertion)", func(*testing.T) *trialB {
			return healthy().log("n2", `{"level":"panic","msg":"applied index is larger than commit index"}`).inject(2000, "n2", catalog.KindError, nil).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 2, at(2100) })
		}, verdictWant{failed: true, symptom: "node panicked: applied index is larger than commit index", nodes: []string{"n2"}}},
		{"signal", func(*testing.T) *trialB {
			return healthy().node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.Signal, n.ExitTime = true, -1, "SIGSEGV", at(3000) })
		}, verdictWant{failed: true, symptom: "node was killed by SIGSEGV", nodes: []string{"n2"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b(t)
			checkVerdict(t, runOne(t, NameCrash, b.input(Input{})), tc.want)
		})
	}
}

func TestHang(t *testing.T) {
	tests := []struct {
		name string
		b    *trialB
		in   Input
		want verdictWant
	}{
		{"fault-free", healthy(), Input{}, verdictWant{}},
		{"short error burst", healthy().errors("n2/0", 2000, 3000, 500), Input{}, verdictWant{}},
		{"stall with errors", newTrial("n1", "n2").progress("n1/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).errors("n2/0", 1500, 6500, 500).progress("n2/0", 7000, 8000, 100),
			Input{}, verdictWant{failed: true, symptom: "client made no progress for over 3s (requests failing)", nodes: []string{"n2"}, ev: "client n2/0 (node n2): no progress from 05:00:01.000 to 05:00:07.000"}},
		{"stall within a longer threshold", newTrial("n1", "n2").progress("n1/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).errors("n2/0", 1500, 6500, 500).progress("n2/0", 7000, 8000, 100),
			Input{Progress: 10 * time.Second}, verdictWant{}},
		{"excused by a delay", newTrial("n1", "n2").progress("n1/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).progress("n2/0", 5000, 8000, 100).
			inject(1000, "n2", catalog.KindDelay, func(in *record.Injection) { in.Delay = 4 * time.Second }),
			Input{}, verdictWant{}},
		{"not excused by a delay on another member", newTrial("n1", "n2", "n3").progress("n1/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).progress("n2/0", 5000, 8000, 100).
			inject(1000, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = 4 * time.Second }),
			Input{}, verdictWant{failed: true, symptom: "client made no progress for over 3s (requests hanging)", nodes: []string{"n2"}}},
		{"excused by a pause of its own member", newTrial("n1", "n2").progress("n1/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).progress("n2/0", 5000, 8000, 100).
			inject(1000, "n2", catalog.KindPause, func(in *record.Injection) { in.Delay = 4 * time.Second }),
			Input{}, verdictWant{}},
		{"not excused by a pause on another member", newTrial("n1", "n2", "n3").progress("n1/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).progress("n2/0", 5000, 8000, 100).
			inject(1000, "n1", catalog.KindPause, func(in *record.Injection) { in.Delay = 4 * time.Second }),
			Input{}, verdictWant{failed: true, symptom: "client made no progress for over 3s (requests hanging)", nodes: []string{"n2"}}},
		{"a stop of the static leader, excused by the profile", newTrial("n1", "n2", "n3").progress("n3/0", 0, 1000, 100).progress("n3/0", 7500, 8000, 100).
			progress("n2/0", 0, 1000, 100).progress("n2/0", 7500, 8000, 100).
			inject(1000, "n1", catalog.KindStop, func(in *record.Injection) { in.Delay = 6 * time.Second }).
			node("n1", func(n *record.Node) { n.Killed, n.Restarted = true, []time.Time{at(7000)} }),
			Input{SlowWaits: []SlowWait{{Kind: catalog.KindStop, Node: "n1", Reason: "n1 is the static leader"}}}, verdictWant{}},
		{"a stop of another member is not excused by the static leader's (planted)", newTrial("n1", "n2", "n3").progress("n3/0", 0, 1000, 100).progress("n3/0", 7500, 8000, 100).
			progress("n1/0", 0, 8000, 100).
			inject(1000, "n2", catalog.KindStop, func(in *record.Injection) { in.Delay = 6 * time.Second }).
			node("n2", func(n *record.Node) { n.Killed, n.Restarted = true, []time.Time{at(7000)} }),
			Input{SlowWaits: []SlowWait{{Kind: catalog.KindStop, Node: "n1", Reason: "n1 is the static leader"}}},
			verdictWant{failed: true, symptom: "client made no progress for over 3s (requests hanging)", nodes: []string{"n3"}}},
		{"excused by the far end of a disconnect", newTrial("n1", "n2", "n3").progress("n1/0", 0, 8000, 100).progress("n3/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).progress("n2/0", 5000, 8000, 100).
			inject(1000, "n1", catalog.KindDisconnect, func(in *record.Injection) { in.Delay, in.Peer = 4*time.Second, "n2" }),
			Input{}, verdictWant{}},
		// A client idle at its workload's barrier (waiting for a slowed
		// member's client to set up) sends nothing: no stall.
		{"idle until it sent its next request", newTrial("n1", "n2", "n3").progress("n1/0", 0, 8000, 100).progress("n3/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).sent("n2/0", 5000, 5100).progress("n2/0", 5200, 8000, 100).
			inject(1000, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = 4 * time.Second }),
			Input{}, verdictWant{}},
		{"a request sent right after the last progress that took 4 s is a stall", newTrial("n1", "n2", "n3").progress("n1/0", 0, 8000, 100).progress("n3/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).sent("n2/0", 1050, 5100).progress("n2/0", 5200, 8000, 100).
			inject(1000, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = 4 * time.Second }),
			Input{}, verdictWant{failed: true, symptom: "client made no progress for over 3s (requests hanging)", nodes: []string{"n2"}}},
		// Done with its requests, the client waits for the slowed
		// member's client before its digest: the digest is no request.
		{"idle after its last request until its digest", newTrial("n1", "n2", "n3").progress("n1/0", 0, 1000, 100).progress("n3/0", 0, 1000, 100).
			progress("n2/0", 0, 500, 100).progress("n2/0", 3500, 3600, 100).
			ev(5000, "n1/0", record.EvDigest, "end").ev(5000, "n3/0", record.EvDigest, "end").ev(5000, "n2/0", record.EvDigest, "end").
			inject(500, "n2", catalog.KindDelay, func(in *record.Injection) { in.Delay = 3 * time.Second }),
			Input{}, verdictWant{}},
		{"failed requests in the gap: the client was asking all along", newTrial("n1", "n2", "n3").progress("n1/0", 0, 8000, 100).progress("n3/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).errors("n2/0", 2000, 4000, 1000).sent("n2/0", 5000, 5100).progress("n2/0", 5200, 8000, 100).
			inject(1000, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = 4 * time.Second }),
			Input{}, verdictWant{failed: true, symptom: "client made no progress for over 3s (requests failing)", nodes: []string{"n2"}}},
		{"excused by a delay on half the members (no quorum to route around it)", newTrial("n1", "n2").progress("n1/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).progress("n2/0", 5000, 8000, 100).
			inject(1000, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = 4 * time.Second }),
			Input{}, verdictWant{}},
		// Fault sequences across members (the fuzz policy): quorum loss
		// is the faults' consequence, a stall with a majority left is not.
		{"two members killed in turn: a failover each", newTrial("n1", "n2", "n3").progress("n3/0", 0, 1000, 100).progress("n3/0", 5000, 8000, 100).
			inject(1000, "n1", catalog.KindCrash, nil).inject(2000, "n2", catalog.KindCrash, nil).
			node("n1", func(n *record.Node) { n.Killed, n.Restarted = true, []time.Time{at(2500)} }).
			node("n2", func(n *record.Node) { n.Killed, n.Restarted = true, []time.Time{at(3500)} }),
			Input{}, verdictWant{}},
		{"a member partitioned while another is down after a crash (no quorum)", newTrial("n1", "n2", "n3").progress("n3/0", 0, 1000, 100).progress("n3/0", 5500, 8000, 100).
			inject(1000, "n1", catalog.KindPartition, func(in *record.Injection) { in.Delay = 4 * time.Second }).
			inject(1000, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) { n.Killed, n.Restarted = true, []time.Time{at(4500)} }),
			Input{}, verdictWant{ev: "excused by quorum loss: client n3/0 (node n3) made no progress from 05:00:01.000 to 05:00:05.500 (4.5s) while the faults had half the members or more out for 3.5s: n1 out from 05:00:01.000 to 05:00:05.000, n2 out from 05:00:01.000 to 05:00:04.500"}},
		{"a member partitioned after another came back: a majority was left", newTrial("n1", "n2", "n3").progress("n3/0", 0, 1000, 100).progress("n3/0", 6500, 8000, 100).
			inject(2000, "n1", catalog.KindPartition, func(in *record.Injection) { in.Delay = 4 * time.Second }).
			inject(1000, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) { n.Killed, n.Restarted = true, []time.Time{at(1300)} }),
			Input{}, verdictWant{failed: true, symptom: "client made no progress for over 3s (requests hanging)", nodes: []string{"n3"}}},
		{"two members stopped on injected errors (no quorum to the end)", newTrial("n1", "n2", "n3").progress("n3/0", 0, 1000, 100).errors("n3/0", 1500, 8000, 500).
			inject(1000, "n1", catalog.KindError, nil).inject(1500, "n2", catalog.KindError, nil).
			node("n1", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(1100) }).
			node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(1600) }),
			Input{}, verdictWant{ev: "excused by quorum loss: client n3/0 (node n3)"}},
		{"one member stopped on an injected error: the others must go on", newTrial("n1", "n2", "n3").progress("n3/0", 0, 1000, 100).errors("n3/0", 1500, 8000, 500).
			inject(1000, "n1", catalog.KindError, nil).node("n1", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(1100) }),
			Input{}, verdictWant{failed: true, symptom: "client made no progress for over 3s (requests failing)", nodes: []string{"n3"}}},
		{"a member exited without a fault on it: no outage excused", newTrial("n1", "n2", "n3").progress("n3/0", 0, 1000, 100).errors("n3/0", 1500, 8000, 500).
			inject(1000, "n1", catalog.KindError, nil).node("n1", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(1100) }).
			node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 2, at(1600) }),
			Input{}, verdictWant{failed: true, symptom: "client made no progress for over 3s (requests failing)", nodes: []string{"n3"}}},
		{"delay elsewhere excused by the profile, and shown", newTrial("n1", "n2", "n3").progress("n1/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).progress("n2/0", 5000, 8000, 100).
			inject(1000, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay, in.Role = 4*time.Second, "roleLeader" }),
			Input{SlowWaits: []SlowWait{{Kind: catalog.KindDelay, Role: "roleLeader", Reason: "static leader"}}},
			verdictWant{ev: "excused by the profile: client n2/0 (node n2) made no progress from 05:00:01.000 to 05:00:05.000 (4s) during delay n1 (roleLeader)"}},
		{"node killed by gofault", newTrial("n1", "n2").progress("n1/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).errors("n2/0", 1500, 8000, 500).
			inject(1000, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) { n.Killed = true }),
			Input{}, verdictWant{}},
		{"workload timed out", healthy().ev(6500, workloadClient, record.EvError, `timeout: deadline passed in phase "mixed": context deadline exceeded`),
			Input{}, verdictWant{failed: true, symptom: "workload did not finish before its deadline", ev: "deadline passed"}},
		{"runner says timed out, silent client", newTrial("n1", "n2").progress("n1/0", 0, 8000, 100).progress("n2/0", 0, 1000, 100),
			Input{WorkloadTimedOut: true}, verdictWant{failed: true, symptom: "workload did not finish before its deadline", nodes: []string{"n2"}, ev: "requests hanging"}},
		{"failed phase", healthy().ev(6500, workloadClient, record.EvError, "phase verify: watcher n2/0 closed"),
			Input{}, verdictWant{failed: true, symptom: "workload phase verify failed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Trial = &tc.b.tr
			checkVerdict(t, runOne(t, NameHang, &in), tc.want)
		})
	}
}

func TestGray(t *testing.T) {
	stalled := func() *trialB {
		return newTrial("n1", "n2", "n3").progress("n1/0", 0, 8000, 100).progress("n3/0", 0, 8000, 100).
			progress("n2/0", 0, 1000, 100).errors("n2/0", 1500, 6500, 500).progress("n2/0", 7000, 8000, 100)
	}
	tests := []struct {
		name string
		b    *trialB
		want verdictWant
	}{
		{"fault-free", healthy(), verdictWant{}},
		{"fault on n1, only n2 fails", stalled().inject(1000, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO" }),
			verdictWant{failed: true, symptom: "fault on one node, only clients of other nodes failed", nodes: []string{"n2"}, ev: "clients still making progress: [n1/0 n3/0]"}},
		{"fault on n2, n2 fails", stalled().inject(1000, "n2", catalog.KindError, nil),
			verdictWant{failed: true, symptom: "clients of the faulted node failed while other clients succeeded", nodes: []string{"n2"}}},
		{"no fault, subset fails", stalled(),
			verdictWant{failed: true, symptom: "only a subset of clients failed", nodes: []string{"n2"}}},
		{"healthy while failing", stalled().ev(3000, "n2/0", record.EvHealthy, "leader 1"),
			verdictWant{failed: true, symptom: "node reported healthy while its clients failed", ev: "node n2 reported healthy"}},
		{"unhealthy while failing is honest but still partial", stalled().ev(3000, "n2/0", record.EvUnhealthy, "no leader"),
			verdictWant{failed: true, symptom: "only a subset of clients failed"}},
		{"everyone fails", newTrial("n1", "n2").progress("n1/0", 0, 1000, 100).errors("n1/0", 1500, 6500, 500).progress("n1/0", 7000, 8000, 100).
			progress("n2/0", 0, 1000, 100).errors("n2/0", 1500, 6500, 500).progress("n2/0", 7000, 8000, 100), verdictWant{}},
		{"healthy while failing during a delay on another member", stalled().ev(3000, "n2/0", record.EvHealthy, "leader 1").
			inject(1000, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = 6 * time.Second }),
			verdictWant{failed: true, symptom: "node reported healthy while its clients failed", ev: "node n2 reported healthy"}},
		{"failing during its own node's delay", stalled().ev(3000, "n2/0", record.EvHealthy, "leader 1").
			inject(1000, "n2", catalog.KindDelay, func(in *record.Injection) { in.Delay = 6 * time.Second }),
			verdictWant{}},
		{"killed node's clients fail", stalled().inject(1000, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) { n.Killed = true }), verdictWant{}},
		// The quorum rule dismisses n3/0's failing stall (n1 cut while n2
		// was down) while n3/1 went on: not a gray failure, but shown as
		// the hang checker shows it.
		{"failing while no quorum was left: excused, and shown", newTrial("n1", "n2", "n3").progress("n3/1", 0, 8000, 100).
			progress("n3/0", 0, 1000, 100).errors("n3/0", 1500, 5000, 500).progress("n3/0", 5500, 8000, 100).
			inject(1000, "n1", catalog.KindPartition, func(in *record.Injection) { in.Delay = 4 * time.Second }).
			inject(1000, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) { n.Killed, n.Restarted = true, []time.Time{at(4500)} }),
			verdictWant{ev: "excused by quorum loss: client n3/0 (node n3) made no progress from 05:00:01.000 to 05:00:05.500 (4.5s) while the faults had half the members or more out for 3.5s: n1 out from 05:00:01.000 to 05:00:05.000, n2 out from 05:00:01.000 to 05:00:04.500"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkVerdict(t, runOne(t, NameGray, &Input{Trial: &tc.b.tr}), tc.want)
		})
	}
}

func TestViolations(t *testing.T) {
	b := healthy()
	checkVerdict(t, runOne(t, NameViolations, &Input{Trial: &b.tr}), verdictWant{})
	b.tr.Client = append(b.tr.Client, record.ClientEvent{Time: at(200), Client: "n2/0", Node: "n2", Kind: record.EvViolation, Checker: "watch-order", Msg: "revision 12 after 15"})
	checkVerdict(t, runOne(t, NameViolations, &Input{Trial: &b.tr}), verdictWant{failed: true, symptom: "workload saw watch-order violated", nodes: []string{"n2"}, ev: "revision 12 after 15"})
	b.tr.Client = append(b.tr.Client, record.ClientEvent{Time: at(300), Client: "n1/0", Node: "n1", Kind: record.EvViolation, Checker: "lease-keepalive", Msg: "key gone"})
	// Two guarantees: the lost key (lease-keepalive) is primary, whatever
	// the order they were seen in; the other is a further symptom.
	v := runOne(t, NameViolations, &Input{Trial: &b.tr})
	checkVerdict(t, v, verdictWant{failed: true, symptom: "workload saw lease-keepalive violated", nodes: []string{"n1", "n2"}})
	if want := []string{"workload saw lease-keepalive violated", "workload saw watch-order violated"}; strings.Join(v.Symptoms, "|") != strings.Join(want, "|") {
		t.Errorf("symptoms %q, want %q", v.Symptoms, want)
	}
}

// TestViolationsDownMember: a recovery violation of a member whose
// process had ended and was not started again is not judged by
// violations (the crash checker judges why it is down: the raft hunt's
// 2-609, a member that panicked on an injected EIO); a recovery violation
// of a running member, one of a member restarted since, and any other
// violation of a down member still fail.
func TestViolationsDownMember(t *testing.T) {
	recovery := func(node string, ms int) record.ClientEvent {
		return record.ClientEvent{Time: at(ms), Client: node + "/0", Node: node, Kind: record.EvViolation, Checker: "recovery", Msg: "node " + node + " served no linearizable read and write within 8s after the load stopped"}
	}
	exited := func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 2, at(2100) }
	tests := []struct {
		name string
		b    *trialB
		want verdictWant
	}{
		{"a member that exited", healthy().node("n2", exited).client(recovery("n2", 9000)),
			verdictWant{symptom: "informational: a member that was down did not recover (the crash checker judges why)", ev: "node n2 was down from"}},
		{"a running member", healthy().client(recovery("n2", 9000)),
			verdictWant{failed: true, symptom: "workload saw recovery violated", nodes: []string{"n2"}}},
		{"another member than the one down", healthy().node("n2", exited).client(recovery("n1", 9000)),
			verdictWant{failed: true, symptom: "workload saw recovery violated", nodes: []string{"n1"}}},
		{"a member restarted since", healthy().node("n2", func(n *record.Node) { exited(n); n.Killed, n.Restarted = true, []time.Time{at(3100)} }).client(recovery("n2", 9000)),
			verdictWant{failed: true, symptom: "workload saw recovery violated", nodes: []string{"n2"}}},
		{"a member not back after a crash fault", healthy().node("n2", func(n *record.Node) {
			exited(n)
			n.Killed, n.Restarted, n.RestartErr = true, []time.Time{at(3100)}, "restart n2: exited before it was ready"
		}).client(recovery("n2", 9000)),
			verdictWant{symptom: "informational: a member that was down did not recover (the crash checker judges why)", ev: "not back after a restart"}},
		{"another guarantee of a down member", healthy().node("n2", exited).client(record.ClientEvent{Time: at(9000), Client: "n2/0", Node: "n2", Kind: record.EvViolation, Checker: "message-lost", Msg: "k3 lost"}),
			verdictWant{failed: true, symptom: "workload saw message-lost violated", nodes: []string{"n2"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkVerdict(t, runOne(t, NameViolations, &Input{Trial: &tc.b.tr}), tc.want)
		})
	}
}

func TestRun(t *testing.T) {
	b := healthy()
	if _, err := Run(context.Background(), &Input{Trial: &b.tr}, []string{"crash", "nope"}); err == nil || !strings.Contains(err.Error(), `unknown checker "nope"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := Run(context.Background(), &Input{}, nil); err == nil {
		t.Fatal("no error without a trial")
	}
	want := []string{"crash", "gray", "hang", "linearizability", "log", "recovery", "replicas", "slow", "violations"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names = %v", got)
	}
}

// TestFaultFreeTrialPasses is the main true negative: a realistic
// fault-free trial — steady clients, a linearizable history, a node log with
// the warnings the baseline has seen — gets no failed verdict from any
// checker.
func TestFaultFreeTrialPasses(t *testing.T) {
	logA := []string{
		`{"level":"info","ts":"2026-11-21T05:00:00.100Z","caller":"etcdmain/etcd.go:73","msg":"Running: "}`,
		`{"level":"warn","ts":"2026-11-21T05:00:00.200Z","caller":"rafthttp/probing_status.go:68","msg":"prober detected unhealthy status","round-tripper-name":"ROUND_TRIPPER_SNAPSHOT","remote-peer-id":"8e9e05c52164694d","rtt":"0s","error":"dial tcp 127.0.0.1:23801: connect: connection refused"}`,
	}
	logB := `{"level":"warn","ts":"2026-11-21T06:10:00.900Z","caller":"rafthttp/probing_status.go:68","msg":"prober detected unhealthy status","round-tripper-name":"ROUND_TRIPPER_RAFT_MESSAGE","remote-peer-id":"1c3d5e7f9a0b2c4d","rtt":"0s","error":"dial tcp 127.0.0.1:45001: connect: connection refused"}`
	base := newTrial("n1").log("n1", logA...)
	var bl record.LogBaseline
	if err := Learn(&bl, &base.tr, base.logs, LogAuto); err != nil {
		t.Fatal(err)
	}
	b := healthy()
	for _, n := range b.tr.Nodes {
		b.log(n.Name, logB)
	}
	b.tr.Client = append(b.tr.Client, opEv("n1/0", "put", "k", "a", "", "", 100, 200, false), opEv("n2/0", "get", "k", "", "", "a", 300, 400, false))
	j, err := Run(context.Background(), b.input(Input{Baseline: &bl}), nil)
	if err != nil {
		t.Fatal(err)
	}
	vs := j.Verdicts
	for _, v := range vs {
		if v.Failed || v.Unknown {
			t.Errorf("%s: failed=%v unknown=%v %q %v", v.Checker, v.Failed, v.Unknown, v.Symptom, v.Evidence)
		}
	}
	if len(vs) != 9 {
		t.Errorf("%d verdicts", len(vs))
	}
}

func opEv(client, kind, key, value, expect, out string, call, ret int, unknown bool) record.ClientEvent {
	node, _, _ := strings.Cut(client, "/")
	return record.ClientEvent{Time: at(ret), Client: client, Node: node, Kind: record.EvOp, Op: &record.Op{
		Kind: kind, Key: key, Value: value, Expect: expect, Out: out, Unknown: unknown,
		Call: at(call).UnixNano(), Return: at(ret).UnixNano(),
	}}
}
