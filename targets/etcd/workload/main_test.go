package main

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

func TestMixString(t *testing.T) {
	m, err := parseMix(defaultMix.String())
	if err != nil || m != defaultMix {
		t.Errorf("parseMix(%q) = %v, %v", defaultMix.String(), m, err)
	}
	if got, want := defaultMix.String(), "get=25,put=15,delete=7,cas=18,range=6,txn=8,delete-range=3,lease-check=5,lease-cycle=4,watch-old=3,progress=3,maintenance=3"; got != want {
		t.Errorf("default mix %q, documented %q", got, want)
	}
}

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    config
		wantErr string
	}{
		{map[string]string{}, config{duration: 3 * time.Second, keys: 5, rate: 100, port: "client", mix: defaultMix,
			compactEvery: time.Second, defragEvery: 2 * time.Second, compactTo: compactBoth, skip: map[string]bool{}}, ""},
		{map[string]string{"ETCD_WORKLOAD_DURATION": "1500ms", "ETCD_WORKLOAD_KEYS": "2", "ETCD_WORKLOAD_RATE": "7", "ETCD_WORKLOAD_PORT": "c",
			"ETCD_WORKLOAD_MIX": "get=1, txn=3", "ETCD_WORKLOAD_COMPACT_EVERY": "0", "ETCD_WORKLOAD_COMPACT_PHYSICAL": "true", "ETCD_WORKLOAD_DEFRAG_EVERY": "500ms",
			"ETCD_WORKLOAD_SKIP_CHECKS": "watch-lost-event, revision-monotonic", "ETCD_WORKLOAD_COMPACT_TO": "lag"},
			config{duration: 1500 * time.Millisecond, keys: 2, rate: 7, port: "c", mix: mix{opGet: 1, opTxn: 3},
				compactPhysical: true, defragEvery: 500 * time.Millisecond, compactTo: compactLag, skip: map[string]bool{checkWatchLost: true, checkRevision: true}}, ""},
		{map[string]string{"ETCD_WORKLOAD_MIX": "get=1,scan=2"}, config{}, "ETCD_WORKLOAD_MIX"},
		{map[string]string{"ETCD_WORKLOAD_MIX": "get=0"}, config{}, "ETCD_WORKLOAD_MIX"},
		{map[string]string{"ETCD_WORKLOAD_COMPACT_EVERY": "often"}, config{}, "ETCD_WORKLOAD_COMPACT_EVERY"},
		{map[string]string{"ETCD_WORKLOAD_COMPACT_PHYSICAL": "maybe"}, config{}, "ETCD_WORKLOAD_COMPACT_PHYSICAL"},
		{map[string]string{"ETCD_WORKLOAD_DURATION": "-1s"}, config{}, "ETCD_WORKLOAD_DURATION"},
		{map[string]string{"ETCD_WORKLOAD_KEYS": "0"}, config{}, "ETCD_WORKLOAD_KEYS"},
		{map[string]string{"ETCD_WORKLOAD_RATE": "x"}, config{}, "ETCD_WORKLOAD_RATE"},
		{map[string]string{"ETCD_WORKLOAD_SKIP_CHECKS": "watch-lost"}, config{}, "ETCD_WORKLOAD_SKIP_CHECKS"},
		{map[string]string{"ETCD_WORKLOAD_COMPACT_TO": "newest"}, config{}, "ETCD_WORKLOAD_COMPACT_TO"},
	}
	for _, tc := range tests {
		got, err := loadConfig(func(k string) string { return tc.env[k] })
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err = %v", tc.env, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: got %+v, %v", tc.env, got, err)
		}
	}
}

