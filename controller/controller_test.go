package controller

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofault/gofault/agent"
	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

func testCatalog() *catalog.Catalog {
	c := &catalog.Catalog{
		Sites: []catalog.Site{
			{Index: 0, ID: "p.f#os.WriteFile.0", Kind: catalog.KindError | catalog.KindDelay,
				Errors: []catalog.ErrorValue{{Name: "EIO"}, {Name: "ENOSPC"}}},
			{Index: 1, ID: "p.g#net.Conn.Read.0", Kind: catalog.KindDelay | catalog.KindCrash},
		},
		Tasks:  []catalog.Task{{Index: 1, ID: "p.(*node).run"}},
		States: []catalog.State{{Index: 1, ID: "p.(*node).run#0", Task: 1}, {Index: 2, ID: "p.(*node).run#1", Task: 1}},
	}
	c.Hash = c.ComputeHash()
	return c
}

// scripted is a test policy: it answers requests with the faults in script,
// in order, then none; it says Done when the script is used up if done is
// set.
type scripted struct {
	mu     sync.Mutex
	plan   policy.Plan
	script []policy.Fault
	done   bool
	last   bool // the script's last fault is marked Last
	seen   []policy.Request
	ended  []policy.Outcome
}

func (s *scripted) Name() string                       { return "scripted" }
func (s *scripted) Begin(policy.TrialInfo) policy.Plan { return s.plan }
func (s *scripted) Decide(r *policy.Request) policy.Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, *r)
	if len(s.script) == 0 {
		return policy.Decision{Done: s.done}
	}
	f := s.script[0]
	s.script = s.script[1:]
	return policy.Decision{Fault: f, Done: s.done && len(s.script) == 0, Last: s.last && len(s.script) == 0}
}
func (s *scripted) End(o policy.Outcome) { s.ended = append(s.ended, o) }

func (s *scripted) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// sockPath returns a unix socket path in a short temp dir of its own: a
// subtest's t.TempDir holds the test's name, and under a long TMPDIR (the
// clean clone of scripts/fresh-check.sh) it passed the 108-byte limit of a
// socket's path ("bind: invalid argument").
func sockPath(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "ctl.sock")
}

