// Package workload is the API for gofault workloads: small Go programs that
// drive the cluster under test during a trial, with one client per node,
// and report every request's progress or error, the operations of a
// key-value history and any guarantee violations they see.
//
// A workload is a main package:
//
//	func main() {
//		workload.Main(func(ctx context.Context, t *workload.T) error {
//			return t.Phase("write", func(ctx context.Context) error {
//				for _, n := range t.Nodes() {
//					c := t.Client(n.Name)
//					_ = c.Do(ctx, "ping", "", func(ctx context.Context) error { return ping(ctx, n.Addr("client")) })
//				}
//				return nil
//			})
//		})
//	}
//
// The runner passes the environment described by Env (GOFAULT_CONTROLLER,
// GOFAULT_TRIAL, GOFAULT_NODES, GOFAULT_DEADLINE, GOFAULT_SEED). Events go
// to the controller over the wire protocol, batched every FlushInterval from
// a goroutine of their own, so a slow controller never blocks the workload;
// without GOFAULT_CONTROLLER they are written to stdout as JSON lines of
// record.ClientEvent, which is also the protocol of external command
// workloads (which the runner runs with cluster.RunWorkload). The package
// imports nothing of the runner: only the wire protocol and record.
package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/gofault/gofault/record"
)

// ClientWorkload is the Client (and Hello node) name of events about the
// workload as a whole: phase ends, a failed phase, a timeout.
const ClientWorkload = "workload"

// TimeoutMsg starts the message of the workload-level error event sent when
// the deadline passed before the workload finished.
const TimeoutMsg = "timeout"

// DefaultTimeout is a client's default per-request timeout: short, so that a
// hung node shows up as errors rather than as a stuck workload.
const DefaultTimeout = 2 * time.Second

// Main runs fn as the workload of this process: it decodes the environment,
// connects to the controller, runs fn with a context that ends at the
// deadline or on SIGINT/SIGTERM, flushes the events and exits — with status
// 0 when fn returned nil, 1 when it failed and 2 when the environment is
// invalid.
func Main(fn func(ctx context.Context, t *T) error) {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	env, err := ParseEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = Run(ctx, env, os.Stdout, fn)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(1)
	}
}

// Run runs fn as a workload in env and returns its error. Events go to the
// controller named by env, or as JSON lines to stdout when there is none (or
// it cannot be reached). Run is what Main calls; tests call it directly.
func Run(ctx context.Context, env Env, stdout io.Writer, fn func(ctx context.Context, t *T) error) (err error) {
	var w writer
	if env.Controller != "" {
		ww, derr := dialController(env.Controller, env.Trial)
		if derr != nil {
			slog.Error("workload: controller unreachable, writing events to stdout", "err", derr)
		} else {
			w = ww
		}
	}
	if w == nil {
		w = newJSONWriter(stdout)
	}
	t := newT(env, newSink(w))
	defer func() {
		if cerr := t.sink.close(); cerr != nil {
			slog.Warn("workload: closing the event stream", "err", cerr)
		}
	}()
	if !env.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, env.Deadline)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("workload panicked: %v", r)
			t.workloadEvent(record.EvError, err.Error())
		}
	}()
	t.mu.Lock()
	t.ctx = ctx
	t.mu.Unlock()
	err = fn(ctx, t)
	switch {
	case err == nil:
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		t.workloadEvent(record.EvError, fmt.Sprintf("%s: deadline passed in phase %q: %v", TimeoutMsg, t.currentPhase(), err))
	case !t.reported(err):
		t.workloadEvent(record.EvError, err.Error())
	}
	return err
}

// T is one run of a workload: its nodes, clients and phases.
type T struct {
	env  Env
	sink *sink

	mu       sync.Mutex
	clients  map[string]*Client
	phase    string
	failed   error // the first failed phase's error
	lastSent error // the last error already sent as an event
	ctx      context.Context
}

func newT(env Env, s *sink) *T {
	return &T{env: env, sink: s, clients: map[string]*Client{}, ctx: context.Background()}
}

// Nodes returns the cluster's nodes in GOFAULT_NODES order.
func (t *T) Nodes() []Node { return append([]Node(nil), t.env.Nodes...) }

