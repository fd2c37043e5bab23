package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/record"
)

// fakeController accepts one workload connection and collects its events.
type fakeController struct {
	addr   string
	hello  wire.Hello
	events []record.ClientEvent
	bye    bool
	err    error
	done   chan struct{}
}

func newFakeController(t *testing.T) *fakeController {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeController{addr: "unix:" + path, done: make(chan struct{})}
	go func() {
		defer close(fc.done)
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			fc.err = err
			return
		}
		defer c.Close()
		fc.err = fc.serve(c)
	}()
	t.Cleanup(func() { ln.Close() })
	return fc
}

func (fc *fakeController) serve(c net.Conn) error {
	r := wire.NewReader(c)
	typ, p, err := r.ReadFrame()
	if err != nil {
		return err
	}
	if typ != wire.THello {
		return fmt.Errorf("first frame %v", typ)
	}
	if err := wire.DecodeHello(p, &fc.hello); err != nil {
		return err
	}
	if _, err := c.Write(wire.AppendWelcome(nil, &wire.Welcome{Version: wire.Version, Plan: wire.Plan{Epoch: 1}})); err != nil {
		return err
	}
	var evs wire.Events
	for {
		typ, p, err := r.ReadFrame()
		if err != nil {
			return fmt.Errorf("read after %d events: %w", len(fc.events), err)
		}
		switch typ {
		case wire.TEvents:
			if err := wire.DecodeEvents(p, &evs); err != nil {
				return err
			}
			for i := range evs.Events {
				ev, err := DecodeEvent(&evs.Events[i])
				if err != nil {
					return err
				}
				fc.events = append(fc.events, ev)
			}
		case wire.TBye:
			fc.bye = true
			return nil
		default:
			return fmt.Errorf("unexpected frame %v", typ)
		}
	}
}

func (fc *fakeController) wait(t *testing.T) {
	t.Helper()
	<-fc.done
	if fc.err != nil {
		t.Fatalf("fake controller: %v", fc.err)
	}
}

func testNodes() []Node {
	return []Node{{Name: "n1", Ports: map[string]int{"client": 2379}}, {Name: "n2", Host: "10.0.0.2", Ports: map[string]int{"client": 2479}}}
}

func TestParseEnv(t *testing.T) {
	deadline := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	nodes := `[{"name":"n1","ports":{"client":2379}},{"name":"n2","host":"10.0.0.2","ports":{"client":2479}}]`
	tests := []struct {
		name    string
		env     map[string]string
		want    Env
		wantErr string
	}{
		{"full", map[string]string{EnvNodes: nodes, EnvController: "unix:/x", EnvTrial: "t1", EnvDeadline: deadline.Format(time.RFC3339Nano), EnvSeed: "-7"},
			Env{Controller: "unix:/x", Trial: "t1", Nodes: testNodes(), Deadline: deadline, Seed: -7}, ""},
		{"by hand", map[string]string{EnvNodes: nodes}, Env{Nodes: testNodes()}, ""},
		{"no nodes var", map[string]string{}, Env{}, "GOFAULT_NODES is not set"},
		{"empty nodes", map[string]string{EnvNodes: "[]"}, Env{}, "no nodes"},
		{"bad json", map[string]string{EnvNodes: "{"}, Env{}, "GOFAULT_NODES"},
		{"unnamed", map[string]string{EnvNodes: `[{"ports":{}}]`}, Env{}, "no name"},
		{"dup", map[string]string{EnvNodes: `[{"name":"a"},{"name":"a"}]`}, Env{}, "duplicate"},
		{"bad deadline", map[string]string{EnvNodes: nodes, EnvDeadline: "soon"}, Env{}, "GOFAULT_DEADLINE"},
		{"bad seed", map[string]string{EnvNodes: nodes, EnvSeed: "x"}, Env{}, "GOFAULT_SEED"},
		{"adaptive end", map[string]string{EnvNodes: nodes, EnvLoadEnd: "/t/load.end", EnvLoadMin: "1.5s"},
			Env{Nodes: testNodes(), LoadEnd: "/t/load.end", LoadMin: 1500 * time.Millisecond}, ""},
		{"bad load min", map[string]string{EnvNodes: nodes, EnvLoadEnd: "/t/load.end", EnvLoadMin: "soon"}, Env{}, "GOFAULT_LOAD_MIN"},
		{"calibration's longer load", map[string]string{EnvNodes: nodes, EnvLoadEnd: "/t/load.end", EnvLoadMin: "1s", EnvLoadFull: "15s"},
			Env{Nodes: testNodes(), LoadEnd: "/t/load.end", LoadMin: time.Second, LoadFull: 15 * time.Second}, ""},
		{"bad load full", map[string]string{EnvNodes: nodes, EnvLoadEnd: "/t/load.end", EnvLoadFull: "-2s"}, Env{}, "GOFAULT_LOAD_FULL"},
		{"negative load min", map[string]string{EnvNodes: nodes, EnvLoadMin: "-1s"}, Env{}, "GOFAULT_LOAD_MIN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || !got.Deadline.Equal(tc.want.Deadline) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			// Environ round-trips.
			envv, err := got.Environ()
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]string{}
			for _, kv := range envv {
				k, v, _ := strings.Cut(kv, "=")
				m[k] = v
			}
			back, err := ParseEnv(func(k string) string { return m[k] })
			if err != nil || fmt.Sprint(back) != fmt.Sprint(got) {
				t.Fatalf("round trip: %+v, %v", back, err)
			}
		})
	}
}