func start(t testing.TB, pol policy.Policy) *Controller {
	t.Helper()
	c, err := Listen("unix", sockPath(t), Options{Catalog: testCatalog(), Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connectAgent connects this process's agent as node of trial.
func connectAgent(t testing.TB, c *Controller, node, trial string) {
	t.Helper()
	agent.SetCatalogHash(c.cat.Hash)
	if err := agent.Connect(c.Addr(), node, trial); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(agent.Disconnect)
}

func TestTrialLifecycle(t *testing.T) {
	pol := &scripted{
		plan:   policy.Plan{Sites: []uint32{0}, Stacks: true, States: true},
		script: []policy.Fault{{Kind: catalog.KindError, Error: 2}},
		done:   true,
	}
	c := start(t, pol)
	tr, err := c.BeginTrial(TrialSpec{ID: "t1", Index: 0, Nodes: []string{"n1"}})
	if err != nil {
		t.Fatal(err)
	}
	connectAgent(t, c, "n1", "t1")
	agent.State(1, 2, 0xc0de)
	if k := agent.Fault(0); k != 0 || pol.requests() != 0 {
		t.Fatalf("Fault before Arm = %d with %d requests; want none", k, pol.requests())
	}
	tr.Arm() // the plan push reaches the agent asynchronously
	waitFor(t, func() bool { return agent.Fault(0) == 2 })
	if k := agent.Fault(1); k != 0 {
		t.Fatalf("Fault(1) = %d at a site outside the plan", k)
	}
	// The policy said Done: the plan is emptied and the agent stops asking.
	waitFor(t, func() bool {
		agent.Fault(0)
		return pol.requests() == 1
	})
	for i := 0; i < 50; i++ {
		agent.Fault(0)
	}
	if n := pol.requests(); n != 1 {
		t.Fatalf("policy saw %d requests after it said done, want 1", n)
	}
	time.Sleep(30 * time.Millisecond) // one event flush interval
	res := tr.End()
	c.TellPolicy(policy.Outcome{Index: 0, Requests: res.Requests, Injections: res.Injections, Failed: true})

	if len(res.Injections) != 1 {
		t.Fatalf("injections = %+v, want one", res.Injections)
	}
	inj := res.Injections[0]
	if inj.Node != "n1" || inj.SiteID != "p.f#os.WriteFile.0" || inj.Kind != catalog.KindError || inj.Error != "ENOSPC" {
		t.Errorf("injection = %+v", inj)
	}
	if inj.Occurrence != 1 {
		t.Errorf("injection at occurrence %d, want the first request at its site", inj.Occurrence)
	}
	if inj.Task != 1 || inj.State != 2 || inj.Inst != 0xc0de || inj.StateID != "p.(*node).run#1" {
		t.Errorf("injection state = task %d state %d (%s) inst %#x", inj.Task, inj.State, inj.StateID, inj.Inst)
	}
	if len(inj.Stack) == 0 || !strings.HasPrefix(inj.Stack[0].Func, "github.com/gofault/gofault/controller.TestTrialLifecycle") {
		t.Errorf("injection stack starts at %+v, want the test function", inj.Stack)
	}
	if len(res.States) != 1 || res.States[0].State != 2 || res.States[0].Node != "n1" || res.States[0].Entries != 1 {
		t.Errorf("states = %+v", res.States)
	}
	if res.Requests != 1 {
		t.Errorf("requests = %d", res.Requests)
	}
	if len(pol.ended) != 1 || !pol.ended[0].Failed {
		t.Errorf("policy outcome = %+v", pol.ended)
	}
}

func TestNoFaultsWithoutMatchingTrialOrCatalog(t *testing.T) {
	tests := []struct {
		name, trial, hash string
	}{
		{"unknown trial", "nope", ""},
		{"other catalog", "t1", "0123456789abcdef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{{Kind: catalog.KindError, Error: 1}}}
			c := start(t, pol)
			tr, err := c.BeginTrial(TrialSpec{ID: "t1"})
			if err != nil {
				t.Fatal(err)
			}
			tr.Arm()
			defer tr.End()
			hash := tt.hash
			if hash == "" {
				hash = c.cat.Hash
			}
			agent.SetCatalogHash(hash)
			if err := agent.Connect(c.Addr(), "n1", tt.trial); err != nil {
				t.Fatal(err)
			}
			defer agent.Disconnect()
			if k := agent.Fault(0); k != 0 || pol.requests() != 0 {
				t.Fatalf("Fault = %d with %d requests; want no fault and no request", k, pol.requests())
			}
			// The campaign stops on a node of another catalog.
			if h, bad := c.CatalogMismatch(); bad != (tt.hash != "") || h != tt.hash {
				t.Errorf("CatalogMismatch = %q, %v; want %q", h, bad, tt.hash)
			}
		})
	}
}

func TestCrashCallsRunner(t *testing.T) {
	pol := &scripted{plan: policy.Plan{Sites: []uint32{1}}, script: []policy.Fault{{Kind: catalog.KindCrash}}}
	c := start(t, pol)
	crashed := make(chan string, 1)
	tr, err := c.BeginTrial(TrialSpec{ID: "t1", Crash: func(node string) {
		crashed <- node
		// A real runner kills the process; here the connection ends, and
		// the blocked hook fails open.
		agent.Disconnect()
	}})
	if err != nil {
		t.Fatal(err)
	}
	tr.Arm()
	connectAgent(t, c, "n3", "t1")
	agent.Fault(1)
	select {
	case n := <-crashed:
		if n != "n3" {
			t.Fatalf("crashed %q, want n3", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("runner was not asked to crash the node")
	}
	if res := tr.End(); len(res.Injections) != 1 || res.Injections[0].Kind != catalog.KindCrash {
		t.Fatalf("injections = %+v", res.Injections)
	}
}

func TestWorkloadEventsRecorded(t *testing.T) {
	c := start(t, &scripted{})
	tr, err := c.BeginTrial(TrialSpec{ID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	nc := dialRaw(t, c)
	ev := record.ClientEvent{Client: "n1/0", Node: "n1", Kind: record.EvOp, Op: &record.Op{Kind: "put", Key: "k", Value: "v"}}
	data, _ := json.Marshal(ev)
	b := wire.AppendHello(nil, &wire.Hello{Version: wire.Version, Role: wire.RoleWorkload, Node: "workload", Trial: "t1"})
	b = wire.AppendEvents(b, &wire.Events{Events: []wire.Event{{Kind: wire.EvWorkload, Time: time.Now().UnixNano(), Data: data}}})
	b = wire.AppendBye(b)
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(tr.LastProgress()) == 1 })
	res := tr.End()
	if len(res.Client) != 1 || res.Client[0].Op.Key != "k" || res.Client[0].Time.IsZero() {
		t.Fatalf("client events = %+v", res.Client)
	}
}

// A workload (or node) built with another gofault speaks another
// protocol: the controller refuses it and says so (VersionMismatch), so
// the runner can stop the campaign instead of judging blind.
func TestVersionMismatchRecorded(t *testing.T) {
	c := start(t, &scripted{})
	tr, err := c.BeginTrial(TrialSpec{ID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.End()
	if _, bad := c.VersionMismatch(); bad {
		t.Fatal("a mismatch before any agent connected")
	}
	ok := dialRaw(t, c)
	if _, err := ok.Write(wire.AppendHello(nil, &wire.Hello{Version: wire.Version, Role: wire.RoleWorkload, Node: "workload", Trial: "t1"})); err != nil {
		t.Fatal(err)
	}
	nc := dialRaw(t, c)
	if _, err := nc.Write(wire.AppendHello(nil, &wire.Hello{Version: wire.Version - 1, Role: wire.RoleWorkload, Node: "workload", Trial: "t1"})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, bad := c.VersionMismatch(); return bad })
	if v, _ := c.VersionMismatch(); v.Node != "workload" || v.Version != wire.Version-1 {
		t.Errorf("VersionMismatch = %+v; want the workload's version %d", v, wire.Version-1)
	}
}

func TestGarbageClosesOnlyThatConnection(t *testing.T) {
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{{Kind: catalog.KindError, Error: 1}}}
	c := start(t, pol)
	tr, _ := c.BeginTrial(TrialSpec{ID: "t1"})
	tr.Arm()
	defer tr.End()
	for _, junk := range [][]byte{
		[]byte("GET / HTTP/1.1\r\n\r\n"),
		{0xff, 0xff, 0xff, 0xff, 1},
		wire.AppendHello(nil, &wire.Hello{Version: wire.Version, Trial: "t1"})[:7],
	} {
		nc := dialRaw(t, c)
		nc.Write(junk)
		if tc, ok := nc.(*net.UnixConn); ok {
			tc.CloseWrite()
		}
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		if _, err := nc.Read(buf); err == nil {
			// A truncated hello gets nothing back; junk gets closed.
			t.Fatalf("controller answered garbage %q", junk)
		}
	}
	connectAgent(t, c, "n1", "t1")
	if agent.Fault(0) != 1 {
		t.Fatal("controller stopped serving after garbage")
	}
}

func dialRaw(t *testing.T, c *Controller) net.Conn {
	t.Helper()
	nc, err := net.Dial("unix", strings.TrimPrefix(c.Addr(), "unix:"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

func TestCloseWithConnectedAgentsReturns(t *testing.T) {
	c := start(t, &scripted{plan: policy.Plan{Sites: []uint32{0}}})
	tr, _ := c.BeginTrial(TrialSpec{ID: "t1"})
	tr.Arm()
	connectAgent(t, c, "n1", "t1")
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung with an agent connected")
	}
	waitFor(t, func() bool { return agent.Fault(0) == 0 })
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLateConnection: a node that connects after its trial ended (a
// crashed member restarted while the trial stopped) gets no faults and no
// warning; a connection for a trial the controller never began warns.
func TestLateConnection(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{{Kind: catalog.KindError, Error: 1}}}
	c, err := Listen("unix", sockPath(t), Options{Catalog: testCatalog(), Policy: pol,
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := c.BeginTrial(TrialSpec{ID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	tr.Arm()
	tr.End()
	for _, trial := range []string{"t1", "nope"} {
		agent.SetCatalogHash(c.cat.Hash)
		if err := agent.Connect(c.Addr(), "n1", trial); err != nil {
			t.Fatal(err)
		}
		if k := agent.Fault(0); k != 0 || pol.requests() != 0 {
			t.Errorf("trial %s: Fault = %d with %d requests; want no fault and no request", trial, k, pol.requests())
		}
		agent.Disconnect()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		out := logs.String()
		mu.Unlock()
		ended := strings.Contains(out, "level=DEBUG msg=\"controller: connection for a trial that ended; no faults\" trial=t1")
		unknown := strings.Contains(out, "level=WARN msg=\"controller: connection for unknown trial; no faults\" trial=nope")
		if ended && unknown && !strings.Contains(out, "level=WARN msg=\"controller: connection for unknown trial; no faults\" trial=t1") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs:\n%s\nwant a debug line for the ended trial t1 and a warning for nope only", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockedWriter serialises writes to a strings.Builder.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestBeginTrialReach: a trial spec's Reach narrows the policy's plan to
// the sites the trial's workload reached fault-free; without it the plan
// stands.
func TestBeginTrialReach(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reach []uint32
		want  []uint32
	}{
		{"no reach: the plan", nil, []uint32{0, 1, 2}},
		{"narrowed", []uint32{2, 0}, []uint32{0, 2}},
		{"a reached site the plan does not hold stays out", []uint32{1, 7}, []uint32{1}},
		{"reached nothing", []uint32{}, []uint32{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := start(t, &scripted{plan: policy.Plan{Sites: []uint32{0, 1, 2}, States: true}})
			tr, err := c.BeginTrial(TrialSpec{ID: "t1", Index: 1, Nodes: []string{"n1"}, Reach: tc.reach})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.End()
			if got := tr.s.plan.Sites; !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
				t.Errorf("live sites = %v, want %v", got, tc.want)
			}
			if !tr.s.plan.States {
				t.Error("narrowing dropped the plan's States")
			}
		})
	}
}

// TestHeldDelayWakesAgent: a delay held until the other members' clients
// made 2 more requests sleeps the agent's call until they did — the plan
// that lists the call reaches the agent ahead of the response, the plan
// that ends the hold wakes it — not for its 10 s cap, and the record
// says what met it.
func TestHeldDelayWakesAgent(t *testing.T) {
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}, script: []policy.Fault{{Kind: catalog.KindDelay, Delay: 10 * time.Second, Until: "requests=2"}}, done: true}
	c := start(t, pol)
	tr, err := c.BeginTrial(TrialSpec{ID: "t1", Nodes: []string{"n1", "n2"}})
	if err != nil {
		t.Fatal(err)
	}
	connectAgent(t, c, "n1", "t1")
	tr.Arm()
	go func() {
		time.Sleep(200 * time.Millisecond)
		for i := range 2 {
			tr.Printed(record.ClientEvent{Time: time.Now(), Client: "n2/0", Kind: record.EvProgress, Msg: fmt.Sprint("put k", i)})
		}
	}()
	start := time.Now()
	waitFor(t, func() bool { return agent.Fault(0) == 0 && pol.requests() == 1 })
	if d := time.Since(start); d < 150*time.Millisecond || d > 5*time.Second {
		t.Errorf("the held call returned after %v, want at the wake (200ms on), not at its 10s cap", d)
	}
	res := tr.End()
	if len(res.Injections) != 1 || res.Injections[0].Met == "" {
		t.Fatalf("injections %+v, want one held delay, met", res.Injections)
	}
}
