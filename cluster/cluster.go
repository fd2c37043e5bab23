// Package cluster runs a trial's cluster: it allocates free loopback ports,
// starts each node of the target as a process in its own process group with
// a fresh data dir and the agent's environment, waits for readiness, kills
// and restarts nodes on request, and always cleans up — no process or port
// outlives a trial, whether it ends normally, a node crashes or hangs, or
// gofault is interrupted. StartProcess is the same machinery for a
// workload process.
package cluster

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/record"
)

// Host is the address every node listens on.
const Host = "127.0.0.1"

// Spec describes one trial's cluster.
type Spec struct {
	// Dir is the trial's directory; it must not exist or be empty. Node n
	// gets the data dir <Dir>/<n> and the log <Dir>/<n>.log.
	Dir string
	// Trial is the trial ID (GOFAULT_TRIAL and .Trial).
	Trial string
	// Bin is the node binary (.Bin); made absolute.
	Bin string
	// BaseDir resolves a relative program in the command (the config's
	// directory); default the current directory.
	BaseDir string
	// Nodes says how to run each node: count, port names, command and env
	// templates, readiness probe and shutdown.
	Nodes Nodes
	// Controller is the agent's GOFAULT_CONTROLLER ("unix:/path" or
	// "tcp:host:port"); empty leaves the nodes uninstrumented in effect.
	Controller string
	// Env adds "KEY=value" variables to every node, after the config's.
	Env []string
	// Log receives the runner's own messages; default slog.Default().
	Log *slog.Logger
	// Reserved, if set, gives the nodes its ports (node-major, in
	// Nodes.Ports order) instead of fresh ones; the caller keeps them after
	// Stop, which holds them again.
	Reserved *Reservation
	// From, if set, is a formed cluster's directory (the Dir of an earlier
	// cluster of the same nodes on the same Reserved ports, see Form):
	// each node's data dir starts as a copy of From/<node>.
	From string
	// Leader, if set, names the node that leads now ("" when none is
	// known); Stop asks it once, for Shutdown.LeaderLast.
	Leader func() string
}

// Nodes says how to run the nodes of a cluster.
type Nodes struct {
	// Count is the number of node processes.
	Count int
	// Ports names the ports each node gets, e.g. ["client", "peer"].
	Ports []string
	// Command is the node's command line, text/template strings over
	// NodeVars, e.g. "--data-dir={{.Dir}}".
	Command []string
	// Env adds environment variables, values templates over NodeVars.
	Env map[string]string
	// Ready is how to tell that a node is up.
	Ready Ready
	// Shutdown is how nodes are stopped at the end of a trial.
	Shutdown Shutdown
}

// Ready is a readiness probe; with neither TCP nor HTTP a node is ready as
// soon as it runs.
type Ready struct {
	// TCP is a template for host:port that accepts connections when ready.
	TCP string
	// HTTP is a template for a URL that answers 2xx when ready.
	HTTP string
	// Timeout bounds the wait for every node to be ready; required.
	Timeout time.Duration
}

// Shutdown is how nodes are stopped: Signal, then SIGKILL after Grace.
type Shutdown struct {
	Signal syscall.Signal // required
	Grace  time.Duration
	// Sequential stops one node at a time, in index order, each with its
	// own grace, instead of all at once.
	Sequential bool
	// LeaderLast stops every node but the leader at once, then the leader
	// (Spec.Leader names it), each group with its own grace: an etcd
	// member waits up to a second for its live peers' connections to
	// close, so followers stopped together wait that second once, and a
	// leader stopped last has no peer to hand its leadership to, where
	// stopped with its peers it waits out a transfer to one that is going
	// away. Without a leader named it stops them as Sequential does.
	LeaderLast bool
}

// Cluster is a running trial cluster. Its methods are safe for concurrent
// use; several clusters may run at once.
type Cluster struct {
	spec   Spec
	ctx    context.Context
	log    *slog.Logger
	vars   []NodeVars
	ports  []int
	exits  chan record.Node
	done   chan struct{}
	stopCh chan struct{}
	// token marks the processes of this cluster (wire.EnvCluster).
	token string

	doneOnce sync.Once

	mu      sync.Mutex
	nodes   []*node
	stopped bool
	records []record.Node // set by Stop
}