// kinds summarises events as "client kind msg" lines.
func kinds(evs []record.ClientEvent) []string {
	var out []string
	for _, e := range evs {
		s := e.Client + " " + e.Kind
		if e.Kind != record.EvOp {
			s += " " + e.Msg
		} else {
			s += fmt.Sprintf(" %s %s out=%q unknown=%v", e.Op.Kind, e.Op.Key, e.Op.Out, e.Op.Unknown)
		}
		if e.Checker != "" {
			s += " [" + e.Checker + "]"
		}
		out = append(out, s)
	}
	return out
}

func scripted(ctx context.Context, t *T) error {
	c1, c2 := t.Client("n1"), t.Client("n2")
	if err := t.Phase("setup", func(ctx context.Context) error {
		c1.Progress("ready")
		return c2.Do(ctx, "ping", "", func(context.Context) error { return nil })
	}); err != nil {
		return err
	}
	if err := t.Phase("mixed", func(ctx context.Context) error {
		_, _ = c1.DoOp(ctx, record.Op{Kind: "put", Key: "k", Value: "v"}, func(context.Context) (string, error) { return "", nil })
		_, _ = c2.DoOp(ctx, record.Op{Kind: "get", Key: "k"}, func(context.Context) (string, error) { return "", errors.New("deadline exceeded") })
		c2.Definite = func(error) bool { return true }
		_, _ = c2.DoOp(ctx, record.Op{Kind: "put", Key: "k", Value: "w"}, func(context.Context) (string, error) { return "", errors.New("permission denied") })
		c1.Violation("watch-order", "rev 5 after 7")
		c2.Health(true, "leader n1")
		return errors.New("boom")
	}); err != nil {
		// A later phase must not run.
		_ = t.Phase("verify", func(context.Context) error { panic("verify ran after a failed phase") })
		return err
	}
	return nil
}

var scriptedWant = []string{
	"n1/0 progress ready",
	"n2/0 progress ping",
	"workload phase setup",
	"n1/0 op put k out=\"\" unknown=false",
	"n2/0 error get k: deadline exceeded",
	"n2/0 op get k out=\"\" unknown=true",
	"n2/0 error put k: permission denied",
	"n1/0 violation rev 5 after 7 [watch-order]",
	"n2/0 healthy leader n1",
	"workload error phase mixed: boom",
}

func TestRunController(t *testing.T) {
	fc := newFakeController(t)
	env := Env{Controller: fc.addr, Trial: "trial-7", Nodes: testNodes()}
	var stdout bytes.Buffer
	err := Run(context.Background(), env, &stdout, scripted)
	if err == nil || !strings.Contains(err.Error(), "phase mixed: boom") {
		t.Fatalf("Run error = %v", err)
	}
	fc.wait(t)
	if fc.hello.Role != wire.RoleWorkload || fc.hello.Node != ClientWorkload || fc.hello.Trial != "trial-7" {
		t.Errorf("hello = %+v", fc.hello)
	}
	if !fc.bye {
		t.Error("no bye")
	}
	if got := kinds(fc.events); strings.Join(got, "\n") != strings.Join(scriptedWant, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(scriptedWant, "\n"))
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout not empty with a controller: %q", stdout.String())
	}
	for _, e := range fc.events {
		if e.Kind == record.EvOp && e.Op.Return < e.Op.Call {
			t.Errorf("op returns before its call: %+v", e.Op)
		}
	}
}

func TestRunStdout(t *testing.T) {
	var stdout bytes.Buffer
	err := Run(context.Background(), Env{Nodes: testNodes()}, &stdout, scripted)
	if err == nil {
		t.Fatal("want error")
	}
	if got := kinds(stdoutEvents(t, stdout.String())); strings.Join(got, "\n") != strings.Join(scriptedWant, "\n") {
		t.Errorf("events:\n%s", strings.Join(got, "\n"))
	}
}

func TestRunUnreachableControllerFallsBackToStdout(t *testing.T) {
	var stdout bytes.Buffer
	env := Env{Controller: "unix:" + filepath.Join(t.TempDir(), "none.sock"), Nodes: testNodes()}
	if err := Run(context.Background(), env, &stdout, func(ctx context.Context, t *T) error {
		t.Client("n1").Progress("x")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), `"kind":"progress"`) {
		t.Fatalf("stdout = %q", stdout.String())
	}
}