// etcdBinary builds the etcd node (targets/etcd/node) into the test's
// temporary directory: never a binary left by an earlier run, which may be of
// another release.
func etcdBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "etcd-node")
	cmd := exec.Command("go", "build", "-o", bin, "./node")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build etcd node: %v\n%s", err, out)
	}
	return bin
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startCluster starts a 3-member etcd cluster on loopback and returns its
// nodes and their logs; cleanup kills every member's process group.
func startCluster(t *testing.T) ([]workload.Node, []record.Node, []int) {
	t.Helper()
	bin := etcdBinary(t)
	dir := t.TempDir()
	ports := freePorts(t, 6)
	names := []string{"n1", "n2", "n3"}
	var initial []string
	for i, n := range names {
		initial = append(initial, fmt.Sprintf("%s=http://127.0.0.1:%d", n, ports[2*i+1]))
	}
	var nodes []workload.Node
	var recs []record.Node
	var pgids []int
	for i, n := range names {
		client, peer := ports[2*i], ports[2*i+1]
		logPath := filepath.Join(dir, n+".log")
		logf, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin,
			"--name="+n,
			"--data-dir="+filepath.Join(dir, n),
			fmt.Sprintf("--listen-client-urls=http://127.0.0.1:%d", client),
			fmt.Sprintf("--advertise-client-urls=http://127.0.0.1:%d", client),
			fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", peer),
			fmt.Sprintf("--initial-advertise-peer-urls=http://127.0.0.1:%d", peer),
			"--initial-cluster="+strings.Join(initial, ","),
			"--initial-cluster-state=new",
			"--initial-cluster-token=gofault-test",
			"--listen-metrics-urls=",
			"--experimental-watch-progress-notify-interval=1s",
		)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		t.Cleanup(func() {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = cmd.Wait()
			logf.Close()
		})
		nodes = append(nodes, workload.Node{Name: n, Ports: map[string]int{"client": client, "peer": peer}})
		recs = append(recs, record.Node{Name: n, PID: pid, Log: logPath})
		pgids = append(pgids, pid)
	}
	// Ready when every member's /health says so.
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range nodes {
		for {
			resp, err := http.Get("http://" + n.Addr("client") + "/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("etcd member %s not healthy: %v", n.Name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nodes, recs, pgids
}

// controller accepts one workload connection and collects its events.
func controller(t *testing.T) (addr string, wait func() ([]record.ClientEvent, error)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ctl.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	type result struct {
		evs []record.ClientEvent
		err error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() { done <- res }()
		c, err := ln.Accept()
		if err != nil {
			res.err = err
			return
		}
		defer c.Close()
		r := wire.NewReader(c)
		typ, _, err := r.ReadFrame()
		if err != nil || typ != wire.THello {
			res.err = fmt.Errorf("hello: %v %v", typ, err)
			return
		}
		if _, err := c.Write(wire.AppendWelcome(nil, &wire.Welcome{Version: wire.Version})); err != nil {
			res.err = err
			return
		}
		var m wire.Events
		for {
			typ, p, err := r.ReadFrame()
			if err != nil {
				res.err = err
				return
			}
			if typ == wire.TBye {
				return
			}
			if err := wire.DecodeEvents(p, &m); err != nil {
				res.err = err
				return
			}
			for i := range m.Events {
				ev, err := workload.DecodeEvent(&m.Events[i])
				if err != nil {
					res.err = err
					return
				}
				res.evs = append(res.evs, ev)
			}
		}
	}()
	return "unix:" + path, func() ([]record.ClientEvent, error) {
		r := <-done
		return r.evs, r.err
	}
}

// TestCluster runs the workload on a real 3-member etcd cluster. Fault-free,
// it must finish all phases with every kind of request, report no
// violation, and its history must be linearizable: no checker may fail.
// With a member SIGKILLed mid-trial by the test (as gofault's crash fault
// does), the workload must still finish and no checker may fail either:
// the killed member's clients failing is expected, and the peers' warnings
// about it are informational.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real etcd clusters")
	}
	t.Setenv("ETCD_WORKLOAD_DURATION", "3s")
	var bl record.LogBaseline
	t.Run("fault-free", func(t *testing.T) {
		nodes, recs, _ := startCluster(t)
		tr, evs := runTrial(t, nodes, recs, nil)
		counts := map[string]int{}
		ops := map[string]int{}
		progress := map[string]int{} // by "client request"
		for _, e := range evs {
			counts[e.Kind]++
			switch e.Kind {
			case record.EvOp:
				ops[e.Op.Kind]++
			case record.EvProgress:
				name, _, _ := strings.Cut(e.Msg, " ")
				progress[e.Client+" "+name]++
			case record.EvError:
				t.Logf("error event: %s %s", e.Client, e.Msg)
			}
		}
		t.Logf("%d events: %v, ops %v", len(evs), counts, ops)
		for _, k := range []string{"get", "put", "delete", "cas"} {
			if ops[k] == 0 {
				t.Errorf("no %s operations", k)
			}
		}
		// Every client opens the mixed phase with each operation of the
		// mix (maintenance once per call: mix.deck), so each kind is made
		// at each member whatever the draw. Drawn by weight alone, the
		// fourth maintenance call needs four maintenance draws (3 % each)
		// out of a client's 100 to 200: CI of 2026-12-07 failed on a
		// client that made no hashkv call.
		for _, n := range nodes {
			for _, what := range []string{"connect", "watch", "lease-grant", "lease-keepalive", "lease-check", "lease-revoke", "lease-revoke-check",
				"range", "txn", "delete-range", "watch-progress-request", "status", "alarm-list", "hashkv", "member-list"} {
				if progress[n.Name+"/0 "+what] == 0 {
					t.Errorf("client %s/0 made no %s progress", n.Name, what)
				}
			}
		}
		for _, what := range []string{"compact", "defragment"} {
			made := false
			for _, n := range nodes {
				made = made || progress[n.Name+"/0 "+what] > 0
			}
			if !made {
				t.Errorf("no client made %s progress", what)
			}
		}
		if counts[record.EvPhase] != 4 || counts[record.EvHealthy] == 0 {
			t.Errorf("phases %d, healthy %d", counts[record.EvPhase], counts[record.EvHealthy])
		}
		if counts[record.EvDigest] != len(nodes) {
			t.Errorf("%d digests, want one per member", counts[record.EvDigest])
		}
		if err := check.Learn(&bl, tr, nodeLogs(tr), check.LogAuto); err != nil {
			t.Fatal(err)
		}
		judge(t, tr, &bl)
	})
	t.Run("member killed", func(t *testing.T) {
		if bl.Trials == 0 {
			t.Skip("no baseline")
		}
		nodes, recs, pgids := startCluster(t)
		tr, _ := runTrial(t, nodes, recs, func(tr *record.Trial) {
			time.Sleep(1500 * time.Millisecond)
			tr.Injections = append(tr.Injections, record.Injection{Time: time.Now(), Node: "n3", Kind: catalog.KindCrash, SiteID: "test"})
			_ = syscall.Kill(-pgids[2], syscall.SIGKILL)
			tr.Nodes[2].Killed, tr.Nodes[2].Exited, tr.Nodes[2].ExitTime, tr.Nodes[2].Signal = true, true, time.Now(), "SIGKILL"
		})
		judge(t, tr, &bl)
	})
	t.Run("member down from the start", func(t *testing.T) {
		if bl.Trials == 0 {
			t.Skip("no baseline")
		}
		nodes, recs, pgids := startCluster(t)
		_ = syscall.Kill(-pgids[0], syscall.SIGKILL)
		recs[0].Killed, recs[0].Exited, recs[0].ExitTime, recs[0].Signal = true, true, time.Now(), "SIGKILL"
		tr, evs := runTrial(t, nodes, recs, nil)
		tr.Injections = append(tr.Injections, record.Injection{Time: recs[0].ExitTime, Node: "n1", Kind: catalog.KindCrash, SiteID: "test"})
		for _, e := range evs {
			if e.Kind == record.EvOp && e.Node != "n1" && !e.Op.Unknown {
				judge(t, tr, &bl)
				return
			}
		}
		t.Fatal("the live members' clients made no progress")
	})
	t.Run("member paused (a true positive)", func(t *testing.T) {
		// SIGSTOP a member for 4.5 s without telling the checkers: its
		// client must be seen making no progress.
		t.Setenv("ETCD_WORKLOAD_DURATION", "6s")
		nodes, recs, pgids := startCluster(t)
		tr, _ := runTrial(t, nodes, recs, func(*record.Trial) {
			time.Sleep(1500 * time.Millisecond)
			_ = syscall.Kill(-pgids[2], syscall.SIGSTOP)
			time.Sleep(4500 * time.Millisecond)
			_ = syscall.Kill(-pgids[2], syscall.SIGCONT)
		})
		j, err := check.Run(context.Background(), &check.Input{Trial: tr, Logs: nodeLogs(tr), Baseline: &bl}, []string{check.NameHang, check.NameGray, check.NameViolations, check.NameLinearizability})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range j.Verdicts {
			t.Logf("%s: failed=%v %s %v", v.Checker, v.Failed, v.Symptom, v.Nodes)
			switch v.Checker {
			case check.NameHang:
				if !v.Failed || !strings.Contains(strings.Join(v.Nodes, ","), "n3") {
					t.Errorf("hang checker missed the paused member: %+v", v)
				}
			case check.NameViolations, check.NameLinearizability:
				if v.Failed || v.Unknown {
					t.Errorf("%s: %s\n%s", v.Checker, v.Symptom, strings.Join(v.Evidence, "\n"))
				}
			}
		}
	})
}