// Node returns the node named name.
func (t *T) Node(name string) (Node, bool) {
	for _, n := range t.env.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

// Trial returns the trial key (GOFAULT_TRIAL).
func (t *T) Trial() string { return t.env.Trial }

// Seed returns GOFAULT_SEED; workloads derive all their random choices
// from it.
func (t *T) Seed() int64 { return t.env.Seed }

// Deadline returns the trial deadline, zero if there is none.
func (t *T) Deadline() time.Time { return t.env.Deadline }

// Client returns the first client of node, named "<node>/0". It panics if
// the node is unknown, which is a bug in the workload.
func (t *T) Client(node string) *Client { return t.ClientN(node, 0) }

// ClientN returns the i-th client of node, named "<node>/<i>", creating it
// on first use.
func (t *T) ClientN(node string, i int) *Client {
	if _, ok := t.Node(node); !ok {
		panic(fmt.Sprintf("workload: unknown node %q", node))
	}
	name := fmt.Sprintf("%s/%d", node, i)
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.clients[name]
	if !ok {
		c = &Client{t: t, name: name, node: node, Timeout: DefaultTimeout}
		t.clients[name] = c
	}
	return c
}

// Phase runs fn as the phase name. A phase runs only if every earlier phase
// succeeded; a failed phase is reported to the controller and its error
// returned, and later Phase calls return it again without running, so a
// workload can simply return the first error.
//
// fn gets the workload's context, which ends at the trial deadline.
func (t *T) Phase(name string, fn func(ctx context.Context) error) error {
	t.mu.Lock()
	ctx := t.ctx
	if t.failed != nil {
		err := t.failed
		t.mu.Unlock()
		return err
	}
	t.phase = name
	t.mu.Unlock()
	if err := fn(ctx); err != nil {
		err = fmt.Errorf("phase %s: %w", name, err)
		t.mu.Lock()
		t.failed = err
		t.mu.Unlock()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.workloadEvent(record.EvError, err.Error())
			t.mu.Lock()
			t.lastSent = err
			t.mu.Unlock()
		}
		return err
	}
	t.workloadEvent(record.EvPhase, name)
	return nil
}

// NotJudged tells gofault that the workload cannot judge this trial, and
// why: the system refused what its checks need (a stream or a consumer it
// could not create after a fault), so nothing it reports can prove the
// system right or wrong. The trial's status is then "not judged" — never
// "ok" — unless a checker fails on what was recorded. Call it at most once;
// a workload usually returns right after.
func (t *T) NotJudged(reason string) {
	t.workloadEvent(record.EvNotJudged, reason)
}

// context returns the workload's context.
func (t *T) context() context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ctx
}

func (t *T) currentPhase() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.phase
}

func (t *T) reported(err error) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastSent != nil && t.lastSent == err
}

func (t *T) workloadEvent(kind, msg string) {
	t.sink.emit(record.ClientEvent{Time: time.Now(), Client: ClientWorkload, Kind: kind, Msg: msg})
}

// Client is one client of the workload, talking to one node. Its methods
// are safe for concurrent use.
type Client struct {
	t    *T
	name string
	node string
	// Timeout is the per-request timeout Do, DoOp and each attempt of
	// Setup apply; DefaultTimeout unless changed before use.
	Timeout time.Duration
	// SetupTimeout is how long Setup retries before it gives up;
	// DefaultSetupTimeout when zero.
	SetupTimeout time.Duration
	// Definite, if set, says that a failed operation's error proves it did
	// not take effect, so DoOp leaves it out of the history. By default
	// every failed operation is recorded as Unknown, which is always sound.
	Definite func(error) bool
}

// Name returns the client's name, "<node>/<i>".
func (c *Client) Name() string { return c.name }

// Node returns the name of the node the client talks to.
func (c *Client) Node() string { return c.node }

func (c *Client) emit(ev record.ClientEvent) {
	ev.Client, ev.Node = c.name, c.node
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	c.t.sink.emit(ev)
}

