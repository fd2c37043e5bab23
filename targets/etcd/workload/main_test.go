package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    config
		wantErr string
	}{
		{map[string]string{}, config{duration: 3 * time.Second, keys: 5, rate: 100, port: "client"}, ""},
		{map[string]string{"ETCD_WORKLOAD_DURATION": "1500ms", "ETCD_WORKLOAD_KEYS": "2", "ETCD_WORKLOAD_RATE": "7", "ETCD_WORKLOAD_PORT": "c"},
			config{duration: 1500 * time.Millisecond, keys: 2, rate: 7, port: "c"}, ""},
		{map[string]string{"ETCD_WORKLOAD_DURATION": "-1s"}, config{}, "ETCD_WORKLOAD_DURATION"},
		{map[string]string{"ETCD_WORKLOAD_KEYS": "0"}, config{}, "ETCD_WORKLOAD_KEYS"},
		{map[string]string{"ETCD_WORKLOAD_RATE": "x"}, config{}, "ETCD_WORKLOAD_RATE"},
	}
	for _, tc := range tests {
		got, err := loadConfig(func(k string) string { return tc.env[k] })
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err = %v", tc.env, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: got %+v, %v", tc.env, got, err)
		}
	}
}

// etcdBinary returns the prebuilt etcd node (see the package doc of
// targets/etcd/node), building it if missing.
func etcdBinary(t *testing.T) string {
	t.Helper()
	const bin = "/tmp/etcd-node"
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
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
func startCluster(t *testing.T) ([]workload.Node, []record.Node) {
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
	return nodes, recs
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

// TestFaultFreeCluster runs the workload on a real 3-member etcd cluster
// with no faults: it must finish all phases, report no violation, and its
// history must be linearizable; no checker may fail.
func TestFaultFreeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd cluster")
	}
	nodes, recs := startCluster(t)
	addr, wait := controller(t)
	t.Setenv("ETCD_WORKLOAD_DURATION", "3s")
	start := time.Now()
	env := workload.Env{Controller: addr, Trial: "test", Nodes: nodes, Deadline: start.Add(40 * time.Second), Seed: 42}
	var stdout strings.Builder
	if err := workload.Run(context.Background(), env, &stdout, run); err != nil {
		t.Fatalf("workload: %v", err)
	}
	evs, err := wait()
	if err != nil {
		t.Fatalf("controller: %v", err)
	}
	counts := map[string]int{}
	ops := map[string]int{}
	progress := map[string]int{} // by "client msg"
	for _, e := range evs {
		counts[e.Kind]++
		if e.Kind == record.EvProgress {
			name, _, _ := strings.Cut(e.Msg, " ")
			progress[e.Client+" "+name]++
		}
		if e.Kind == record.EvOp {
			ops[e.Op.Kind]++
		}
		if e.Kind == record.EvError {
			t.Logf("error event: %s %s", e.Client, e.Msg)
		}
	}
	t.Logf("%d events in %s: %v, ops %v", len(evs), time.Since(start).Round(time.Millisecond), counts, ops)
	for _, k := range []string{"get", "put", "delete", "cas"} {
		if ops[k] == 0 {
			t.Errorf("no %s operations", k)
		}
	}
	for _, n := range nodes {
		for _, what := range []string{"connect", "watch", "lease-grant", "lease-keepalive", "lease-check", "lease-revoke", "lease-revoke-check"} {
			if progress[n.Name+"/0 "+what] == 0 {
				t.Errorf("client %s/0 made no %s progress", n.Name, what)
			}
		}
	}
	if counts[record.EvPhase] != 3 || counts[record.EvHealthy] == 0 {
		t.Errorf("phases %d, healthy %d", counts[record.EvPhase], counts[record.EvHealthy])
	}
	tr := &record.Trial{ID: "test", Start: start, End: time.Now(), Nodes: recs, Client: evs, Dir: t.TempDir()}
	// The log checker needs a baseline; this trial is fault-free, so
	// learning from it and then judging it must pass, and the other
	// checkers must pass on their own.
	var bl check.Baseline
	if err := bl.Learn(tr); err != nil {
		t.Fatal(err)
	}
	vs, err := check.Run(context.Background(), &check.Input{Trial: tr, Baseline: &bl, Visualize: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Logf("%s: failed=%v unknown=%v %s", v.Checker, v.Failed, v.Unknown, v.Symptom)
		if v.Failed || v.Unknown {
			t.Errorf("%s: %s\n%s", v.Checker, v.Symptom, strings.Join(v.Evidence, "\n"))
		}
	}
}