func TestRunDeadline(t *testing.T) {
	var stdout bytes.Buffer
	env := Env{Nodes: testNodes(), Deadline: time.Now().Add(50 * time.Millisecond)}
	err := Run(context.Background(), env, &stdout, func(ctx context.Context, t *T) error {
		return t.Phase("mixed", func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		})
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(stdout.String(), `"msg":"timeout: deadline passed in phase \"mixed\"`) {
		t.Fatalf("no timeout event: %q", stdout.String())
	}
}

func TestRunPanic(t *testing.T) {
	var stdout bytes.Buffer
	err := Run(context.Background(), Env{Nodes: testNodes()}, &stdout, func(ctx context.Context, t *T) error { panic("oops") })
	if err == nil || !strings.Contains(stdout.String(), "workload panicked: oops") {
		t.Fatalf("err = %v, stdout %q", err, stdout.String())
	}
}

func TestSinkBoundsMemory(t *testing.T) {
	blocked := &blockingWriter{release: make(chan struct{})}
	s := newSink(blocked)
	// The writer blocks on its first batch; emit must still never block and
	// hold at most MaxPending events.
	for i := 0; i < 3*MaxPending; i++ {
		s.emit(record.ClientEvent{Kind: record.EvProgress})
	}
	s.mu.Lock()
	n := len(s.pending)
	s.mu.Unlock()
	if n > MaxPending {
		t.Fatalf("pending = %d > %d", n, MaxPending)
	}
	close(blocked.release)
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	blocked.mu.Lock()
	defer blocked.mu.Unlock()
	if blocked.n == 0 || blocked.n > 3*MaxPending || !blocked.closed {
		t.Fatalf("written %d, closed %v", blocked.n, blocked.closed)
	}
}

type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	n       int
	closed  bool
}

func (b *blockingWriter) write(evs []record.ClientEvent) error {
	<-b.release
	b.mu.Lock()
	b.n += len(evs)
	b.mu.Unlock()
	return nil
}

func (b *blockingWriter) close(time.Time) error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}

func TestWireWriterSplitsFrames(t *testing.T) {
	a, b := net.Pipe()
	w := &wireWriter{c: a}
	big := strings.Repeat("x", maxMsg)
	var evs []record.ClientEvent
	for i := 0; i < 2*wire.MaxFrame/maxMsg; i++ {
		evs = append(evs, record.ClientEvent{Time: time.Unix(1, 0), Kind: record.EvError, Msg: big})
	}
	errc := make(chan error, 1)
	go func() { errc <- w.write(evs) }()
	r := wire.NewReader(b)
	got, frames := 0, 0
	var m wire.Events
	for got < len(evs) {
		typ, p, err := r.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if typ != wire.TEvents {
			t.Fatalf("frame %v", typ)
		}
		if err := wire.DecodeEvents(p, &m); err != nil {
			t.Fatal(err)
		}
		got += len(m.Events)
		frames++
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if frames < 2 {
		t.Fatalf("%d events in %d frames", got, frames)
	}
	a.Close()
	b.Close()
}

func TestRequestsCutByTheirContextAreNotErrors(t *testing.T) {
	var stdout bytes.Buffer
	err := Run(context.Background(), Env{Nodes: testNodes()}, &stdout, func(ctx context.Context, t *T) error {
		c := t.Client("n1")
		pctx, cancel := context.WithCancel(ctx)
		cancel() // the phase is over
		_ = c.Do(pctx, "get", "a", func(ctx context.Context) error { return ctx.Err() })
		_, _ = c.DoOp(pctx, record.Op{Kind: "put", Key: "a", Value: "1"}, func(ctx context.Context) (string, error) { return "", ctx.Err() })
		// A request's own timeout is an error.
		c.Timeout = time.Millisecond
		_ = c.Do(ctx, "get", "b", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	evs := stdoutEvents(t, stdout.String())
	want := []string{
		`n1/0 op put a out="" unknown=true`,
		"n1/0 error get b: context deadline exceeded",
	}
	if got := kinds(evs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s", strings.Join(got, "\n"))
	}
}

// BenchmarkEmit measures what reporting one event costs a client (the
// batching goroutine's encoding is not on the client's path).
func BenchmarkEmit(b *testing.B) {
	s := newSink(newJSONWriter(io.Discard))
	defer s.close()
	c := &Client{t: &T{sink: s}, name: "n1/0", node: "n1"}
	for b.Loop() {
		c.Progress("put kv/k1")
	}
}

// TestEach: every item runs, concurrently, and every error comes back.
func TestEach(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	start := make(chan struct{})
	err := Each([]int{1, 2, 3}, func(i int) error {
		if i == 3 {
			close(start)
		}
		// The first two wait for the last: only side by side does it
		// come.
		select {
		case <-start:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("%d: not run side by side with 3", i)
		}
		mu.Lock()
		seen[i] = true
		mu.Unlock()
		if i == 2 {
			return errors.New("two")
		}
		return nil
	})
	if len(seen) != 3 || err == nil || err.Error() != "two" {
		t.Errorf("Each: ran %v, error %v; want all three, error two", seen, err)
	}
	if Each(nil, func(int) error { return errors.New("x") }) != nil {
		t.Error("Each of nothing failed")
	}
}

// TestSleep: a cancelled context ends the sleep early and says so.
func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("a full sleep reported cut short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Error("a cancelled sleep reported full")
	}
}
