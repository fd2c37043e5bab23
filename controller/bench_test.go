package controller

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofault/gofault/agent"
	"github.com/gofault/gofault/policy"
)

// Child-process mode of the test binary, used by the throughput benchmark:
// an agent process that makes decisions as fast as its goroutines can.
const (
	envChildAddr  = "GOFAULT_BENCH_ADDR"
	envChildN     = "GOFAULT_BENCH_N"
	envChildHash  = "GOFAULT_BENCH_HASH"
	childRoutines = 16
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(envChildAddr); addr != "" {
		os.Exit(benchChild(addr))
	}
	os.Exit(m.Run())
}

func benchChild(addr string) int {
	n, _ := strconv.ParseInt(os.Getenv(envChildN), 10, 64)
	agent.SetCatalogHash(os.Getenv(envChildHash))
	if err := agent.Connect(addr, "n"+strconv.Itoa(os.Getpid()), "bench"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	// Start when the parent says so.
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return 1
	}
	var left atomic.Int64
	left.Store(n)
	var wg sync.WaitGroup
	for g := 0; g < childRoutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				agent.Fault(0)
			}
		}()
	}
	wg.Wait()
	return 0
}

// BenchmarkDecisionRoundTrip measures one decision at a live site: a real
// agent and controller in one process over a unix socket. It reports the
// median and 99th percentile latency.
func BenchmarkDecisionRoundTrip(b *testing.B) {
	c := start(b, &scripted{plan: policy.Plan{Sites: []uint32{0}}})
	tr, err := c.BeginTrial(TrialSpec{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	tr.Arm()
	connectAgent(b, c, "n1", "bench")
	for i := 0; i < 1000; i++ { // warm up
		agent.Fault(0)
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range lat {
		t0 := time.Now()
		agent.Fault(0)
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-ns")
}

// BenchmarkDecisionThroughput3Agents measures decisions per second served to
// three agent processes, each asking from 16 goroutines.
func BenchmarkDecisionThroughput3Agents(b *testing.B) {
	const agents = 3
	c := start(b, &scripted{plan: policy.Plan{Sites: []uint32{0}}})
	tr, err := c.BeginTrial(TrialSpec{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	tr.Arm()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	per := b.N/agents + 1
	var cmds []*exec.Cmd
	var stdins []io.WriteCloser
	for i := 0; i < agents; i++ {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), envChildAddr+"="+c.Addr(), envChildHash+"="+c.cat.Hash,
			envChildN+"="+strconv.Itoa(per))
		cmd.Stderr = os.Stderr
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer cmd.Process.Kill()
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
			b.Fatalf("agent process did not connect: %q %v", line, err)
		}
		cmds = append(cmds, cmd)
		stdins = append(stdins, in)
	}
	b.ResetTimer()
	t0 := time.Now()
	for _, in := range stdins {
		io.WriteString(in, "go\n")
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(t0)
	b.StopTimer()
	b.ReportMetric(float64(per*agents)/elapsed.Seconds(), "decisions/s")
}
