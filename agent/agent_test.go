package agent

import (
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// fakeController is a minimal controller for agent tests: it welcomes one
// agent with a plan and answers requests with answer.
type fakeController struct {
	t      *testing.T
	ln     net.Listener
	plan   wire.Plan
	answer func(*wire.Request) (wire.Response, bool) // false: never answer

	mu       sync.Mutex
	requests []wire.Request
	events   []wire.Event
	conn     net.Conn
	gotEvent chan struct{}
}

func newFake(t *testing.T, plan wire.Plan, answer func(*wire.Request) (wire.Response, bool)) *fakeController {
	t.Helper()
	// A short directory of its own, not t.TempDir(): that one is named
	// after the (sub)test, and a long name under a long TMPDIR passes the
	// 108 bytes a unix socket's path may have ("bind: invalid argument").
	dir, err := os.MkdirTemp("", "gfa")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "c.sock"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeController{t: t, ln: ln, plan: plan, answer: answer, gotEvent: make(chan struct{}, 1)}
	go f.serve()
	t.Cleanup(func() { ln.Close(); f.closeConn() })
	return f
}

func (f *fakeController) addr() string { return "unix:" + f.ln.Addr().String() }

func (f *fakeController) closeConn() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn != nil {
		f.conn.Close()
	}
}

func (f *fakeController) serve() {
	nc, err := f.ln.Accept()
	if err != nil {
		return
	}
	f.mu.Lock()
	f.conn = nc
	f.mu.Unlock()
	r := wire.NewReader(nc)
	if t, _, err := r.ReadFrame(); err != nil || t != wire.THello {
		return
	}
	nc.Write(wire.AppendWelcome(nil, &wire.Welcome{Version: wire.Version, Plan: f.plan}))
	for {
		t, p, err := r.ReadFrame()
		if err != nil {
			return
		}
		switch t {
		case wire.TRequest:
			var req wire.Request
			if err := wire.DecodeRequest(p, &req); err != nil {
				return
			}
			f.mu.Lock()
			f.requests = append(f.requests, req)
			f.mu.Unlock()
			if resp, ok := f.answer(&req); ok {
				resp.ID = req.ID
				nc.Write(wire.AppendResponse(nil, &resp))
			}
		case wire.TEvents:
			var evs wire.Events
			if err := wire.DecodeEvents(p, &evs); err != nil {
				return
			}
			f.mu.Lock()
			for _, e := range evs.Events {
				e.Data = append([]byte(nil), e.Data...)
				f.events = append(f.events, e)
			}
			f.mu.Unlock()
			select {
			case f.gotEvent <- struct{}{}:
			default:
			}
		}
	}
}

func (f *fakeController) nRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// attach connects the agent globals to f, as init does with
// GOFAULT_CONTROLLER, and undoes it when the test ends.
func attach(t *testing.T, f *fakeController) *conn {
	t.Helper()
	c, err := connect(f.addr(), wire.Hello{Version: wire.Version, Role: wire.RoleAgent, Node: "n1"}, ConnectTimeout)
	if err != nil {
		t.Fatal(err)
	}
	resetArmed()
	resetMembers()
	c.start()
	t.Cleanup(func() {
		c.close()
		resetArmed()
		current.Store(emptyPlan)
	})
	return c
}

func always(a wire.Action, arg int64) func(*wire.Request) (wire.Response, bool) {
	return func(*wire.Request) (wire.Response, bool) { return wire.Response{Action: a, Arg: arg}, true }
}

func TestNoControllerNeverInjects(t *testing.T) {
	for site := uint32(0); site < 1000; site++ {
		if k := Fault(site); k != 0 {
			t.Fatalf("Fault(%d) = %d without a controller", site, k)
		}
	}
}

func TestDecisions(t *testing.T) {
	tests := []struct {
		name   string
		answer func(*wire.Request) (wire.Response, bool)
		site   uint32
		want   int
		asks   int
	}{
		{"live site gets error variant", always(wire.ActError, 2), 70, 2, 1},
		{"live site told none", always(wire.ActNone, 0), 70, 0, 1},
		{"site not in plan never asks", always(wire.ActError, 1), 71, 0, 0},
		{"site beyond plan bitmap never asks", always(wire.ActError, 1), 100000, 0, 0},
		{"delay returns zero after sleeping", always(wire.ActDelay, int64(time.Millisecond)), 3, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, wire.Plan{Sites: []uint32{3, 70}}, tt.answer)
			attach(t, f)
			if got := Fault(tt.site); got != tt.want {
				t.Errorf("Fault(%d) = %d, want %d", tt.site, got, tt.want)
			}
			if got := f.nRequests(); got != tt.asks {
				t.Errorf("controller saw %d requests, want %d", got, tt.asks)
			}
		})
	}
}

