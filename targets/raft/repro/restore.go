// Package repro holds standalone reproductions of the bugs gofault found in
// hashicorp/raft (docs/found.md): each test runs hashicorp/raft's own
// in-memory transport and stores and its file snapshot store, with no
// gofault in between, and fails when the bug no longer shows (upstream
// fixed it).
package repro

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Counter is a state machine of one number, the sum of the entries
// applied. Its hooks let a test hold a snapshot's Persist and a restore
// where it wants them; nil hooks do nothing.
type Counter struct {
	mu  sync.Mutex
	sum uint64

	// Persisting, when set, runs at the start of every snapshot's Persist
	// (a snapshot the user or raft itself takes), before it writes.
	Persisting func()
	// Restoring, when set, runs at the start of every Restore (a user
	// restore on the leader, a snapshot installed from the leader on a
	// follower).
	Restoring func()
	// Restores counts the calls of Restore.
	Restores atomic.Int64
}

// Apply adds the entry's 8 bytes to the sum.
func (c *Counter) Apply(l *raft.Log) any {
	if len(l.Data) != 8 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sum += binary.BigEndian.Uint64(l.Data)
	return c.sum
}

// Sum returns the sum so far.
func (c *Counter) Sum() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sum
}

// Snapshot captures the sum.
func (c *Counter) Snapshot() (raft.FSMSnapshot, error) {
	return &counterSnapshot{sum: c.Sum(), persisting: c.Persisting}, nil
}

// Restore replaces the sum with the snapshot's.
func (c *Counter) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	c.Restores.Add(1)
	if c.Restoring != nil {
		c.Restoring()
	}
	var b [8]byte
	if _, err := io.ReadFull(rc, b[:]); err != nil {
		return fmt.Errorf("restore counter: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sum = binary.BigEndian.Uint64(b[:])
	return nil
}

type counterSnapshot struct {
	sum        uint64
	persisting func()
}

func (s *counterSnapshot) Persist(sink raft.SnapshotSink) error {
	if s.persisting != nil {
		s.persisting()
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], s.sum)
	if _, err := sink.Write(b[:]); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *counterSnapshot) Release() {}

// Node is one member of a Cluster.
type Node struct {
	ID    raft.ServerID
	Raft  *raft.Raft
	FSM   *Counter
	Trans *raft.InmemTransport
	// Out is what the member sends through: its transport, which can hold
	// one InstallSnapshot to a peer back (HoldSnapshotTo), as a slow link
	// would.
	Out *HoldingTransport
	// Said is closed the first time the member logs a line containing
	// the text WatchFor was given (nil when none was).
	Said chan struct{}
}

// Cluster is three hashicorp/raft members over raft's in-memory transport,
// with in-memory log and stable stores and a file snapshot store each (as
// a real deployment's), and raft's default timers.
type Cluster struct {
	Nodes []*Node
}

// Options tune a Cluster.
type Options struct {
	// Watch is a log text each member's Said channel waits for ("" for
	// none).
	Watch string
	// TrailingLogs is how many log entries a snapshot leaves behind (0:
	// raft's default, 10240).
	TrailingLogs uint64
}