// Progress reports a request that succeeded.
func (c *Client) Progress(msg string) { c.emit(record.ClientEvent{Kind: record.EvProgress, Msg: msg}) }

// Digest reports the digest of the client's member's data at point, a
// name every member's digest is taken at (e.g. "end"; put details such as
// a revision into the digest itself). Call it once the trial's faults are
// over and the member has caught up, for every member: the replicas
// checker fails the trial when live members report different digests at
// the same point.
func (c *Client) Digest(point, digest string) {
	c.emit(record.ClientEvent{Kind: record.EvDigest, Msg: point, Digest: digest})
}

// Error reports a request that failed.
func (c *Client) Error(err error) {
	c.emit(record.ClientEvent{Kind: record.EvError, Msg: err.Error()})
}

// Op records a completed operation of the key-value history. A recorded op
// whose Unknown is false also counts as progress of the client.
func (c *Client) Op(op record.Op) {
	c.emit(record.ClientEvent{Time: time.Unix(0, op.Return), Kind: record.EvOp, Op: &op})
}

// Violation reports that the workload saw the guarantee checker (e.g.
// "watch-order") broken.
func (c *Client) Violation(checker, msg string) {
	c.emit(record.ClientEvent{Kind: record.EvViolation, Checker: checker, Msg: msg})
}

// Health reports what the system itself says about the client's node (its
// own health endpoint or status call): ok or not, with a short reason.
// The gray-failure checker compares it with the client's errors.
func (c *Client) Health(ok bool, msg string) {
	kind := record.EvHealthy
	if !ok {
		kind = record.EvUnhealthy
	}
	c.emit(record.ClientEvent{Kind: kind, Msg: msg})
}

// Leader reports that the client's node says it is the cluster's leader
// (its status call says so): a healthy event whose message is
// record.HealthLeader. Report it from the same status call as Health, in
// its place. A campaign measures what a normal failover costs its clients
// by killing the node that last said so (see docs/checkers.md); without
// such reports it kills the first node.
func (c *Client) Leader() { c.Health(true, record.HealthLeader) }

// Do runs one request fn with the client's per-request timeout and reports
// progress ("<kind> <key>") or the error ("<kind> <key>: <err>"). A request
// cut short because ctx itself ended (the phase or workload is over) is not
// reported as an error. It returns fn's error.
func (c *Client) Do(ctx context.Context, kind, key string, fn func(ctx context.Context) error) error {
	sent := time.Now()
	rctx, cancel := c.requestContext(ctx)
	err := fn(rctx)
	cancel()
	label := kind
	if key != "" {
		label += " " + key
	}
	if err != nil {
		if ctx.Err() == nil {
			c.emit(record.ClientEvent{Kind: record.EvError, Msg: label + ": " + err.Error(), Sent: sent})
		}
		return err
	}
	c.emit(record.ClientEvent{Kind: record.EvProgress, Msg: label, Sent: sent})
	return nil
}

// DoOp runs the key-value operation op through fn with the client's
// per-request timeout and records it with its call and return times. fn
// returns the operation's output (the value read for "get", "true" or
// "false" for "cas", "" otherwise). A failed operation is recorded as
// Unknown — it may or may not have taken effect — unless Definite says
// otherwise, and reported as an error unless ctx itself ended.
func (c *Client) DoOp(ctx context.Context, op record.Op, fn func(ctx context.Context) (string, error)) (string, error) {
	rctx, cancel := c.requestContext(ctx)
	op.Call = time.Now().UnixNano()
	out, err := fn(rctx)
	op.Return = time.Now().UnixNano()
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			c.emit(record.ClientEvent{Time: time.Unix(0, op.Return), Kind: record.EvError, Msg: op.Kind + " " + op.Key + ": " + err.Error(), Sent: time.Unix(0, op.Call)})
		}
		if c.Definite != nil && c.Definite(err) {
			return out, err
		}
		op.Unknown = true
		op.Out = ""
		c.Op(op)
		return out, err
	}
	op.Out = out
	c.Op(op)
	return out, nil
}

func (c *Client) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.Timeout > 0 {
		return context.WithTimeout(ctx, c.Timeout)
	}
	return context.WithCancel(ctx)
}
