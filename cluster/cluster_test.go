package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofault/gofault/record"
)

// spec returns a cluster spec running the helper in mode on n nodes.
func spec(t *testing.T, mode string, n int) Spec {
	t.Helper()
	return specIn(filepath.Join(t.TempDir(), "trial"), mode, n)
}

func specIn(dir, mode string, n int) Spec {
	bin, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return Spec{
		Dir:        dir,
		Trial:      "t-" + mode,
		Bin:        bin,
		Controller: "unix:/tmp/ctl.sock",
		Nodes: Nodes{
			Count:   n,
			Ports:   []string{"client", "peer"},
			Command: []string{"{{.Bin}}", mode, "{{.Host}}:{{.Port.client}}"},
			Env: map[string]string{
				helperEnv:  "1",
				"PEERS":    "{{range $i, $n := .Nodes}}{{if $i}},{{end}}{{$n.Name}}=http://{{$n.Host}}:{{$n.Port.peer}}{{end}}",
				"NODE_DIR": "{{.Dir}}",
			},
			Ready:    Ready{TCP: "{{.Host}}:{{.Port.client}}", Timeout: 20 * time.Second},
			Shutdown: Shutdown{Signal: syscall.SIGTERM, Grace: 30 * time.Second}, // Stop returns once nodes exit
		},
	}
}

func start(t *testing.T, ctx context.Context, s Spec) *Cluster {
	t.Helper()
	c, err := Start(ctx, s)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	// A test that fails half-way still stops its nodes and gives their
	// ports back (Stop is idempotent), so a failure never cascades into
	// the port allocator's own test.
	t.Cleanup(func() { c.Stop() })
	return c
}

func pids(recs []record.Node) []int {
	var out []int
	for _, r := range recs {
		out = append(out, r.PID)
	}
	return out
}

func TestNormalStop(t *testing.T) {
	s := spec(t, "serve", 3)
	c := start(t, context.Background(), s)
	nodes := c.Nodes()
	if len(nodes) != 3 || nodes[1].Name != "n2" || nodes[1].Index != 2 || nodes[1].Dir != filepath.Join(s.Dir, "n2") {
		t.Fatalf("Nodes = %+v", nodes)
	}
	ports := c.Ports()
	if len(ports) != 6 {
		t.Fatalf("Ports = %v", ports)
	}
	for _, n := range nodes {
		if !c.Running(n.Name) {
			t.Errorf("%s not running", n.Name)
		}
	}
	// The node saw its environment, rendered from the templates. The
	// helper writes it after it listens, so the ready probe can pass first.
	waitFile(t, filepath.Join(s.Dir, "n2", "env"))
	env, err := os.ReadFile(filepath.Join(s.Dir, "n2", "env"))
	if err != nil {
		t.Fatal(err)
	}
	var peers []string
	for _, n := range nodes {
		peers = append(peers, n.Name+"=http://127.0.0.1:"+strconv.Itoa(n.Port["peer"]))
	}
	for _, want := range []string{
		"GOFAULT_NODE=n2", "GOFAULT_TRIAL=t-serve", "GOFAULT_CONTROLLER=unix:/tmp/ctl.sock",
		"PEERS=" + strings.Join(peers, ","), "NODE_DIR=" + filepath.Join(s.Dir, "n2"),
	} {
		if !slices.Contains(strings.Split(string(env), "\n"), want) {
			t.Errorf("node env lacks %q", want)
		}
	}
	recs := c.Stop()
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	for i, r := range recs {
		want := record.Node{Name: NodeName(i + 1), PID: r.PID, ExitCode: 0, ExitTime: r.ExitTime, Log: filepath.Join(s.Dir, r.Name+".log")}
		if !reflect.DeepEqual(r, want) {
			t.Errorf("record %+v, want %+v", r, want)
		}
		log, _ := os.ReadFile(r.Log)
		if !bytes.Contains(log, []byte("listening on")) || !bytes.Contains(log, []byte("terminating")) {
			t.Errorf("log of %s: %q", r.Name, log)
		}
	}
	assertClean(t, pids(recs), ports)
	select {
	case <-c.Done():
	default:
		t.Error("Done not closed after Stop")
	}
	if again := c.Stop(); !reflect.DeepEqual(again, recs) {
		t.Error("second Stop returned other records")
	}
}