func TestDelayIsSlept(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1}}, always(wire.ActDelay, int64(30*time.Millisecond)))
	attach(t, f)
	start := time.Now()
	Fault(1)
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("Fault returned after %v, want at least the 30ms delay", d)
	}
}

// TestDelayEndsWithContext: a delay at a call that takes a context ends
// when the context is done (FaultCtx, DialCtx), and lasts its length
// otherwise (a live context, none).
func TestDelayEndsWithContext(t *testing.T) {
	const delay = 300 * time.Millisecond
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		hook  func() int
		short bool
	}{
		{"FaultCtx, context done", func() int { return FaultCtx(1, cancelled) }, true},
		{"DialCtx, context done", func() int { return DialCtx(1, "n2:1", cancelled) }, true},
		{"FaultCtx, context live", func() int { return FaultCtx(1, context.Background()) }, false},
		{"FaultCtx, no context", func() int { return FaultCtx(1, nil) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, wire.Plan{Flags: wire.FlagStacks, Sites: []uint32{1}}, always(wire.ActDelay, int64(delay)))
			attach(t, f)
			start := time.Now()
			if k := tt.hook(); k != 0 {
				t.Errorf("hook = %d after a delay, want 0 (the real call runs)", k)
			}
			if d := time.Since(start); tt.short != (d < delay) {
				t.Errorf("hook returned after %v; want the %v delay cut short: %v", d, delay, tt.short)
			}
			// The request's stack starts at the hook's caller (this
			// test's function literal), not in the agent.
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.requests) != 1 || len(f.requests[0].Stack) == 0 ||
				!strings.HasPrefix(f.requests[0].Stack[0].Func, "github.com/gofault/gofault/agent.TestDelayEndsWithContext.") {
				t.Errorf("requests %+v: want one whose stack starts at the hook's caller", f.requests)
			}
		})
	}
}

// TestHoldEndsAtWake: a held delay (wire.ActHold) sleeps while the
// current plan lists its request and at most its Arg: a later plan
// without it wakes the call, one that still lists it does not, a wake
// that came before the response (in the plans ahead of it) ends it at
// once, and without a wake it lasts its Arg.
func TestHoldEndsAtWake(t *testing.T) {
	const capped = 300 * time.Millisecond
	tests := []struct {
		name          string
		before, after []bool // plans ahead of the response and 50ms after it: whether each lists the request
		short         bool
	}{
		{"woken by a plan without it", []bool{true}, []bool{false}, true},
		{"a plan that still lists it does not wake it", []bool{true}, []bool{true}, false},
		{"met before the response came", []bool{true, false}, nil, true},
		{"never woken: its Arg", []bool{true}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f *fakeController
			epoch := uint32(1)
			push := func(nc net.Conn, id uint64, listing bool) {
				epoch++
				p := wire.Plan{Epoch: epoch, Sites: []uint32{1}}
				if listing {
					p.Holding = []uint64{id}
				}
				nc.Write(wire.AppendPlan(nil, &p))
			}
			f = newFake(t, wire.Plan{Sites: []uint32{1}}, func(req *wire.Request) (wire.Response, bool) {
				f.mu.Lock()
				nc := f.conn
				f.mu.Unlock()
				for _, l := range tt.before {
					push(nc, req.ID, l)
				}
				if len(tt.after) > 0 {
					id := req.ID
					go func() {
						time.Sleep(50 * time.Millisecond)
						for _, l := range tt.after {
							push(nc, id, l)
						}
					}()
				}
				return wire.Response{Action: wire.ActHold, Arg: int64(capped)}, true
			})
			attach(t, f)
			start := time.Now()
			if k := Fault(1); k != 0 {
				t.Errorf("Fault = %d after a held delay, want 0 (the real call runs)", k)
			}
			if d := time.Since(start); tt.short != (d < capped) {
				t.Errorf("held delay ended after %v; want it shorter than its %v Arg: %v", d, capped, tt.short)
			}
		})
	}
}