// NewCluster starts three members under dir and bootstraps them.
func NewCluster(dir string, o Options) (*Cluster, error) {
	watch := o.Watch
	c := &Cluster{}
	var servers []raft.Server
	for i := 1; i <= 3; i++ {
		id := raft.ServerID(fmt.Sprintf("n%d", i))
		addr, trans := raft.NewInmemTransport(raft.ServerAddress(id))
		servers = append(servers, raft.Server{ID: id, Address: addr})
		c.Nodes = append(c.Nodes, &Node{ID: id, FSM: &Counter{}, Trans: trans, Out: &HoldingTransport{InmemTransport: trans}})
	}
	for _, a := range c.Nodes {
		for _, b := range c.Nodes {
			if a != b {
				a.Trans.Connect(b.Trans.LocalAddr(), b.Trans)
			}
		}
	}
	for _, n := range c.Nodes {
		conf := raft.DefaultConfig()
		conf.LocalID = n.ID
		// raft's default timers (1 s heartbeat and election timeouts, a
		// 500 ms leader lease), as Consul and Vault ship them, and as
		// gofault's raft profile runs.
		conf.SnapshotThreshold = 1 << 20 // no snapshot of raft's own: only the test's
		conf.SnapshotInterval = time.Hour
		if o.TrailingLogs > 0 {
			conf.TrailingLogs = o.TrailingLogs
		}
		var out io.Writer = io.Discard
		if watch != "" {
			n.Said = make(chan struct{})
			out = &watcher{text: watch, said: n.Said}
		}
		conf.Logger = hclog.New(&hclog.LoggerOptions{Name: string(n.ID), Level: hclog.Info, Output: out})
		snaps, err := raft.NewFileSnapshotStoreWithLogger(fmt.Sprintf("%s/%s", dir, n.ID), 2, conf.Logger)
		if err != nil {
			return nil, err
		}
		store := raft.NewInmemStore()
		if err := raft.BootstrapCluster(conf, store, store, snaps, n.Out, raft.Configuration{Servers: servers}); err != nil {
			return nil, fmt.Errorf("bootstrap %s: %w", n.ID, err)
		}
		r, err := raft.NewRaft(conf, n.FSM, store, store, snaps, n.Out)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", n.ID, err)
		}
		n.Raft = r
	}
	return c, nil
}

// Leader waits up to d for a member to lead and returns it.
func (c *Cluster) Leader(d time.Duration) (*Node, error) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		for _, n := range c.Nodes {
			if n.Raft.State() == raft.Leader {
				return n, nil
			}
		}
	}
	return nil, fmt.Errorf("no leader within %s", d)
}

// Followers returns the members other than leader.
func (c *Cluster) Followers(leader *Node) []*Node {
	var out []*Node
	for _, n := range c.Nodes {
		if n != leader {
			out = append(out, n)
		}
	}
	return out
}

// Shutdown stops every member.
func (c *Cluster) Shutdown() {
	for _, n := range c.Nodes {
		if n.Raft != nil {
			n.Raft.Shutdown().Error()
		}
	}
}

// Add applies an entry that adds v to the sum, waiting up to d.
func Add(r *raft.Raft, v uint64, d time.Duration) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return r.Apply(b[:], d).Error()
}

// HoldingTransport is a member's in-memory transport that can hold back
// the next InstallSnapshot it sends to one peer until Release, as a slow
// or congested link would; every other call goes through at once.
type HoldingTransport struct {
	*raft.InmemTransport

	mu      sync.Mutex
	target  raft.ServerAddress
	held    chan struct{}
	release chan struct{}
}

// HoldSnapshotTo arms the transport: the next InstallSnapshot to target
// waits until Release. The channel returned is closed once it waits.
func (t *HoldingTransport) HoldSnapshotTo(target raft.ServerAddress) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.target, t.held, t.release = target, make(chan struct{}), make(chan struct{})
	return t.held
}

// Release lets the held InstallSnapshot go on.
func (t *HoldingTransport) Release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.release != nil {
		close(t.release)
		t.release = nil
	}
}

// InstallSnapshot sends a snapshot, waiting first if the transport was
// armed for target.
func (t *HoldingTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	t.mu.Lock()
	var wait chan struct{}
	if t.target != "" && target == t.target {
		t.target, wait = "", t.release
		close(t.held)
	}
	t.mu.Unlock()
	if wait != nil {
		<-wait
	}
	return t.InmemTransport.InstallSnapshot(id, target, args, resp, data)
}

// watcher closes said once a written log line contains text.
type watcher struct {
	text string
	said chan struct{}
	once sync.Once
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (w *watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	hit := strings.Contains(w.buf.String(), w.text)
	if w.buf.Len() > 1<<16 {
		w.buf.Reset()
	}
	w.mu.Unlock()
	if hit {
		w.once.Do(func() { close(w.said) })
	}
	return len(p), nil
}
