package scaffold

import (
	"strconv"
	"strings"
)

// Workload is the source of a workload skeleton for the target name whose
// nodes serve clients on the named port: a main package with the standard
// library alone (so it compiles in any module, with no new requirement)
// that speaks gofault's workload protocol as JSON lines on stdout — one
// client per node, the setup, load and verify phases, progress, error, op
// and violation events — with the requests themselves left as TODOs that
// send an HTTP GET to each node.
func Workload(name, port string) []byte {
	if port == "" {
		port = "client"
	}
	r := strings.NewReplacer("@NAME@", name, "@PORT@", strconv.Quote(port))
	return []byte(r.Replace(workloadSource))
}

const workloadSource = `// Command workload drives one gofault trial of @NAME@: one client per node,
// each talking to its node only, a load phase of requests, then a check
// that every node serves again. gofault init wrote it; fill in the TODOs
// (docs/workloads.md describes the events and the environment).
//
// It speaks gofault's workload protocol with the standard library alone:
// every event is a JSON line on stdout, and the exit status is the
// result (0: every phase succeeded). The github.com/gofault/gofault/workload
// package does the same with batching, a controller connection and
// helpers for linearizability histories, if your module can require it.
//
// Environment (set by gofault):
//
//	GOFAULT_NODES     JSON array of {"name","host","ports":{...}}
//	GOFAULT_SEED      derive every random choice from it (replays)
//	GOFAULT_DEADLINE  RFC 3339 time by which to finish
//	GOFAULT_LOAD_END  a file gofault creates when the load may end early
//	GOFAULT_LOAD_MIN  the shortest load before that early end
//	GOFAULT_LOAD_FULL a longer load gofault asks for (the calibration
//	                  trial's: the load must outlast a failover)
//	WORKLOAD_DURATION length of the load phase (default 4s; workload.env)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// port is the name of the nodes' client port (cluster.ports).
const port = @PORT@

// node is one entry of GOFAULT_NODES.
type node struct {
	Name  string         ` + "`json:\"name\"`" + `
	Host  string         ` + "`json:\"host\"`" + `
	Ports map[string]int ` + "`json:\"ports\"`" + `
}

// event is one line of the workload protocol (gofault's record.ClientEvent).
type event struct {
	Time    time.Time ` + "`json:\"time\"`" + `
	Client  string    ` + "`json:\"client\"`" + `
	Node    string    ` + "`json:\"node,omitempty\"`" + `
	Kind    string    ` + "`json:\"kind\"`" + ` // progress, error, op, violation, phase, digest
	Msg     string    ` + "`json:\"msg,omitempty\"`" + `
	Checker string    ` + "`json:\"checker,omitempty\"`" + ` // the guarantee, for violation
	Digest  string    ` + "`json:\"digest,omitempty\"`" + `  // the node's state digest, for digest
	Op      *op       ` + "`json:\"op,omitempty\"`" + `
}

// op is one key-value operation for the linearizability checker.
type op struct {
	Kind    string ` + "`json:\"kind\"`" + ` // get, put, delete, cas
	Key     string ` + "`json:\"key\"`" + `
	Value   string ` + "`json:\"value,omitempty\"`" + `
	Out     string ` + "`json:\"out,omitempty\"`" + `
	Unknown bool   ` + "`json:\"unknown,omitempty\"`" + `
	Call    int64  ` + "`json:\"call\"`" + `
	Return  int64  ` + "`json:\"return\"`" + `
}

var (
	outMu sync.Mutex
	out   = json.NewEncoder(os.Stdout)
)

// emit writes one event; safe from every client's goroutine.
func emit(e event) {
	e.Time = time.Now()
	outMu.Lock()
	defer outMu.Unlock()
	out.Encode(e) //nolint:errcheck // stdout closed: gofault has gone
}

func main() {
	if err := run(); err != nil {
		emit(event{Client: "workload", Kind: "error", Msg: err.Error()})
		os.Exit(1)
	}
}

func run() error {
	var nodes []node
	if err := json.Unmarshal([]byte(os.Getenv("GOFAULT_NODES")), &nodes); err != nil {
		return fmt.Errorf("GOFAULT_NODES: %w", err)
	}
	seed, _ := strconv.ParseInt(os.Getenv("GOFAULT_SEED"), 10, 64)
	ctx := context.Background()
	if d, err := time.Parse(time.RFC3339Nano, os.Getenv("GOFAULT_DEADLINE")); err == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	duration := 4 * time.Second
	if d, err := time.ParseDuration(os.Getenv("WORKLOAD_DURATION")); err == nil {
		duration = d
	}
	if d, err := time.ParseDuration(os.Getenv("GOFAULT_LOAD_FULL")); err == nil && d > duration {
		duration = d
	}
	loadMin, _ := time.ParseDuration(os.Getenv("GOFAULT_LOAD_MIN"))

	// setup: every node answers before the load starts, so a cluster
	// that is still forming is not reported as client errors.
	for _, n := range nodes {
		if err := waitReady(ctx, n); err != nil {
			return fmt.Errorf("phase setup: %w", err)
		}
	}
	emit(event{Client: "workload", Kind: "phase", Msg: "setup"})

	// load: one client per node for duration, or until gofault ends it.
	var wg sync.WaitGroup
	start := time.Now()
	ended := func() bool { return loadEnded(start, loadMin) }
	for i, n := range nodes {
		wg.Add(1)
		go func(i int, n node) {
			defer wg.Done()
			load(ctx, n, rand.New(rand.NewSource(seed+int64(i))), start.Add(duration), ended)
		}(i, n)
	}
	wg.Wait()
	emit(event{Client: "workload", Kind: "phase", Msg: "load"})

	// verify: every node serves again once the load stops. TODO: read
	// back what was acknowledged and report what is missing as a
	// violation; emit each node's state digest (kind "digest") for the
	// replicas checker.
	for _, n := range nodes {
		if err := waitReady(ctx, n); err != nil {
			emit(event{Client: n.Name + "/0", Node: n.Name, Kind: "violation", Checker: "recovery", Msg: err.Error()})
			return fmt.Errorf("phase verify: %w", err)
		}
	}
	emit(event{Client: "workload", Kind: "phase", Msg: "verify"})
	return nil
}

// loadEnded reports whether gofault has ended the load that began at
// since: it creates the file GOFAULT_LOAD_END names once the trial has
// what its checkers need, honoured after the minimum load.
func loadEnded(since time.Time, min time.Duration) bool {
	f := os.Getenv("GOFAULT_LOAD_END")
	if f == "" || time.Since(since) < min {
		return false
	}
	_, err := os.Stat(f)
	return err == nil
}

// load sends requests to n until end or until ended says so, reporting
// each.
func load(ctx context.Context, n node, rng *rand.Rand, end time.Time, ended func() bool) {
	client := n.Name + "/0"
	for i := 0; time.Now().Before(end) && !ended() && ctx.Err() == nil; i++ {
		// TODO: your service's requests, chosen with rng. A key-value
		// write and read reported as ops feed the linearizability checker:
		//   emit(event{Client: client, Node: n.Name, Kind: "op", Op: &op{Kind: "put", Key: k, Value: v, Call: call, Return: ret}})
		// (Unknown: true when a request timed out: it may have happened.)
		key := fmt.Sprintf("k%d", rng.Intn(5))
		if err := get(ctx, n, "/"); err != nil {
			emit(event{Client: client, Node: n.Name, Kind: "error", Msg: "get " + key + ": " + err.Error()})
		} else {
			emit(event{Client: client, Node: n.Name, Kind: "progress", Msg: "get " + key})
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitReady polls n until it answers, for at most 10 s.
func waitReady(ctx context.Context, n node) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		err := get(ctx, n, "/") // TODO: your health endpoint
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s does not answer: %w", n.Name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// get sends GET path to n's client port, with a 1 s timeout.
func get(ctx context.Context, n node, path string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	host := n.Host
	if host == "" {
		host = "127.0.0.1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s:%d%s", host, n.Ports[port], path), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // drained for reuse
	if resp.StatusCode >= 500 {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}
`