func TestNodeCrashes(t *testing.T) {
	s := spec(t, "serve", 3)
	c := start(t, context.Background(), s)
	ports := c.Ports()
	if err := os.WriteFile(filepath.Join(s.Dir, "n2", "crash"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	exit := <-c.Exits()
	if exit.Name != "n2" || !exit.Exited || exit.Killed || exit.ExitCode != 3 {
		t.Errorf("exit notification %+v", exit)
	}
	if c.Running("n2") {
		t.Error("n2 still running")
	}
	recs := c.Stop()
	for _, r := range recs {
		if r.Exited != (r.Name == "n2") {
			t.Errorf("%s: Exited = %v", r.Name, r.Exited)
		}
	}
	log, _ := os.ReadFile(recs[1].Log)
	if !bytes.Contains(log, []byte("panic: crash requested")) {
		t.Errorf("n2 log: %q", log)
	}
	assertClean(t, pids(recs), ports)
}

func TestHangingNodeKilledAfterGrace(t *testing.T) {
	for _, sequential := range []bool{false, true} {
		t.Run(fmt.Sprint("sequential=", sequential), func(t *testing.T) {
			s := spec(t, "hang", 2)
			s.Nodes.Shutdown.Grace = 300 * time.Millisecond
			s.Nodes.Shutdown.Sequential = sequential
			c := start(t, context.Background(), s)
			ports := c.Ports()
			recs := c.Stop()
			for _, r := range recs {
				if r.Signal != "SIGKILL" || r.ExitCode != -1 || r.Exited || r.Killed {
					t.Errorf("record %+v: want killed by SIGKILL after grace, not Exited", r)
				}
			}
			// Sequential: the second node got its own grace after the first
			// ended. Parallel (the default): the graces overlap, so both
			// were killed at the end of one.
			d := recs[1].ExitTime.Sub(recs[0].ExitTime)
			if sequential && d < 300*time.Millisecond {
				t.Errorf("sequential stop: n2 ended %v after n1, want at least the grace", d)
			}
			if !sequential && d.Abs() >= 300*time.Millisecond {
				t.Errorf("parallel stop: n2 ended %v after n1, want both within one grace", d)
			}
			assertClean(t, pids(recs), ports)
		})
	}
}

// TestOrderedStop stops three serving nodes in each order that is not all
// at once and checks the order of their exits.
func TestOrderedStop(t *testing.T) {
	tests := []struct {
		name     string
		shutdown Shutdown
		leader   string
		// after maps a node's index to the indexes of the nodes it must
		// end after.
		after map[int][]int
	}{
		{"sequential", Shutdown{Sequential: true}, "", map[int][]int{1: {0}, 2: {1}}},
		{"leader last", Shutdown{LeaderLast: true}, "n1", map[int][]int{0: {1, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(t, "serve", 3)
			s.Nodes.Shutdown.Sequential, s.Nodes.Shutdown.LeaderLast = tc.shutdown.Sequential, tc.shutdown.LeaderLast
			s.Leader = func() string { return tc.leader }
			c := start(t, context.Background(), s)
			ports := c.Ports()
			recs := c.Stop()
			for i, r := range recs {
				if r.Exited || r.ExitCode != 0 || r.Signal != "" {
					t.Errorf("record %+v: want a clean exit", r)
				}
				for _, j := range tc.after[i] {
					if r.ExitTime.Before(recs[j].ExitTime) {
						t.Errorf("%s ended before %s", r.Name, recs[j].Name)
					}
				}
			}
			assertClean(t, pids(recs), ports)
		})
	}
}

func TestContextCancelled(t *testing.T) {
	for _, mode := range []string{"serve", "hang"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := spec(t, mode, 3)
			c := start(t, ctx, s)
			ports := c.Ports()
			var groups []int
			for _, n := range c.Nodes() {
				r, err := c.Node(n.Name)
				if err != nil {
					t.Fatal(err)
				}
				groups = append(groups, r.PID)
			}
			cancel()   // what Ctrl-C does
			<-c.Done() // every node process has ended
			if err := c.Restart(context.Background(), "n1"); err == nil {
				t.Error("Restart after cancel succeeded")
			}
			recs := c.Stop()
			for _, r := range recs {
				if r.Exited || r.Signal != "SIGKILL" {
					t.Errorf("record %+v: want SIGKILL by gofault, not Exited", r)
				}
			}
			assertClean(t, groups, ports)
		})
	}
}

func TestKillAndRestart(t *testing.T) {
	s := spec(t, "serve", 3)
	c := start(t, context.Background(), s)
	ports := c.Ports()
	before, _ := c.Node("n1")
	if err := c.Kill("n1"); err != nil {
		t.Fatal(err)
	}
	r, _ := c.Node("n1")
	if !r.Killed || !r.Exited || r.Signal != "SIGKILL" || c.Running("n1") {
		t.Errorf("after Kill: %+v running=%v", r, c.Running("n1"))
	}
	if err := c.Kill("n1"); err == nil {
		t.Error("second Kill succeeded")
	}
	if err := c.Kill("n9"); err == nil {
		t.Error("Kill of unknown node succeeded")
	}
	assertClean(t, []int{before.PID}, nil)
	if err := c.Restart(context.Background(), "n1"); err != nil {
		t.Fatal(err)
	}
	r, _ = c.Node("n1")
	if r.Restarts != 1 || r.PID == before.PID || r.Killed || r.Exited || !c.Running("n1") {
		t.Errorf("after Restart: %+v", r)
	}
	// Restarting a running node kills it first.
	if err := c.Restart(context.Background(), "n3"); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-c.Exits():
		t.Errorf("unexpected exit notification for a killed node: %+v", e)
	default:
	}
	recs := c.Stop()
	if recs[0].Restarts != 1 || recs[2].Restarts != 1 || recs[1].Restarts != 0 {
		t.Errorf("restarts: %+v", recs)
	}
	log, _ := os.ReadFile(recs[0].Log)
	if bytes.Count(log, []byte("listening on")) != 2 || !bytes.Contains(log, []byte("=== gofault: restart 1 of node n1 ===")) {
		t.Errorf("n1 log: %q", log)
	}
	if err := c.Kill("n2"); err == nil {
		t.Error("Kill after Stop succeeded")
	}
	assertClean(t, pids(recs), ports)
}