func TestPlanPushReplacesLiveSites(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1}}, always(wire.ActError, 1))
	attach(t, f)
	if Fault(1) != 1 {
		t.Fatal("site 1 not live")
	}
	f.mu.Lock()
	f.conn.Write(wire.AppendPlan(nil, &wire.Plan{Epoch: 2, Sites: []uint32{2}}))
	f.mu.Unlock()
	waitFor(t, func() bool { return current.Load().epoch == 2 })
	if Fault(1) != 0 || Fault(2) != 1 {
		t.Fatal("plan push did not move the live site from 1 to 2")
	}
}

func TestFailOpenWhenControllerDies(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1}}, always(wire.ActError, 1))
	attach(t, f)
	if Fault(1) != 1 {
		t.Fatal("site 1 not live")
	}
	f.ln.Close()
	f.closeConn()
	waitFor(t, func() bool { return client.Load() == nil })
	start := time.Now()
	for i := 0; i < 100; i++ {
		if Fault(1) != 0 {
			t.Fatal("injected after the controller died")
		}
	}
	if d := time.Since(start); d > DecisionTimeout {
		t.Fatalf("hooks took %v after the controller died", d)
	}
}

func TestFailOpenWhenControllerHangs(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1}}, func(*wire.Request) (wire.Response, bool) { return wire.Response{}, false })
	attach(t, f)
	start := time.Now()
	if Fault(1) != 0 {
		t.Fatal("injected without an answer")
	}
	first := time.Since(start)
	if first < DecisionTimeout/2 {
		t.Fatalf("first decision returned after %v; expected to wait for the controller", first)
	}
	for i := 0; i < 100; i++ {
		Fault(1)
	}
	if f.nRequests() != 1 {
		t.Fatalf("agent kept asking a hung controller: %d requests", f.nRequests())
	}
	if current.Load() != emptyPlan {
		t.Fatal("plan not cleared after the decision timeout")
	}
}

func TestConnectTimeoutWhenNoWelcome(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			defer nc.Close()
			time.Sleep(2 * time.Second)
		}
	}()
	start := time.Now()
	_, err = connect("tcp:"+ln.Addr().String(), wire.Hello{Version: wire.Version}, ConnectTimeout)
	if err == nil {
		t.Fatal("connect succeeded without a welcome")
	}
	if d := time.Since(start); d > 2*ConnectTimeout {
		t.Fatalf("connect took %v, bound is %v", d, ConnectTimeout)
	}
}

func TestStatesReachController(t *testing.T) {
	f := newFake(t, wire.Plan{Flags: wire.FlagStates | wire.FlagStacks, Sites: []uint32{9}}, always(wire.ActNone, 0))
	attach(t, f)
	inst := uintptr(0xabc0)
	State(4, 7, inst)
	State(4, 7, inst) // same state again: no new event
	Fault(9)
	select {
	case <-f.gotEvent:
	case <-time.After(5 * time.Second):
		t.Fatal("no state event reached the controller")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.events) != 1 {
		t.Fatalf("got %d events, want 1: %+v", len(f.events), f.events)
	}
	e := f.events[0]
	if e.Kind != wire.EvState || e.A != 4 || e.B != 7 || e.C != uint64(inst) {
		t.Errorf("event = %+v, want state task 4 state 7 inst %#x", e, inst)
	}
	r := f.requests[0]
	if r.Task != 4 || r.State != 7 || r.Inst != uint64(inst) {
		t.Errorf("request carries task %d state %d inst %#x, want 4 7 %#x", r.Task, r.State, r.Inst, inst)
	}
	if len(r.Stack) == 0 || r.Stack[0].Func != "github.com/gofault/gofault/agent.TestStatesReachController" {
		t.Errorf("request stack does not start at the hook's caller: %+v", r.Stack)
	}
}

func TestGoroutineIdentityDistinct(t *testing.T) {
	ids := make(chan uint64, 2)
	var wg sync.WaitGroup
	block := make(chan struct{})
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids <- goroutine()
			<-block
		}()
	}
	a, b := <-ids, <-ids
	close(block)
	wg.Wait()
	if a == b || a == 0 {
		t.Fatalf("goroutine identities %#x and %#x", a, b)
	}
	if g1, g2 := goroutine(), goroutine(); g1 != g2 {
		t.Fatal("goroutine identity not stable")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

var sink int

// BenchmarkHookNotCandidate measures the hook at a site that is not live in
// the current plan: the cost every instrumented call pays in every trial.
func BenchmarkHookNotCandidate(b *testing.B) {
	// A realistic plan: some live sites, the benchmarked one not among them.
	current.Store(newPlan(&wire.Plan{Sites: []uint32{3, 64, 700, 4095}}))
	defer current.Store(emptyPlan)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink += Fault(1000)
	}
}