// runTrial runs the workload against nodes while fault, if not nil, runs
// beside it, and returns the recorded trial.
func runTrial(t *testing.T, nodes []workload.Node, recs []record.Node, fault func(*record.Trial)) (*record.Trial, []record.ClientEvent) {
	t.Helper()
	addr, wait := controller(t)
	start := time.Now()
	tr := &record.Trial{ID: t.Name(), Start: start, Nodes: recs, Dir: t.TempDir()}
	faultDone := make(chan struct{})
	go func() {
		defer close(faultDone)
		if fault != nil {
			fault(tr)
		}
	}()
	env := workload.Env{Controller: addr, Trial: "test", Nodes: nodes, Deadline: start.Add(40 * time.Second), Seed: 42}
	var stdout strings.Builder
	if err := workload.Run(context.Background(), env, &stdout, run); err != nil {
		t.Fatalf("workload: %v", err)
	}
	<-faultDone
	evs, err := wait()
	if err != nil {
		t.Fatalf("controller: %v", err)
	}
	tr.End = time.Now()
	tr.Client = evs
	t.Logf("trial took %s", tr.End.Sub(start).Round(time.Millisecond))
	return tr, evs
}

// nodeLogs is the directory of tr's node logs (startCluster's), for
// check.Input.Logs.
func nodeLogs(tr *record.Trial) fs.FS { return os.DirFS(filepath.Dir(tr.Nodes[0].Log)) }

// judge runs every checker on tr and fails the test on any failed or
// unknown verdict, writing what the checkers drew of their evidence into
// tr.Dir.
func judge(t *testing.T, tr *record.Trial, bl *record.LogBaseline) {
	t.Helper()
	j, err := check.Run(context.Background(), &check.Input{Trial: tr, Logs: nodeLogs(tr), Baseline: bl, Visualize: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, vis := range j.Visuals {
		if err := os.WriteFile(filepath.Join(tr.Dir, vis.Name), vis.Data, 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, v := range j.Verdicts {
		t.Logf("%s: failed=%v unknown=%v %s", v.Checker, v.Failed, v.Unknown, v.Symptom)
		if v.Failed || v.Unknown {
			t.Errorf("%s: %s\n%s", v.Checker, v.Symptom, strings.Join(v.Evidence, "\n"))
		}
	}
}