// TestShutdownAndRestart: a reboot fault's Shutdown sends the shutdown
// signal (the helper exits 0 on SIGTERM, not killed), marks the record as
// ended by gofault, and Restart brings the node back.
func TestShutdownAndRestart(t *testing.T) {
	s := spec(t, "serve", 3)
	c := start(t, context.Background(), s)
	ports := c.Ports()
	before, _ := c.Node("n2")
	if err := c.Shutdown("n2"); err != nil {
		t.Fatal(err)
	}
	r, _ := c.Node("n2")
	if !r.Killed || !r.Exited || r.Signal != "" || r.ExitCode != 0 || c.Running("n2") {
		t.Errorf("after Shutdown: %+v running=%v; want exit 0 on SIGTERM, marked Exited and Killed", r, c.Running("n2"))
	}
	if err := c.Shutdown("n2"); err == nil {
		t.Error("second Shutdown succeeded")
	}
	if err := c.Shutdown("n9"); err == nil {
		t.Error("Shutdown of unknown node succeeded")
	}
	assertClean(t, []int{before.PID}, nil)
	if err := c.Restart(context.Background(), "n2"); err != nil {
		t.Fatal(err)
	}
	if r, _ := c.Node("n2"); r.Restarts != 1 || len(r.Restarted) != 1 || r.PID == before.PID || !c.Running("n2") {
		t.Errorf("after Restart: %+v", r)
	}
	recs := c.Stop()
	if err := c.Shutdown("n1"); err == nil {
		t.Error("Shutdown after Stop succeeded")
	}
	assertClean(t, pids(recs), ports)
}