// BenchmarkCtxHookNotCandidate is BenchmarkHookNotCandidate for the hook
// of a call that takes a context (FaultCtx): the context is passed, never
// looked at.
func BenchmarkCtxHookNotCandidate(b *testing.B) {
	current.Store(newPlan(&wire.Plan{Sites: []uint32{3, 64, 700, 4095}}))
	defer current.Store(emptyPlan)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink += FaultCtx(1000, ctx)
	}
}

// BenchmarkAfterHookDisarmed measures the hook function of a disk site
// that can crash after its call, as the rewrite writes it (a deferred
// After opening it) around a call that does nothing, with no crash armed:
// what every such call pays beside BenchmarkHookNotCandidate's hook.
func BenchmarkAfterHookDisarmed(b *testing.B) {
	current.Store(newPlan(&wire.Plan{Sites: []uint32{3, 64, 700, 4095}}))
	defer current.Store(emptyPlan)
	call := func() int { return 1 }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink += func() int { defer After(1000); Fault(1000); return call() }()
	}
}

// BenchmarkHookOnly is BenchmarkAfterHookDisarmed's hook function without
// the deferred After: the difference is After's cost.
func BenchmarkHookOnly(b *testing.B) {
	current.Store(newPlan(&wire.Plan{Sites: []uint32{3, 64, 700, 4095}}))
	defer current.Store(emptyPlan)
	call := func() int { return 1 }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink += func() int { Fault(1000); return call() }()
	}
}

// BenchmarkStateNotTracked measures a state hook when the plan does not ask
// for states.
func BenchmarkStateNotTracked(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		State(1, 2, 3)
	}
}

// TestRoleReachesController checks that a request carries the role last
// reported by Role (none before the first), and that a change of role is
// an event.
func TestRoleReachesController(t *testing.T) {
	role.known.Store(false)
	t.Cleanup(func() { role.known.Store(false); role.value.Store(0) })
	f := newFake(t, wire.Plan{Sites: []uint32{9}}, always(wire.ActNone, 0))
	attach(t, f)
	Fault(9)
	Role(2)
	Role(2) // the same role again: no new event
	Fault(9)
	Role(0)
	Fault(9)
	waitFor(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.events) >= 2
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 3 {
		t.Fatalf("%d requests, want 3", len(f.requests))
	}
	for i, want := range []struct {
		has bool
		v   int64
	}{{false, 0}, {true, 2}, {true, 0}} {
		if r := f.requests[i]; r.HasRole != want.has || r.Role != want.v {
			t.Errorf("request %d carries role %v/%d, want %v/%d", i, r.HasRole, r.Role, want.has, want.v)
		}
	}
	if len(f.events) != 2 || f.events[0].Kind != wire.EvRole || f.events[0].A != 2 || f.events[1].A != 0 {
		t.Errorf("events %+v, want role 2 then role 0", f.events)
	}
}

// BenchmarkRoleUnchanged measures a role hook that writes the role the
// process already has.
func BenchmarkRoleUnchanged(b *testing.B) {
	Role(1)
	b.Cleanup(func() { role.known.Store(false) })
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Role(1)
	}
}

// TestWithPaths: an injected *fs.PathError or *os.LinkError gets the
// call's file names; a path the error has, and other errors, are kept.
func TestWithPaths(t *testing.T) {
	for _, tc := range []struct {
		err   error
		paths []string
		want  string
	}{
		{&fs.PathError{Op: "open", Err: syscall.EIO}, []string{"/d/wal"}, "open /d/wal: input/output error"},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.EIO}, []string{"/d/wal"}, "open /x: input/output error"},
		{&fs.PathError{Op: "sync", Err: syscall.EIO}, nil, "sync : input/output error"},
		{&os.LinkError{Op: "rename", Err: syscall.ENOSPC}, []string{"/a", "/b"}, "rename /a /b: no space left on device"},
		{syscall.EIO, []string{"/d/wal"}, "input/output error"},
	} {
		if got := WithPaths(tc.err, tc.paths...).Error(); got != tc.want {
			t.Errorf("WithPaths(%v, %q) = %q, want %q", tc.err, tc.paths, got, tc.want)
		}
	}
}