// node is one node: its rendered command and current process.
type node struct {
	vars  NodeVars
	argv  []string
	env   []string
	ready string // rendered probe: "tcp:host:port", "http://...", or ""
	proc  *Process
	// recorded is the process whose exit is in rec.
	recorded *Process
	rec      record.Node
}

// StartError is returned by Start when a node fails to start or become
// ready. The cluster has been stopped; Nodes are its node records.
type StartError struct {
	Node  string
	Err   error
	Tail  string // the last lines of the node's log
	Nodes []record.Node
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("node %s: %v", e.Node, e.Err)
	if e.Tail != "" {
		msg += "\n--- last lines of its log ---\n" + e.Tail
	}
	return msg
}

func (e *StartError) Unwrap() error { return e.Err }

// Start allocates ports, starts every node and waits until all are ready.
// Cancelling ctx kills every node at once (what Ctrl-C does); Stop must
// still be called to release the cluster's ports and collect its records.
// If Start fails, it returns a *StartError after stopping what it started.
func Start(ctx context.Context, spec Spec) (*Cluster, error) {
	cl := spec.Nodes
	switch {
	case cl.Count < 1:
		return nil, fmt.Errorf("start cluster: %d nodes", cl.Count)
	case len(cl.Command) == 0:
		return nil, errors.New("start cluster: empty command")
	case cl.Ready.Timeout <= 0:
		return nil, errors.New("start cluster: no ready timeout")
	case cl.Shutdown.Signal == 0:
		return nil, errors.New("start cluster: no shutdown signal")
	}
	var err error
	if spec.Log == nil {
		spec.Log = slog.Default()
	}
	for _, p := range []*string{&spec.Dir, &spec.Bin} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				return nil, fmt.Errorf("start cluster: %w", err)
			}
		}
	}
	if spec.Dir == "" {
		return nil, errors.New("start cluster: no trial dir")
	}
	if err := freshDir(spec.Dir); err != nil {
		return nil, fmt.Errorf("start cluster: %w", err)
	}

	ps, err := spec.ports(cl.Count * len(cl.Ports))
	if err != nil {
		return nil, fmt.Errorf("start cluster: %w", err)
	}
	c := &Cluster{
		spec: spec, ctx: ctx, ports: ps, token: rand.Text(),
		log:    spec.Log.With("trial", spec.Trial),
		exits:  make(chan record.Node, 8*cl.Count),
		done:   make(chan struct{}),
		stopCh: make(chan struct{}),
	}
	c.vars = make([]NodeVars, cl.Count)
	for i := range cl.Count {
		name := NodeName(i + 1)
		port := map[string]int{}
		for j, pn := range cl.Ports {
			port[pn] = ps[i*len(cl.Ports)+j]
		}
		c.vars[i] = NodeVars{
			Index: i + 1, Name: name, Bin: spec.Bin, Dir: filepath.Join(spec.Dir, name),
			Port: port, Host: Host, Trial: spec.Trial, TrialDir: spec.Dir,
		}
	}
	for i := range c.vars {
		c.vars[i].Nodes = c.Nodes()
	}
	for _, v := range c.vars {
		n, err := c.newNode(v)
		if err == nil && spec.From != "" {
			err = copyTree(filepath.Join(spec.From, v.Name), v.Dir)
		}
		if err != nil {
			c.releasePorts()
			return nil, fmt.Errorf("start cluster: %w", err)
		}
		c.nodes = append(c.nodes, n)
	}
	if spec.Reserved != nil {
		spec.Reserved.unhold()
	}
	go c.watchContext()

	fail := func(n *node, err error) (*Cluster, error) {
		recs := c.Stop()
		return nil, &StartError{Node: n.vars.Name, Err: err, Tail: tail(n.rec.Log, 20), Nodes: recs}
	}
	c.mu.Lock()
	for _, n := range c.nodes {
		if err := c.startLocked(n); err != nil {
			c.mu.Unlock()
			return fail(n, err)
		}
	}
	c.mu.Unlock()
	if n, err := c.waitReady(ctx, c.nodes); err != nil {
		return fail(n, err)
	}
	c.log.Debug("cluster ready", "nodes", cl.Count, "dir", spec.Dir)
	return c, nil
}