func TestStartFailure(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Spec)
		want   []string
	}{
		{"node exits", func(s *Spec) { s.Nodes.Command = []string{"{{.Bin}}", "fail"} }, []string{"exited before it was ready (exit status 2)", "boom: bad flag"}},
		{"never ready", func(s *Spec) {
			s.Nodes.Ready.TCP = "{{.Host}}:{{.Port.peer}}"
			s.Nodes.Ready.Timeout = 300 * time.Millisecond
		}, []string{"not ready after 300ms"}},
		{"no program", func(s *Spec) { s.Nodes.Command = []string{"./no-such-program"} }, []string{"no-such-program"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec(t, "serve", 2)
			tt.mutate(&s)
			c, err := Start(context.Background(), s)
			if err == nil {
				c.Stop()
				t.Fatal("Start succeeded")
			}
			var se *StartError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v, want *StartError", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			var groups []int
			for _, r := range se.Nodes {
				if r.PID != 0 {
					groups = append(groups, r.PID)
				}
			}
			assertClean(t, groups, nil)
		})
	}
}

func TestStartRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Spec)
		want   string
	}{
		{"no nodes", func(s *Spec) { s.Nodes.Count = 0 }, "0 nodes"},
		{"no command", func(s *Spec) { s.Nodes.Command = nil }, "empty command"},
		{"undeclared port", func(s *Spec) { s.Nodes.Command = []string{"{{.Port.admin}}"} }, "admin"},
		{"no signal", func(s *Spec) { s.Nodes.Shutdown.Signal = 0 }, "no shutdown signal"},
		{"no ready timeout", func(s *Spec) { s.Nodes.Ready.Timeout = 0 }, "no ready timeout"},
		{"dir not empty", func(s *Spec) {
			os.MkdirAll(s.Dir, 0o755)
			os.WriteFile(filepath.Join(s.Dir, "x"), nil, 0o644)
		}, "not empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec(t, "serve", 2)
			tt.mutate(&s)
			c, err := Start(context.Background(), s)
			if err == nil {
				c.Stop()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
}

func TestHTTPReady(t *testing.T) {
	s := spec(t, "http", 1)
	s.Nodes.Ready = Ready{HTTP: "http://{{.Host}}:{{.Port.client}}/health", Timeout: 20 * time.Second}
	c := start(t, context.Background(), s)
	ports := c.Ports()
	recs := c.Stop()
	assertClean(t, pids(recs), ports)
}

func TestParallelClusters(t *testing.T) {
	const k = 3
	var mu sync.Mutex
	seen := map[int]bool{}
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() {
			s := spec(t, "serve", 2)
			s.Trial = "p" + strconv.Itoa(i)
			c, err := Start(context.Background(), s)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, p := range c.Ports() {
				if seen[p] {
					t.Errorf("port %d handed out twice", p)
				}
				seen[p] = true
			}
			mu.Unlock()
			ports := c.Ports()
			recs := c.Stop()
			assertClean(t, pids(recs), ports)
		})
	}
	wg.Wait()
}

// TestRunnerDies kills a process running a cluster with SIGKILL, as if
// gofault crashed, and checks that its nodes die with it (Pdeathsig).
func TestRunnerDies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	dir := filepath.Join(t.TempDir(), "trial")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runnerEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var groups, ports []int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		kind, n, _ := strings.Cut(sc.Text(), " ")
		v, _ := strconv.Atoi(n)
		switch kind {
		case "pid":
			groups = append(groups, v)
		case "port":
			ports = append(ports, v)
		}
		if kind == "ready" {
			break
		}
	}
	if len(groups) != 2 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("runner reported %d nodes", len(groups))
	}
	cmd.Process.Kill()
	cmd.Wait()
	assertClean(t, groups, ports)
}

