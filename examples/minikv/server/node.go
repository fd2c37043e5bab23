// Package server is minikv's replica: a key-value store replicated from a
// static leader to its followers over HTTP, with a write-ahead log and
// periodic snapshots on disk, heartbeats and a leader watchdog, and
// linearizable reads through a read index. It carries planted bugs (see
// bugs.go), each off by default and reachable only through a fault.
package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofault/gofault/examples/minikv/transport"
)

// Config configures a node.
type Config struct {
	Name    string
	DataDir string
	// Peers maps every node's name (this one included) to its host:port.
	Peers  map[string]string
	Leader string // the static leader's name
	Bugs   Bugs
	Log    *slog.Logger

	SnapEvery        uint64        // applied entries between snapshots
	CompactKeep      uint64        // entries a snapshot leaves in memory for slow followers
	SegmentBytes     int64         // WAL segment size before rotation
	HeartbeatEvery   time.Duration // leader → follower heartbeats, watchdog ticks
	LeaderTimeout    time.Duration // a follower declares the leader lost after this silence
	ReplicateTimeout time.Duration // bound on one append/heartbeat RPC
	ForwardTimeout   time.Duration // a follower retries a forwarded write after this
	// LogReads makes the leader read the entries it replicates back
	// from its log on disk, checking each record's CRC-32, rather than
	// send the copies it holds in memory (BugUnchecked).
	LogReads bool
	// LeaseReads is the length of the read lease the leader grants, in
	// each message, a follower that stored every committed entry; a
	// follower that holds one serves a read from its own state once it
	// applied what it stored, without asking the leader for a read
	// index, and the leader commits no entry that such a follower lacks
	// until its lease ran out. 0: no leases (every follower read asks
	// the leader). Leases are wall-clock times, so the members' clocks
	// must agree (they share one host in gofault's trials).
	LeaseReads time.Duration
}