// ports returns the cluster's n ports: the reservation's, or fresh ones.
func (spec Spec) ports(n int) ([]int, error) {
	if spec.Reserved == nil {
		return AllocPorts(n)
	}
	ps := spec.Reserved.Ports()
	if len(ps) != n {
		return nil, fmt.Errorf("%d ports reserved, the nodes need %d", len(ps), n)
	}
	return ps, nil
}

// releasePorts gives the cluster's ports back, or to its reservation.
func (c *Cluster) releasePorts() {
	if c.spec.Reserved != nil {
		c.spec.Reserved.hold()
		return
	}
	ReleasePorts(c.ports)
}

// Form starts a cluster on the reserved ports in spec.Dir, without a
// controller, waits until every node is ready and stops it: what it leaves
// in spec.Dir is the formed, empty cluster later clusters start From. A
// node that had to be killed after the shutdown grace leaves no template.
func Form(ctx context.Context, spec Spec) error {
	if spec.Reserved == nil {
		return errors.New("form a cluster template: no reserved ports")
	}
	spec.Controller, spec.From = "", ""
	c, err := Start(ctx, spec)
	if err != nil {
		return fmt.Errorf("form a cluster template: %w", err)
	}
	sig := SignalName(c.spec.Nodes.Shutdown.Signal)
	for _, n := range c.Stop() {
		if n.ExitCode != 0 && n.Signal != sig {
			return fmt.Errorf("form a cluster template: node %s ended with %s at the shutdown (code %d), not cleanly; see %s", n.Name, cmp.Or(n.Signal, "an error"), n.ExitCode, n.Log)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Keep the template sparse: preallocated space (etcd's 64 MiB WAL
	// segments) costs disk in every template, not in a sparse copy.
	for _, v := range c.vars {
		tmp := v.Dir + ".sparse"
		if err := copyTree(v.Dir, tmp); err != nil {
			return fmt.Errorf("form a cluster template: %w", err)
		}
		if err := os.RemoveAll(v.Dir); err != nil {
			return fmt.Errorf("form a cluster template: %w", err)
		}
		if err := os.Rename(tmp, v.Dir); err != nil {
			return fmt.Errorf("form a cluster template: %w", err)
		}
	}
	return nil
}

// freshDir creates dir, which must not exist or be empty.
func freshDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err == nil && len(ents) > 0 {
		return fmt.Errorf("trial dir %s is not empty", dir)
	}
	return os.MkdirAll(dir, 0o755)
}

func (c *Cluster) newNode(v NodeVars) (*node, error) {
	cl := c.spec.Nodes
	n := &node{vars: v, rec: record.Node{Name: v.Name, Log: filepath.Join(c.spec.Dir, v.Name+".log")}}
	for _, t := range cl.Command {
		s, err := Render(t, v)
		if err != nil {
			return nil, fmt.Errorf("node %s command: %w", v.Name, err)
		}
		n.argv = append(n.argv, s)
	}
	n.env = baseEnv()
	for _, k := range slices.Sorted(maps.Keys(cl.Env)) {
		s, err := Render(cl.Env[k], v)
		if err != nil {
			return nil, fmt.Errorf("node %s env %s: %w", v.Name, k, err)
		}
		n.env = append(n.env, k+"="+s)
	}
	n.env = append(n.env, c.spec.Env...)
	n.env = append(n.env, wire.EnvNode+"="+v.Name, wire.EnvTrial+"="+c.spec.Trial, wire.EnvCluster+"="+c.token)
	if c.spec.Controller != "" {
		n.env = append(n.env, wire.EnvController+"="+c.spec.Controller)
	}
	switch {
	case cl.Ready.TCP != "":
		s, err := Render(cl.Ready.TCP, v)
		if err != nil {
			return nil, fmt.Errorf("node %s ready.tcp: %w", v.Name, err)
		}
		n.ready = "tcp:" + s
	case cl.Ready.HTTP != "":
		s, err := Render(cl.Ready.HTTP, v)
		if err != nil {
			return nil, fmt.Errorf("node %s ready.http: %w", v.Name, err)
		}
		n.ready = s
	}
	return n, nil
}

// baseEnv is gofault's environment without the agent's variables.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == wire.EnvController || k == wire.EnvNode || k == wire.EnvTrial || k == wire.EnvCluster {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// startLocked starts n's process; c.mu is held.
func (c *Cluster) startLocked(n *node) error {
	if err := os.MkdirAll(n.vars.Dir, 0o755); err != nil {
		return err
	}
	p, err := StartProcess(c.ctx, ProcSpec{
		Args: n.argv, BaseDir: c.spec.BaseDir, Dir: n.vars.Dir, Env: n.env, Log: n.rec.Log,
	})
	if err != nil {
		return err
	}
	n.proc = p
	n.rec.PID = p.PID()
	n.rec.Exited, n.rec.Killed, n.rec.ExitCode, n.rec.Signal, n.rec.ExitTime = false, false, 0, "", time.Time{}
	go c.watch(n, p)
	return nil
}

// watch records how process p of node n ended and reports an unexpected
// exit on the Exits channel. It returns when p ends.
func (c *Cluster) watch(n *node, p *Process) {
	rec, self := c.recordExit(n, p)
	if self {
		c.log.Info("node exited unexpectedly", "node", rec.Name, "code", rec.ExitCode, "signal", rec.Signal)
		select {
		case c.exits <- rec:
		default:
			c.log.Warn("exit notification dropped: nobody reads Exits", "node", rec.Name)
		}
	}
}

// recordExit waits for p, the process of node n, and records how it ended
// in n's record unless a restart replaced p or it was recorded already. It
// reports whether this call recorded an exit on the process's own.
func (c *Cluster) recordExit(n *node, p *Process) (record.Node, bool) {
	e := p.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if n.proc != p || n.recorded == p {
		return n.rec, false
	}
	n.recorded = p
	n.rec.ExitCode, n.rec.Signal, n.rec.ExitTime = e.Code, e.Signal, e.Time
	switch e.Reason {
	case ReasonSelf:
		n.rec.Exited = true
	case ReasonKilled:
		n.rec.Exited, n.rec.Killed = true, true
	}
	return n.rec, e.Reason == ReasonSelf
}

// watchContext kills every node when the cluster's context is cancelled
// and closes done once all have ended. It returns at Stop or then.
func (c *Cluster) watchContext() {
	select {
	case <-c.ctx.Done():
	case <-c.stopCh:
		return
	}
	// The processes kill themselves on cancellation; wait for them.
	c.mu.Lock()
	procs := c.procsLocked()
	c.mu.Unlock()
	for _, p := range procs {
		p.Wait()
	}
	c.log.Debug("cluster cancelled; all nodes gone")
	c.closeDone()
}

func (c *Cluster) closeDone() { c.doneOnce.Do(func() { close(c.done) }) }

func (c *Cluster) procsLocked() []*Process {
	var ps []*Process
	for _, n := range c.nodes {
		if n.proc != nil {
			ps = append(ps, n.proc)
		}
	}
	return ps
}

// waitReady waits for the nodes' probes; it returns the first node that
// failed and why.
func (c *Cluster) waitReady(ctx context.Context, nodes []*node) (*node, error) {
	ctx, cancel := context.WithTimeout(ctx, c.spec.Nodes.Ready.Timeout)
	defer cancel()
	type result struct {
		n   *node
		err error
	}
	results := make(chan result, len(nodes))
	for _, n := range nodes {
		c.mu.Lock()
		p := n.proc
		c.mu.Unlock()
		go func() { results <- result{n, probe(ctx, n.ready, p, c.spec.Nodes.Ready.Timeout)} }()
	}
	var first result
	for range nodes {
		r := <-results
		if r.err != nil && first.err == nil {
			first = r
			cancel() // stop the other probes
		}
	}
	return first.n, first.err
}

// Nodes returns the variables of every node (a workload's GOFAULT_NODES
// holds their NodeVars.WorkloadNode).
func (c *Cluster) Nodes() []NodeVars {
	out := make([]NodeVars, len(c.vars))
	for i, v := range c.vars {
		v.Nodes = nil
		v.Port = maps.Clone(v.Port)
		out[i] = v
	}
	return out
}

// Dir returns the trial directory.
func (c *Cluster) Dir() string { return c.spec.Dir }

// Ports returns every port allocated to the cluster.
func (c *Cluster) Ports() []int { return slices.Clone(c.ports) }

// Exits delivers the record of every node that exits on its own (not by
// Kill, Restart, Stop or cancellation) while the cluster runs. It is
// buffered and never blocks the runner; it is not closed.
func (c *Cluster) Exits() <-chan record.Node { return c.exits }

// Done is closed when the cluster has ended: Stop returned, or the context
// was cancelled and every node process is gone.
func (c *Cluster) Done() <-chan struct{} { return c.done }

func (c *Cluster) node(name string) (*node, error) {
	for _, n := range c.nodes {
		if n.vars.Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %q in the cluster", name)
}

// Node returns the current record of one node.
func (c *Cluster) Node(name string) (record.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.node(name)
	if err != nil {
		return record.Node{}, err
	}
	return n.rec, nil
}

// Running reports whether the node's process is running.
func (c *Cluster) Running(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.node(name)
	return err == nil && n.proc != nil && !n.proc.Exited()
}

// Kill SIGKILLs a node's process group (a crash fault) and waits for it to
// end; its record is marked Exited and Killed.
func (c *Cluster) Kill(name string) error {
	n, p, err := c.running(name)
	if err != nil {
		return fmt.Errorf("kill %s: %w", name, err)
	}
	p.Kill()
	c.recordExit(n, p)
	return nil
}

// running returns the named node and its process while the cluster runs
// and the process has not ended.
func (c *Cluster) running(name string) (*node, *Process, error) {
	c.mu.Lock()
	n, err := c.node(name)
	if err == nil && c.stopped {
		err = errors.New("cluster stopped")
	}
	if err != nil {
		c.mu.Unlock()
		return nil, nil, err
	}
	p := n.proc
	c.mu.Unlock()
	if p.Exited() {
		return nil, nil, errors.New("not running")
	}
	return n, p, nil
}

// Shutdown stops a node's process as Stop does (its shutdown signal, then
// SIGKILL after the grace period) but alone and while the cluster runs (a
// reboot fault): its record is marked Exited and Killed as after Kill, and
// Restart starts it again.
func (c *Cluster) Shutdown(name string) error {
	n, p, err := c.running(name)
	if err != nil {
		return fmt.Errorf("shut down %s: %w", name, err)
	}
	p.stop(ReasonKilled, c.spec.Nodes.Shutdown.Signal, c.spec.Nodes.Shutdown.Grace)
	c.recordExit(n, p)
	return nil
}

// Pause stops the named node's whole process (SIGSTOP) until Resume (a
// pause fault); a node stopped with the cluster meanwhile is let go on
// first, so that it takes its shutdown signal.
func (c *Cluster) Pause(name string) error {
	_, p, err := c.running(name)
	if err == nil && !p.Pause() {
		err = errors.New("not running")
	}
	if err != nil {
		return fmt.Errorf("pause %s: %w", name, err)
	}
	return nil
}

// Resume lets the named node's paused process go on (SIGCONT).
func (c *Cluster) Resume(name string) error {
	c.mu.Lock()
	n, err := c.node(name)
	var p *Process
	if err == nil {
		p = n.proc
	}
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("resume %s: %w", name, err)
	}
	if p == nil || !p.Resume() {
		return fmt.Errorf("resume %s: not running", name)
	}
	return nil
}

// PID returns the process ID of the named node while it runs, 0 when it
// does not.
func (c *Cluster) PID(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.node(name)
	if err != nil || n.proc == nil || n.proc.Exited() {
		return 0
	}
	return n.proc.PID()
}

// Restart kills the node if it is running, starts it again with the same
// command, ports and data dir, and waits for it to be ready. Its log is
// appended to; Restarts counts the restarts.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	c.mu.Lock()
	n, err := c.node(name)
	if err == nil && c.stopped {
		err = errors.New("cluster stopped")
	}
	if err == nil {
		err = c.ctx.Err()
	}
	if err != nil {
		c.mu.Unlock()
		return fmt.Errorf("restart %s: %w", name, err)
	}
	old := n.proc
	c.mu.Unlock()
	if old != nil && !old.Exited() {
		if err := c.Kill(name); err != nil {
			return fmt.Errorf("restart %s: %w", name, err)
		}
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return fmt.Errorf("restart %s: cluster stopped", name)
	}
	n.rec.Restarts++
	n.rec.Restarted = append(n.rec.Restarted, time.Now())
	appendLine(n.rec.Log, fmt.Sprintf("=== gofault: restart %d of node %s ===", n.rec.Restarts, name))
	err = c.startLocked(n)
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	if _, err := c.waitReady(ctx, []*node{n}); err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	return nil
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

// Stop sends the shutdown signal to every running node (all at once, one
// at a time when Shutdown.Sequential, the leader after the others when
// Shutdown.LeaderLast: stopGroups), SIGKILLs any still
// running after the grace period, releases the ports and returns the node
// records (exit codes, signals, Exited/Killed flags, log paths). Calling
// it again returns the same records.
func (c *Cluster) Stop() []record.Node {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		<-c.done
		return slices.Clone(c.records)
	}
	c.stopped = true
	close(c.stopCh)
	nodes := slices.Clone(c.nodes)
	c.mu.Unlock()

	leader := ""
	if c.spec.Nodes.Shutdown.LeaderLast && c.spec.Leader != nil {
		leader = c.spec.Leader()
	}
	for _, group := range stopGroups(nodes, c.spec.Nodes.Shutdown, leader) {
		var wg sync.WaitGroup
		for _, n := range group {
			c.mu.Lock()
			p := n.proc
			c.mu.Unlock()
			if p == nil {
				continue
			}
			wg.Go(func() {
				p.Stop(c.spec.Nodes.Shutdown.Signal, c.spec.Nodes.Shutdown.Grace)
				c.recordExit(n, p)
			})
		}
		wg.Wait()
	}
	// What the nodes started in sessions of their own outlives their
	// process groups: find it by the cluster's token and kill it.
	if pids := killStray(wire.EnvCluster + "=" + c.token); len(pids) > 0 {
		c.spec.Log.Warn("killed processes the nodes left behind", "trial", c.spec.Trial, "pids", pids)
	}
	c.mu.Lock()
	c.records = make([]record.Node, len(c.nodes))
	for i, n := range c.nodes {
		c.records[i] = n.rec
	}
	recs := slices.Clone(c.records)
	c.mu.Unlock()
	c.releasePorts()
	c.closeDone()
	return recs
}

// stopGroups returns the groups Stop stops nodes in, one group after
// another, the nodes of a group at once: one group of all (parallel), one
// group per node in index order (Sequential, or LeaderLast without a
// leader among nodes), or every node but leader, then leader (LeaderLast).
func stopGroups(nodes []*node, s Shutdown, leader string) [][]*node {
	var lead *node
	if s.LeaderLast {
		for _, n := range nodes {
			if leader != "" && n.vars.Name == leader {
				lead = n
			}
		}
	}
	switch {
	case lead != nil:
		var rest []*node
		for _, n := range nodes {
			if n != lead {
				rest = append(rest, n)
			}
		}
		if len(rest) == 0 {
			return [][]*node{{lead}}
		}
		return [][]*node{rest, {lead}}
	case s.Sequential || s.LeaderLast:
		out := make([][]*node, len(nodes))
		for i, n := range nodes {
			out[i] = []*node{n}
		}
		return out
	}
	return [][]*node{nodes}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