// runnerMain starts a cluster in dir, prints its node PIDs and ports, and
// waits to be killed.
func runnerMain(dir string) {
	s := specIn(dir, "serve", 2)
	s.Nodes.Env["NOCHILD"] = "1" // a node's children die only with its group
	c, err := Start(context.Background(), s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, n := range c.Nodes() {
		r, _ := c.Node(n.Name)
		fmt.Println("pid", r.PID)
	}
	for _, p := range c.Ports() {
		fmt.Println("port", p)
	}
	fmt.Println("ready")
	select {}
}

// BenchmarkStartStop measures the runner's own cost of a trial: ports,
// three helper nodes started and probed ready, then stopped.
func BenchmarkStartStop(b *testing.B) {
	root := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		s := specIn(filepath.Join(root, strconv.Itoa(i)), "serve", 3)
		s.Nodes.Env["NOCHILD"] = "1"
		c, err := Start(context.Background(), s)
		if err != nil {
			b.Fatal(err)
		}
		c.Stop()
	}
}

// TestDaemonsKilled checks that Stop kills what a node started in a
// session of its own (setsid), found by the cluster's token, and that the
// token is in every node's environment.
func TestDaemonsKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds strays through /proc")
	}
	if err := BecomeSubreaper(); err != nil {
		t.Fatalf("BecomeSubreaper: %v", err)
	}
	s := spec(t, "serve", 2)
	s.Nodes.Env["DAEMON"] = "1"
	c := start(t, context.Background(), s)
	var daemons []int
	for _, n := range c.Nodes() {
		var data []byte
		for range 200 {
			if data, _ = os.ReadFile(filepath.Join(n.Dir, "daemon.pid")); len(data) > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		pid, err := strconv.Atoi(string(data))
		if err != nil {
			t.Fatalf("node %s: daemon pid %q", n.Name, data)
		}
		daemons = append(daemons, pid)
	}
	waitFile(t, filepath.Join(s.Dir, "n1", "env"))
	env, _ := os.ReadFile(filepath.Join(s.Dir, "n1", "env"))
	if !strings.Contains(string(env), "GOFAULT_CLUSTER="+c.token) {
		t.Errorf("node env lacks the cluster token %s", c.token)
	}
	c.Stop()
	for _, pid := range daemons {
		if alive(pid) {
			t.Errorf("daemon %d outlived its cluster", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

func TestStopGroups(t *testing.T) {
	nodes := []*node{{vars: NodeVars{Name: "n1"}}, {vars: NodeVars{Name: "n2"}}, {vars: NodeVars{Name: "n3"}}}
	names := func(groups [][]*node) [][]string {
		var out [][]string
		for _, g := range groups {
			var ns []string
			for _, n := range g {
				ns = append(ns, n.vars.Name)
			}
			out = append(out, ns)
		}
		return out
	}
	tests := []struct {
		name   string
		s      Shutdown
		leader string
		want   [][]string
	}{
		{"parallel: all at once", Shutdown{}, "n2", [][]string{{"n1", "n2", "n3"}}},
		{"sequential: one at a time in index order", Shutdown{Sequential: true}, "n2", [][]string{{"n1"}, {"n2"}, {"n3"}}},
		{"leader last: the others at once, then the leader", Shutdown{LeaderLast: true}, "n2", [][]string{{"n1", "n3"}, {"n2"}}},
		{"leader last, the leader first by index", Shutdown{LeaderLast: true}, "n1", [][]string{{"n2", "n3"}, {"n1"}}},
		{"leader last, no leader known: sequential", Shutdown{LeaderLast: true}, "", [][]string{{"n1"}, {"n2"}, {"n3"}}},
		{"leader last, a leader not among the nodes: sequential", Shutdown{LeaderLast: true}, "n9", [][]string{{"n1"}, {"n2"}, {"n3"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(stopGroups(nodes, tc.s, tc.leader)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("stopGroups = %v, want %v", got, tc.want)
			}
		})
	}
	if got := names(stopGroups(nodes[:1], Shutdown{LeaderLast: true}, "n1")); !reflect.DeepEqual(got, [][]string{{"n1"}}) {
		t.Errorf("one node, the leader: stopGroups = %v, want [[n1]]", got)
	}
}
