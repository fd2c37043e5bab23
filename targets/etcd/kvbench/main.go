// Command kvbench measures etcd KV throughput with a fixed number of
// put/get operations spread over concurrent clients.
//
// Against a running cluster:
//
//	kvbench -endpoints 127.0.0.1:2379 -clients 16 -ops 20000
//
// Or side by side: for each round, start a fresh one-node etcd on loopback
// from each -etcd binary in turn (a fresh data dir each time), run the same
// load, stop it, and report the median throughput of every binary and its
// ratio to the first (every other round in reverse order):
//
//	kvbench -etcd ./etcd-plain -etcd ./etcd-instrumented -rounds 5
//
// -etcd-flag passes extra flags to the started members, e.g.
// -etcd-flag=--unsafe-no-fsync to take the disk out of the measurement and
// make it CPU-bound, which magnifies any instrumentation overhead.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gofault/gofault/agent/wire"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// options are the load's parameters.
type options struct {
	clients  int
	ops      int
	warmup   int
	keys     int
	value    int
	getRatio float64
	timeout  time.Duration
}

// run is one measured load.
type run struct {
	Binary    string  `json:"binary,omitempty"`
	Round     int     `json:"round"`
	Ops       int     `json:"ops"`
	Errors    int64   `json:"errors"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	// CPUPerOpUs is the etcd process's CPU time (user+system) per
	// measured operation, in microseconds, when kvbench started the
	// member itself: unlike throughput it hardly depends on what else the
	// machine is doing.
	CPUPerOpUs float64 `json:"cpu_per_op_us,omitempty"`
}

func main() {
	var bins listFlag
	endpoints := flag.String("endpoints", "", "comma-separated client endpoints of a running cluster")
	flag.Var(&bins, "etcd", "etcd binary to start as a one-node cluster (repeat to compare binaries)")
	rounds := flag.Int("rounds", 3, "rounds per binary with -etcd (alternating binaries)")
	var extra listFlag
	flag.Var(&extra, "etcd-flag", "extra flag for the -etcd binaries, e.g. --unsafe-no-fsync (repeatable)")
	var o options
	flag.IntVar(&o.clients, "clients", 16, "concurrent clients")
	flag.IntVar(&o.ops, "ops", 20000, "operations per measured run")
	flag.IntVar(&o.warmup, "warmup", 2000, "unmeasured operations before each run")
	flag.IntVar(&o.keys, "keys", 1000, "distinct keys")
	flag.IntVar(&o.value, "value", 256, "value size in bytes")
	flag.Float64Var(&o.getRatio, "get-ratio", 0.5, "fraction of operations that are gets")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Second, "timeout of one operation")
	asJSON := flag.Bool("json", false, "print runs and summary as JSON")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var runs []run
	var err error
	switch {
	case *endpoints != "" && len(bins) == 0:
		var r run
		r, err = load(ctx, strings.Split(*endpoints, ","), o, 0)
		runs = append(runs, r)
	case *endpoints == "" && len(bins) > 0:
		runs, err = compare(ctx, bins, extra, *rounds, o, os.Stderr)
	default:
		err = errors.New("give either -endpoints or one or more -etcd binaries")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kvbench:", err)
		os.Exit(1)
	}
	sum := summarize(runs, bins)
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"options": map[string]any{
			"clients": o.clients, "ops": o.ops, "keys": o.keys, "value": o.value, "get_ratio": o.getRatio, "rounds": *rounds,
		}, "runs": runs, "summary": sum})
		return
	}
	for _, r := range runs {
		fmt.Printf("%-50s round %d  %8.0f ops/s  p50 %6.2f ms  p99 %6.2f ms  cpu %6.1f µs/op  errors %d\n",
			r.Binary, r.Round, r.OpsPerSec, r.P50ms, r.P99ms, r.CPUPerOpUs, r.Errors)
	}
	for _, s := range sum {
		fmt.Printf("%-50s median %8.0f ops/s  ratio to first %.3f  paired ratio %.3f  cpu %.1f µs/op (ratio %.3f)\n",
			s.Binary, s.MedianOpsPerSec, s.Ratio, s.PairedRatio, s.MedianCPUPerOpUs, s.CPURatio)
	}
}

// summary is one binary's result over its rounds.
type summary struct {
	Binary          string  `json:"binary"`
	MedianOpsPerSec float64 `json:"median_ops_per_sec"`
	// Ratio is the median throughput over the first binary's.
	Ratio float64 `json:"ratio_to_first"`
	// PairedRatio is the median over rounds of the ratio to the first
	// binary's run of the same round (robust to drifts in machine load).
	PairedRatio float64 `json:"paired_ratio_to_first"`
	// MedianCPUPerOpUs is the median CPU time of the member per operation
	// and CPURatio its ratio to the first binary's (> 1: more CPU).
	MedianCPUPerOpUs float64 `json:"median_cpu_per_op_us"`
	CPURatio         float64 `json:"cpu_ratio_to_first"`
}

func summarize(runs []run, bins []string) []summary {
	if len(bins) == 0 {
		return nil
	}
	var out []summary
	for _, b := range bins {
		var xs, cs []float64
		for _, r := range runs {
			if r.Binary == b {
				xs = append(xs, r.OpsPerSec)
				cs = append(cs, r.CPUPerOpUs)
			}
		}
		out = append(out, summary{Binary: b, MedianOpsPerSec: median(xs), MedianCPUPerOpUs: median(cs)})
	}
	first := map[int]float64{}
	for _, r := range runs {
		if r.Binary == bins[0] {
			first[r.Round] = r.OpsPerSec
		}
	}
	for i := range out {
		if out[0].MedianOpsPerSec > 0 {
			out[i].Ratio = out[i].MedianOpsPerSec / out[0].MedianOpsPerSec
		}
		var ratios []float64
		for _, r := range runs {
			if r.Binary == out[i].Binary && first[r.Round] > 0 {
				ratios = append(ratios, r.OpsPerSec/first[r.Round])
			}
		}
		out[i].PairedRatio = median(ratios)
		if out[0].MedianCPUPerOpUs > 0 {
			out[i].CPURatio = out[i].MedianCPUPerOpUs / out[0].MedianCPUPerOpUs
		}
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// compare runs rounds of the load against a fresh one-node etcd of each
// binary in turn; every other round runs the binaries in reverse order, so
// that drifts in machine load hit all binaries alike.
func compare(ctx context.Context, bins, extra []string, rounds int, o options, logw io.Writer) ([]run, error) {
	var runs []run
	for r := 1; r <= rounds; r++ {
		order := append([]string(nil), bins...)
		if r%2 == 0 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, bin := range order {
			res, err := withNode(ctx, bin, extra, func(ep string, pid int) (run, error) { return load(ctx, []string{ep}, o, pid) })
			if err != nil {
				return runs, fmt.Errorf("%s round %d: %w", bin, r, err)
			}
			res.Binary, res.Round = bin, r
			fmt.Fprintf(logw, "kvbench: %s round %d: %.0f ops/s\n", bin, r, res.OpsPerSec)
			runs = append(runs, res)
		}
	}
	return runs, nil
}

// withNode starts a one-node etcd from bin on free loopback ports with a
// fresh data dir, calls f with its client endpoint and stops it.
func withNode(ctx context.Context, bin string, extra []string, f func(endpoint string, pid int) (run, error)) (run, error) {
	dir, err := os.MkdirTemp("", "kvbench-")
	if err != nil {
		return run{}, err
	}
	defer os.RemoveAll(dir)
	cport, err := freePort()
	if err != nil {
		return run{}, err
	}
	pport, err := freePort()
	if err != nil {
		return run{}, err
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", cport)
	peer := fmt.Sprintf("http://127.0.0.1:%d", pport)
	args := append([]string{
		"--name=n1", "--data-dir=" + filepath.Join(dir, "data"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=n1=" + peer, "--log-level=error",
	}, extra...)
	cmd := exec.Command(bin, args...)
	logf, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return run{}, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), wire.EnvController+"=") // the agent stays off
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return run{}, fmt.Errorf("start etcd: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()
	if err := waitHealthy(ctx, client+"/health", exited); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "etcd.log"))
		return run{}, fmt.Errorf("%w\n%s", err, log)
	}
	return f(client, cmd.Process.Pid)
}

// cpuTime returns the CPU time (user+system) process pid has used, from
// /proc/<pid>/stat; 0 if unavailable.
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticksPerSecond
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitHealthy(ctx context.Context, url string, exited <-chan error) error {
	deadline := time.After(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("etcd exited before it was healthy: %v", err)
		case <-deadline:
			return errors.New("etcd not healthy after 30s")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// load runs o.warmup unmeasured and then o.ops measured operations from
// o.clients concurrent clients, each with its own connection. With pid > 0
// it also measures the CPU time of that process per measured operation.
func load(ctx context.Context, endpoints []string, o options, pid int) (run, error) {
	clients := make([]*clientv3.Client, o.clients)
	for i := range clients {
		c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return run{}, fmt.Errorf("client: %w", err)
		}
		defer c.Close()
		clients[i] = c
	}
	value := strings.Repeat("v", o.value)
	var errs atomic.Int64
	phase := func(total int, lat []time.Duration) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n := int(next.Add(1)) - 1
					if n >= total || ctx.Err() != nil {
						return
					}
					key := fmt.Sprintf("kvbench/%d", (n*7919+i)%o.keys)
					octx, cancel := context.WithTimeout(ctx, o.timeout)
					t := time.Now()
					var err error
					if float64(n%100) < o.getRatio*100 {
						_, err = c.Get(octx, key)
					} else {
						_, err = c.Put(octx, key, value)
					}
					cancel()
					if lat != nil {
						lat[n] = time.Since(t)
					}
					if err != nil {
						errs.Add(1)
						slog.Debug("op failed", "err", err)
					}
				}
			}()
		}
		wg.Wait()
	}
	phase(o.warmup, nil)
	errs.Store(0)
	lat := make([]time.Duration, o.ops)
	cpu0 := cpuTime(pid)
	start := time.Now()
	phase(o.ops, lat)
	el := time.Since(start)
	cpu := cpuTime(pid) - cpu0
	if err := ctx.Err(); err != nil {
		return run{}, err
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return run{
		Ops: o.ops, Errors: errs.Load(), Seconds: el.Seconds(), OpsPerSec: float64(o.ops) / el.Seconds(),
		P50ms: ms(lat[len(lat)/2]), P99ms: ms(lat[len(lat)*99/100]),
		CPUPerOpUs: float64(cpu.Microseconds()) / float64(o.ops),
	}, nil
}