// Defaults fills unset fields.
func (c *Config) Defaults() {
	if c.SnapEvery == 0 {
		c.SnapEvery = 120
	}
	if c.CompactKeep == 0 {
		c.CompactKeep = 64
	}
	if c.SegmentBytes == 0 {
		c.SegmentBytes = 6 << 10
	}
	if c.HeartbeatEvery == 0 {
		c.HeartbeatEvery = 50 * time.Millisecond
	}
	if c.LeaderTimeout == 0 {
		c.LeaderTimeout = 1500 * time.Millisecond
	}
	if c.ReplicateTimeout == 0 {
		c.ReplicateTimeout = 300 * time.Millisecond
	}
	if c.ForwardTimeout == 0 {
		c.ForwardTimeout = 500 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

type role int

const (
	roleFollower role = iota
	roleLeader
)

func (r role) String() string {
	if r == roleLeader {
		return "leader"
	}
	return "follower"
}

// result is the outcome of a proposed entry.
type result struct {
	val string
	err error
}

type proposal struct {
	e Entry
}

// appendReq hands the run loop a message that changes the log (MsgApp with
// entries, MsgSnap).
type appendReq struct {
	msg   transport.Message
	reply chan transport.Message
}

// peer is the leader's view of a follower.
type peer struct {
	name   string
	id     uint64
	next   uint64 // next index to send
	match  uint64 // highest index known stored
	notify chan struct{}
	// leaseUntil is the end of the latest read lease granted to the
	// follower (Unix nanoseconds, Config.LeaseReads); answered is
	// whether it answered the last message sent to it: one that did not
	// gets no lease, so that a silent follower's lease runs out.
	leaseUntil int64
	answered   bool
	// epoch is the follower process's epoch in its last answer: a new
	// one means it restarted, and the leader replaces its stream.
	epoch int64
	// streams counts the running replication streams (replicate
	// goroutines) to this follower: one, but for the moment a stream
	// hands over to its successor.
	streams atomic.Int32
}

// Node is one minikv replica.
type Node struct {
	cfg   Config
	log   *slog.Logger
	bugs  Bugs
	tr    *transport.Transport
	id    uint64            // this member's ID in messages
	ids   map[string]uint64 // member name → ID
	epoch int64             // this process's leader epoch

	proposals chan proposal
	appends   chan appendReq
	kick      chan struct{}
	stop      chan struct{}
	wg        sync.WaitGroup
	// leakChecked is when the leader last counted its replication
	// streams; owned by the watchdog.
	leakChecked time.Time

	// wal is owned by the run loop.
	wal *wal

	mu           sync.Mutex
	role         role
	entries      []Entry // entries[i-offset-1] has index i
	offset       uint64  // the index before entries[0]: compacted away
	commit       uint64
	applied      uint64
	recovered    uint64 // last index recovered at start: reads wait for it
	snapIndex    uint64
	snapshotting bool
	data         map[string]string
	done         map[string]string // request ID → result
	waiters      map[string][]chan result
	appliedC     chan struct{} // closed when applied advances
	peers        []*peer
	lastHeard    time.Time
	leaderLost   bool
	// resync is set at a restart with recovered state and when the
	// leader is lost: the next snapshot install replaces the whole
	// replicated state.
	resync bool
	// rejoin is the epoch of the leader process this member followed
	// before its restart (its snapshot's), until its next install; 0
	// when it started without state of its own.
	rejoin      int64
	leaderEpoch int64 // epoch of the leader last heard
	fenced      int64 // a leader epoch declared dead
	seq         uint64
	// leaseUntil is the end of the read lease the leader granted this
	// follower (Unix nanoseconds, Config.LeaseReads); leaseTicks is
	// what is left of it in watchdog ticks (BugTickLease).
	leaseUntil int64
	leaseTicks int
	// leaseCommit is the leader's commit index when it granted the
	// lease: what it committed before it waited for this follower.
	leaseCommit uint64
}

// Open recovers a node from its data dir.
func Open(cfg Config) (*Node, error) {
	cfg.Defaults()
	if _, ok := cfg.Peers[cfg.Name]; !ok {
		return nil, fmt.Errorf("node %q is not in the peer list", cfg.Name)
	}
	if _, ok := cfg.Peers[cfg.Leader]; !ok {
		return nil, fmt.Errorf("leader %q is not in the peer list", cfg.Leader)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	snap, err := loadSnapshot(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	interrupted, err := beginRecovery(cfg.DataDir, cfg.Bugs)
	if err != nil {
		return nil, fmt.Errorf("recovery marker: %w", err)
	}
	w, entries, atRest, err := openWAL(cfg.DataDir, cfg.Bugs.trustAtRest)
	if err != nil {
		return nil, err
	}
	switch {
	case atRest != nil && cfg.Name == cfg.Leader:
		// Nobody holds the rest for the static leader to get back.
		return nil, fmt.Errorf("log corrupt on disk, refusing to start: %w", atRest)
	case atRest != nil:
		cfg.Log.Warn("log corrupt on disk: replay stopped before the entry whose checksum does not match; the rest comes from the leader", "err", atRest)
	}
	w.lazy = cfg.Bugs.lazySync
	if interrupted {
		entries = distrustLog(entries, snap.Index)
	}
	// The snapshot covers the log up to its index: the log goes on after
	// it (a follower that installed a leader's snapshot has a gap before).
	entries = slices.DeleteFunc(entries, func(e Entry) bool { return e.Index <= snap.Index })
	if err := endRecovery(cfg.DataDir, cfg.Bugs); err != nil {
		return nil, fmt.Errorf("recovery marker: %w", err)
	}
	n := &Node{
		cfg:       cfg,
		log:       cfg.Log,
		bugs:      cfg.Bugs,
		epoch:     time.Now().UnixNano(),
		proposals: make(chan proposal, 256),
		appends:   make(chan appendReq),
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		wal:       w,
		entries:   entries,
		offset:    snap.Index,
		data:      snap.Data,
		done:      snap.Done,
		waiters:   map[string][]chan result{},
		appliedC:  make(chan struct{}),
		snapIndex: snap.Index,
		applied:   snap.Index,
		commit:    snap.Index,
		lastHeard: time.Now(),
		// A member restarted with state of its own does not trust it
		// to match the leader's snapshot.
		resync: snap.Index > 0 || len(entries) > 0,
		rejoin: snap.Leader,
	}
	n.recovered = n.lastIndex()
	// Member IDs: 1, 2, ... in the order of the names.
	n.ids = map[string]uint64{}
	addrs := map[uint64]string{}
	for i, name := range slices.Sorted(maps.Keys(cfg.Peers)) {
		n.ids[name] = uint64(i + 1)
		addrs[uint64(i+1)] = cfg.Peers[name]
	}
	n.id = n.ids[cfg.Name]
	n.tr = transport.New(n.id, addrs, n)
	if cfg.Name == cfg.Leader {
		n.role = roleLeader
		for name := range cfg.Peers {
			if name != cfg.Name {
				n.peers = append(n.peers, &peer{name: name, id: n.ids[name], next: n.lastIndex() + 1, notify: make(chan struct{}, 1)})
			}
		}
		n.advanceCommit() // alone, the recovered log is committed
	}
	return n, nil
}

// Start starts the node's loops.
func (n *Node) Start() {
	n.wg.Add(2)
	go n.run()
	go n.watchdog()
	for _, p := range n.peers {
		n.startStream(p)
	}
}

// startStream starts a replication stream to follower p.
func (n *Node) startStream(p *peer) {
	n.wg.Add(1)
	p.streams.Add(1)
	go n.replicate(p)
}

// Close stops the loops and closes the log.
func (n *Node) Close() error {
	close(n.stop)
	n.wg.Wait()
	return n.wal.f.Close()
}

func (n *Node) lastIndex() uint64 { return n.offset + uint64(len(n.entries)) }

// entry returns the entry at index i (offset < i <= lastIndex). n.mu is
// held, or the run loop is the caller.
func (n *Node) entry(i uint64) Entry { return n.entries[i-n.offset-1] }

// run is the node's main loop: it appends proposals (leader) and replicated
// entries (follower) to the log, applies committed entries, rotates the log
// and takes snapshots.
func (n *Node) run() {
	defer n.wg.Done()
	tick := time.NewTicker(n.cfg.HeartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case p := <-n.proposals:
			n.appendProposals(p)
		case a := <-n.appends:
			if a.msg.Type == transport.MsgSnap {
				a.reply <- n.installSnapshot(a.msg)
			} else {
				a.reply <- n.appendFromLeader(a.msg)
			}
		case <-n.kick:
		case <-tick.C:
			n.commitAfterLeases()
		}
		if !n.snapshotting {
			n.applyCommitted()
		}
		if n.wal.size >= n.cfg.SegmentBytes {
			n.rotateWAL()
		}
		if n.applied-n.snapIndex >= n.cfg.SnapEvery && !n.snapshotting {
			n.snapshot()
		}
	}
}

// appendProposals logs a batch of proposals and hands them to the
// replicators.
func (n *Node) appendProposals(first proposal) {
	batch := []proposal{first}
	for len(batch) < 64 {
		select {
		case p := <-n.proposals:
			batch = append(batch, p)
			continue
		default:
		}
		break
	}
	n.mu.Lock()
	next := n.lastIndex() + 1
	n.mu.Unlock()
	entries := make([]Entry, len(batch))
	for i, p := range batch {
		entries[i] = p.e
		entries[i].Index = next + uint64(i)
	}
	if err := n.wal.append(entries); err != nil {
		n.log.Warn("log append failed, proposals rejected", "first", next, "count", len(entries), "err", err)
		n.mu.Lock()
		for _, e := range entries {
			n.notify(e.ID, result{err: fmt.Errorf("log append: %w", err)})
		}
		n.mu.Unlock()
		return
	}
	n.mu.Lock()
	n.entries = append(n.entries, entries...)
	n.advanceCommit() // a leader without followers commits alone
	n.mu.Unlock()
	for _, p := range n.peers {
		select {
		case p.notify <- struct{}{}:
		default:
		}
	}
}

// appendFromLeader stores replicated entries on a follower.
func (n *Node) appendFromLeader(m transport.Message) transport.Message {
	n.mu.Lock()
	last := n.lastIndex()
	n.mu.Unlock()
	var entries, fresh []Entry
	if err := json.Unmarshal(m.Payload, &entries); err != nil {
		n.log.Warn("bad entries", "err", err)
		return transport.Message{Reject: true, Index: last}
	}
	for _, e := range entries {
		if e.Index > last { // a resend of stored entries is dropped
			fresh = append(fresh, e)
		}
	}
	if len(fresh) > 0 && fresh[0].Index != last+1 {
		return transport.Message{Reject: true, Index: last}
	}
	if len(fresh) > 0 {
		if err := n.wal.append(fresh); err != nil {
			n.log.Warn("log append failed, entries rejected", "first", fresh[0].Index, "err", err)
			return transport.Message{Reject: true, Index: last}
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.entries = append(n.entries, fresh...)
	n.learnCommit(m.Commit)
	return transport.Message{Index: n.lastIndex()}
}

// learnCommit raises the commit index to what the leader committed, as far
// as the local log reaches. n.mu is held.
func (n *Node) learnCommit(c uint64) {
	c = min(c, n.lastIndex())
	if c > n.commit {
		n.commit = c
		n.poke()
	}
}

func (n *Node) poke() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// applyCommitted applies committed entries to the store.
func (n *Node) applyCommitted() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.applied >= n.commit {
		return
	}
	for n.applied < n.commit {
		e := n.entry(n.applied + 1)
		n.applied++
		res, ok := n.done[e.ID]
		if !ok {
			res = n.apply(e)
			n.done[e.ID] = res
		}
		n.notify(e.ID, result{val: res})
	}
	close(n.appliedC)
	n.appliedC = make(chan struct{})
}

// apply executes one entry on the store. n.mu is held.
func (n *Node) apply(e Entry) string {
	switch e.Op {
	case "put":
		n.data[e.Key] = e.Value
	case "delete":
		delete(n.data, e.Key)
	case "cas":
		if n.data[e.Key] != e.Expect {
			return "false"
		}
		n.data[e.Key] = e.Value
		return "true"
	}
	return ""
}

// notify answers the waiters of request id. n.mu is held.
func (n *Node) notify(id string, r result) {
	for _, ch := range n.waiters[id] {
		ch <- r
	}
	delete(n.waiters, id)
}

// rotateWAL starts a new log segment once the current one is full.
func (n *Node) rotateWAL() {
	w := n.wal
	old, seq := w.f, w.seq+1
	closeOld := func() {
		if err := old.Close(); err != nil {
			n.log.Warn("closing wal segment failed", "segment", w.seq, "err", err)
		}
	}
	if n.bugs.rotateCloseFirst {
		// The old segment is closed and counted as rotated before its
		// successor exists.
		closeOld()
		w.seq, w.size = seq, 0
	}
	f, size, err := createSegment(w.dir, seq)
	if err != nil {
		// The old segment stays in use; rotation is retried next round.
		n.log.Warn("wal rotation failed", "segment", seq, "err", err)
		return
	}
	if !n.bugs.rotateCloseFirst {
		closeOld()
	}
	w.f, w.seq, w.size = f, seq, size
}

// snapshot writes the applied state to disk. It holds n.mu for the whole
// write, so the state cannot change under it.
func (n *Node) snapshot() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.snapshotting = true
	snap := snapshotFile{Index: n.applied, Data: n.data, Done: n.done, Leader: n.leaderEpoch}
	if n.bugs.splitSnapshot {
		// The request table goes to a file of its own, written after
		// the data: two atomic replacements, not one.
		snap.Done = nil
	}
	b, err := json.Marshal(snap)
	if err != nil {
		n.log.Error("encode snapshot", "err", err)
		n.snapshotting = false
		return
	}
	err = n.writeSnapshot(snapshotName, b)
	if err == nil && n.bugs.splitSnapshot {
		if b, err = json.Marshal(requestsFile{Done: n.done}); err == nil {
			err = n.writeSnapshot(requestsName, b)
		}
	}
	if err != nil {
		n.log.Warn("snapshot failed", "index", snap.Index, "err", err)
		if !n.bugs.snapshotStuck {
			n.snapshotting = false
		}
		return
	}
	n.snapIndex = snap.Index
	n.snapshotting = false
	n.compact()
	n.log.Info("snapshot taken", "index", snap.Index)
}

// compact drops the entries the snapshot covers from memory, but for the
// last CompactKeep, which a slow follower may still need; one further
// behind gets the snapshot (MsgSnap). The log on disk is kept. n.mu is
// held.
func (n *Node) compact() {
	if n.snapIndex <= n.offset+n.cfg.CompactKeep {
		return
	}
	to := n.snapIndex - n.cfg.CompactKeep
	n.entries = slices.Clone(n.entries[to-n.offset:])
	n.offset = to
}

// writeSnapshot replaces the snapshot file name with b, atomically.
func (n *Node) writeSnapshot(name string, b []byte) error {
	tmp := filepath.Join(n.cfg.DataDir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("create snapshot: %w", err)
	}
	if err := writeRecord(f, b); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("close snapshot: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(n.cfg.DataDir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("install snapshot: %w", err)
	}
	return nil
}

// replicate is the replication stream to one follower: it sends the
// follower its missing entries and heartbeats, or the snapshot when the
// entries it misses were compacted away. When the follower answers from a
// new process (it restarted), the stream hands over to a fresh one, which
// starts with a new ticker and no pending notification of the old
// process's session, and ends.
func (n *Node) replicate(p *peer) {
	defer n.wg.Done()
	defer p.streams.Add(-1)
	tick := time.NewTicker(n.cfg.HeartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-p.notify:
		case <-tick.C:
		}
		msg, err := n.nextMessage(p)
		if err != nil {
			n.log.Error("message to follower", "peer", p.name, "err", err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ReplicateTimeout)
		resps, err := n.tr.Send(ctx, []transport.Message{msg})
		cancel()
		if err != nil {
			n.log.Debug("message to follower failed", "peer", p.name, "type", msg.Type, "err", err)
			n.mu.Lock()
			p.answered = false
			n.mu.Unlock()
			continue
		}
		resp := resps[0]
		n.mu.Lock()
		p.answered = true
		if !resp.Reject {
			p.match = max(p.match, resp.Index)
			n.advanceCommit()
		}
		p.next = resp.Index + 1
		more := p.next <= n.lastIndex()
		restarted := p.epoch != 0 && resp.Epoch != 0 && resp.Epoch != p.epoch
		if resp.Epoch != 0 {
			p.epoch = resp.Epoch
		}
		n.mu.Unlock()
		if restarted {
			n.log.Info("follower restarted, new replication stream", "peer", p.name)
			n.startStream(p)
			if !n.bugs.streamLeak {
				return
			}
			// The old stream goes on beside its successor: both
			// send the follower every entry and heartbeat, and the
			// follower drops the second copy as a resend.
		}
		if more {
			select {
			case p.notify <- struct{}{}:
			default:
			}
		}
	}
}

// nextMessage is what the leader sends follower p next: the entries it
// misses (a heartbeat when none), or the leader's state when they were
// compacted away.
func (n *Node) nextMessage(p *peer) (transport.Message, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	last := n.lastIndex()
	if p.next > last+1 {
		p.next = last + 1
	}
	msg := transport.Message{Type: transport.MsgApp, To: p.id, Epoch: n.epoch, Commit: n.commit, Index: last}
	n.grantLease(p, &msg)
	if p.next <= n.offset {
		b, err := json.Marshal(snapshotFile{Index: n.applied, Data: n.data, Done: n.done})
		msg.Type, msg.Index, msg.Payload = transport.MsgSnap, n.applied, b
		return msg, err
	}
	if p.next > last {
		return msg, nil // a heartbeat
	}
	end := min(last, p.next+63)
	es := n.entries[p.next-n.offset-1 : end-n.offset]
	if n.cfg.LogReads {
		switch got, err := n.wal.readEntries(p.next, end, n.bugs.trustBlock); {
		case err != nil:
			n.log.Error("log read failed, sending the entries held in memory", "first", p.next, "last", end, "err", err)
		case got != nil:
			es = got
		}
	}
	b, err := json.Marshal(es)
	msg.Index, msg.Payload = end, b
	return msg, err
}

// advanceCommit commits the highest index stored on a majority. n.mu is
// held.
func (n *Node) advanceCommit() {
	for c := n.lastIndex(); c > n.commit; c-- {
		votes := 1
		for _, p := range n.peers {
			if p.match >= c {
				votes++
			}
		}
		if n.committed(votes) && n.leasesAllow(c) {
			n.commit = c
			n.poke()
			return
		}
	}
}

// committed reports whether an entry stored on votes members (the leader
// included) is committed: on a majority of the members.
func (n *Node) committed(votes int) bool {
	if n.bugs.waitAll {
		// Synchronous replication: an entry counts as committed only
		// once every member stored it, so the slowest follower sets
		// the pace of every write.
		return votes == len(n.peers)+1
	}
	return votes*2 > len(n.peers)+1
}

// leasesAllow reports whether index c may be committed as far as the read
// leases go: every follower that holds a lease stored it. n.mu is held.
func (n *Node) leasesAllow(c uint64) bool {
	now := time.Now().UnixNano()
	for _, p := range n.peers {
		if p.leaseUntil > now && p.match < c {
			return false
		}
	}
	return true
}

// commitAfterLeases commits, on a leader with read leases, what waited
// only for a lease that has since run out.
func (n *Node) commitAfterLeases() {
	if n.cfg.LeaseReads == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.role == roleLeader {
		n.advanceCommit()
	}
}

// grantLease adds a read lease to msg, the leader's next message to
// follower p, when p answered the last one. n.mu is held.
func (n *Node) grantLease(p *peer, msg *transport.Message) {
	if n.cfg.LeaseReads == 0 || !p.answered {
		return
	}
	msg.Lease = time.Now().Add(n.cfg.LeaseReads).UnixNano()
	p.leaseUntil = max(p.leaseUntil, msg.Lease)
}

// takeLease records a read lease from the leader on a follower, granted
// with the leader's commit index commit: a read under it waits until that
// is applied. n.mu is held.
func (n *Node) takeLease(lease int64, commit uint64) {
	if lease <= n.leaseUntil || lease <= time.Now().UnixNano() {
		return // older than the lease held, or over
	}
	n.leaseUntil, n.leaseCommit = lease, commit
	if n.bugs.tickLease {
		// The lease's length in watchdog ticks, less one for the tick
		// under way, counted from now.
		n.leaseTicks = int(n.cfg.LeaseReads/n.cfg.HeartbeatEvery) - 1
	}
}

// leaseHeld reports whether this follower holds a read lease. n.mu is
// held.
func (n *Node) leaseHeld() bool {
	if n.cfg.LeaseReads == 0 {
		return false
	}
	if n.bugs.tickLease {
		// The lease is counted down by the watchdog's ticks, not read
		// off the clock.
		return n.leaseTicks > 0
	}
	return time.Now().UnixNano() < n.leaseUntil
}

// watchdog declares the leader lost on a follower that has not heard from
// it for LeaderTimeout.
func (n *Node) watchdog() {
	defer n.wg.Done()
	tick := time.NewTicker(n.cfg.HeartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		n.checkStreams()
		n.mu.Lock()
		if n.leaseTicks > 0 {
			n.leaseTicks--
		}
		if n.role == roleFollower && !n.leaderLost && time.Since(n.lastHeard) > n.cfg.LeaderTimeout {
			n.leaderLost = true
			n.resync = true
			n.fenced = n.leaderEpoch
			n.log.Warn("leader lost", "leader", n.cfg.Leader, "silent", time.Since(n.lastHeard).Round(time.Millisecond))
		}
		n.mu.Unlock()
	}
}

// streamCheckEvery is how often the leader counts its replication streams.
const streamCheckEvery = time.Second

// checkStreams reports, at most every streamCheckEvery, each follower that
// more than one replication stream serves: a leaked goroutine that
// duplicates every message to it. Only the watchdog calls it.
func (n *Node) checkStreams() {
	if len(n.peers) == 0 || time.Since(n.leakChecked) < streamCheckEvery {
		return
	}
	n.leakChecked = time.Now()
	for _, p := range n.peers {
		if k := p.streams.Load(); k > 1 {
			n.log.Error("more than one replication stream to a peer: a stream leaked", "peer", p.name, "streams", k)
		}
	}
}

// heard records a message from the leader; it reports false when the
// leader's epoch is fenced. n.mu is held.
func (n *Node) heard(epoch int64) bool {
	if n.bugs.stickyFence && n.leaderLost && epoch == n.fenced {
		// The leader was declared dead: only a new epoch is followed.
		return false
	}
	n.lastHeard = time.Now()
	n.leaderEpoch = epoch
	if n.leaderLost {
		n.leaderLost = false
		n.log.Info("leader back", "leader", n.cfg.Leader)
	}
	return true
}

// errNoLeader is returned by a follower that lost its leader.
var errNoLeader = errors.New("no leader")

// readIndex returns the index a linearizable read must wait for.
func (n *Node) readIndex(ctx context.Context) (uint64, error) {
	n.mu.Lock()
	if n.role == roleLeader {
		idx := max(n.commit, n.recovered)
		n.mu.Unlock()
		return idx, nil
	}
	lost, leased, last := n.leaderLost, n.leaseHeld(), max(n.lastIndex(), n.leaseCommit)
	n.mu.Unlock()
	if lost {
		return 0, errNoLeader
	}
	if leased {
		// What the leader committed before the lease, and every entry
		// it committed since, stored here: wait until that is applied.
		return last, nil
	}
	idx, err := n.askReadIndex(ctx)
	if err != nil {
		return 0, err
	}
	n.mu.Lock()
	n.learnCommit(idx)
	n.mu.Unlock()
	return idx, nil
}

// waitApplied waits until the store has applied index idx.
func (n *Node) waitApplied(ctx context.Context, idx uint64) error {
	for {
		n.mu.Lock()
		if n.applied >= idx {
			n.mu.Unlock()
			return nil
		}
		ch := n.appliedC
		n.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait for index %d: %w", idx, ctx.Err())
		}
	}
}

// Get reads key linearizably; ok is false when it is absent.
func (n *Node) Get(ctx context.Context, key string) (string, bool, error) {
	idx, err := n.readIndex(ctx)
	if err != nil {
		return "", false, err
	}
	if err := n.waitApplied(ctx, idx); err != nil {
		return "", false, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	v, ok := n.data[key]
	return v, ok, nil
}

// Write proposes a write (put, delete or cas) and returns its result
// ("true"/"false" for a cas).
func (n *Node) Write(ctx context.Context, e Entry) (string, error) {
	if e.ID == "" {
		return "", errors.New("write without a request ID")
	}
	n.mu.Lock()
	leader := n.role == roleLeader
	lost := n.leaderLost
	n.mu.Unlock()
	if leader {
		return n.propose(ctx, e)
	}
	if lost {
		return "", errNoLeader
	}
	return n.forward(ctx, e)
}

// propose appends e on the leader and waits until it is applied. A request
// ID seen before is not proposed again.
func (n *Node) propose(ctx context.Context, e Entry) (string, error) {
	ch := make(chan result, 1)
	n.mu.Lock()
	if r, ok := n.done[e.ID]; ok {
		n.mu.Unlock()
		return r, nil
	}
	inFlight := len(n.waiters[e.ID]) > 0
	n.waiters[e.ID] = append(n.waiters[e.ID], ch)
	n.mu.Unlock()
	if !inFlight {
		select {
		case n.proposals <- proposal{e: e}:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	select {
	case r := <-ch:
		return r.val, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// forward sends a write to the leader. An attempt that takes longer than
// ForwardTimeout is retried (the leader may be busy); the first answer
// wins.
func (n *Node) forward(ctx context.Context, e Entry) (string, error) {
	results := make(chan result, 3)
	pending := 0
	for attempt := 1; ; attempt++ {
		if attempt <= 3 {
			a := e
			if n.bugs.retryNewID {
				n.mu.Lock()
				n.seq++
				a.ID = fmt.Sprintf("%s/fwd-%d", n.cfg.Name, n.seq)
				n.mu.Unlock()
			}
			pending++
			go func() {
				v, err := n.sendPropose(ctx, a)
				results <- result{val: v, err: err}
			}()
		}
		select {
		case r := <-results:
			pending--
			if r.err == nil || pending == 0 {
				return r.val, r.err
			}
		case <-time.After(n.cfg.ForwardTimeout):
			n.log.Debug("forwarded write slow, retrying", "id", e.ID, "attempt", attempt)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// Status is a node's self-report.
type Status struct {
	Name         string `json:"name"`
	Role         string `json:"role"`
	Leader       string `json:"leader,omitempty"`
	Healthy      bool   `json:"healthy"`
	Commit       uint64 `json:"commit"`
	Applied      uint64 `json:"applied"`
	SnapIndex    uint64 `json:"snap_index"`
	Snapshotting bool   `json:"snapshotting"`
	// Digest is a hash of the replicated state as of Applied, for
	// comparing replicas: the data's sorted key=value pairs and the
	// request table's sorted ID=result pairs (what a snapshot holds
	// besides its index).
	Digest string `json:"digest"`
}

// Status reports the node's state.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := Status{
		Name: n.cfg.Name, Role: n.role.String(), Healthy: !n.leaderLost,
		Commit: n.commit, Applied: n.applied, SnapIndex: n.snapIndex, Snapshotting: n.snapshotting,
		Digest: digest(n.data, n.done),
	}
	if !n.leaderLost {
		s.Leader = n.cfg.Leader
	}
	return s
}

// digest hashes data's sorted key=value pairs, then the request table's
// sorted ID=result pairs.
func digest(data, done map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		fmt.Fprintf(h, "%q=%q\n", k, data[k])
	}
	fmt.Fprintf(h, "requests\n")
	for _, id := range slices.Sorted(maps.Keys(done)) {
		fmt.Fprintf(h, "%q=%q\n", id, done[id])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
