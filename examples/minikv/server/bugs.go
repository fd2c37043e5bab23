package server

import (
	"fmt"
	"slices"
	"strings"
)

// The planted bugs. Each is off by default and only reachable through a
// fault: a fault-free run with all of them on behaves correctly.
const (
	// BugSnapshot (Legolas rare-state error, after the ZooKeeper
	// SyncRequestProcessor snapshot of Legolas §4.1/Figure 5: the same
	// write path serves the log and the snapshot): a write error while
	// snapshotting returns without clearing n.snapshotting, so the node
	// stops applying committed entries and its clients hang. The same
	// error on a log append is handled (the append is cut back and
	// rejected).
	BugSnapshot = "snapshot"
	// BugRotate (Legolas rare-state error, after HDFS-15869's edit-log
	// roll: a log roll that fails leaves the log unusable): WAL segment
	// rotation closes the old segment before the new one exists; when
	// creating the new one fails, the node keeps the closed file and every
	// later append fails.
	BugRotate = "rotate"
	// BugFence (Sieve indefinite blocking, after HDFS-5341: a scan doing
	// slow disk I/O under the dataset lock blocks the heartbeat): the
	// snapshot is written while holding the node mutex; a slow write
	// delays the heartbeat handler, the leader watchdog declares the
	// leader dead and fences its epoch for good — no new leader comes, so
	// the follower never serves again. Only a delay triggers it.
	BugFence = "fence"
	// BugRetry (Sieve timeout race, after HDFS-9178/the retry patterns of
	// Sieve's Table 4: a timeout handler retries while the slow original
	// still completes): a follower forwarding a write retries after
	// ForwardTimeout under a fresh request ID, so when the slow first
	// attempt completes too, the leader applies the write twice.
	BugRetry = "retry"
	// BugSplit (crash-consistency bug, after etcd v3.5.0–3.5.2's data
	// inconsistency, etcd-io/etcd#13766 and its postmortem: state that
	// must change atomically — there the applied index and the data — was
	// persisted in two writes, and a crash between them left a restarted
	// member inconsistent with the others; the multi-file update pattern
	// that ALICE, OSDI'14, found in many storage systems): the snapshot
	// is split over two files, snapshot.json (index and data) and
	// requests.json (the request table), each replaced atomically, one
	// after the other. A crash after the first rename and before the
	// second leaves a snapshot whose data is newer than its request table;
	// the restarted member replays its log from the newer index, so the
	// request IDs of the entries between the two snapshots are gone from
	// its table for good while its data is right.
	//
	// The replicas diverge in the request table, which is replicated state
	// (every member applies the same log into it, it is in every
	// snapshot, and it decides whether a retried request is applied again:
	// the leader answers a retry from it, every member skips a logged
	// duplicate by it) but which no read returns. That is why only the
	// replicas checker sees it (minikv's status digest covers the whole
	// replicated state, data and request table): the data, hence every
	// get, every cas outcome and every client-visible result, is the same
	// on every member, so the linearizability checker has nothing to
	// see, and nothing hangs, fails or logs an error. Its harm comes
	// later: a retried request whose ID the diverged leader forgot is
	// proposed again, and a logged duplicate whose ID a diverged member
	// forgot is applied twice there while the others skip it, so the
	// data diverges too. A fault-free run, an error or a delay never
	// restarts a node, and a clean stop never interrupts a snapshot, so it
	// takes a crash (SIGKILL) in the window between the two renames (or a
	// failed request-table write followed by a crash anywhere before the
	// next snapshot).
	BugSplit = "split"
	// BugLazySync (durability bug, after the group-commit shortcuts that
	// acknowledge a write once it reached the page cache — the class of
	// bugs ALICE, OSDI'14, and LazyFS-based testing find; etcd-io/etcd#14370
	// is one in etcd's own tests): a log append is written but not synced,
	// and still acknowledged; only a new segment's header and snapshots
	// are synced. A SIGKILL keeps the page cache, so no crash, error or
	// delay loses anything; only a power loss does. The leader, restarted
	// with a log cut back to its last sync, has forgotten committed and
	// acknowledged writes: a read after the restart misses them
	// (linearizability) and the replicas diverge (replicas), as the
	// leader reuses the lost indices for new entries that the followers,
	// which stored the old ones, drop as resends.
	BugLazySync = "lazysync"
	// BugRecover (crash during recovery, the class FaultFuzz, ICSE'24,
	// targets with fault sequences, e.g. ZOOKEEPER-3911-like recovery
	// bugs): a restarted node marks its log replay with a file and, when
	// it finds the marker of an earlier replay that never finished, trusts
	// only its snapshot and drops the log entries beyond it — committed,
	// acknowledged ones included. It takes two faults: a crash, then a
	// crash of the same node during its recovery (between the marker's
	// creation and removal: the replay's file opens, the new segment's
	// write and sync). On the leader the dropped entries are lost: it
	// reuses their indices for new writes, which the followers drop as
	// resends, so the replicas diverge and reads miss acknowledged writes.
	BugRecover = "recover"
	// BugInstall (a partition bug, CoFI's class, after the snapshot
	// install bugs of Raft implementations: state kept beside the state
	// machine — client sessions, a deduplication table — not restored
	// from an installed snapshot): a follower that fell behind the
	// leader's compacted log gets the leader's snapshot (MsgSnap) and
	// installs its data and applied index but keeps its own request
	// table, which lacks the requests of every entry the snapshot stands
	// for. Only a follower cut off from the leader for longer than the
	// leader keeps entries behind its snapshots (CompactKeep) while the
	// leader snapshots gets a snapshot, so it takes a partition (or a
	// fault that keeps one follower that far behind). The data are
	// right; the replicas diverge in the request table (the replicas
	// checker), and a member that forgot a request ID would apply its
	// retry twice.
	BugInstall = "install"
	// BugCatchup (a partition bug whose window is the heal, CoFI's
	// motivating class: the partition must end after one state change and
	// before another, ASE'20 §2.1.2): a follower takes the leader's
	// snapshot (MsgSnap) in one of two ways. One that lost its leader
	// since its last install (its watchdog fired: LeaderTimeout, 1.5 s,
	// without a word from the leader) or that restarted with state of its
	// own resyncs fully: data, request table and applied index. One that
	// never noticed it fell behind, its leader's lease still good, takes
	// the snapshot as a catch-up and keeps its own request table, as the
	// install bug does always. So it takes a follower kept from its
	// entries, but not from the leader's word, while the leader compacts
	// past it (the leader then sends MsgSnap): a partition that spans the
	// compaction and heals before the follower's watchdog fires (a
	// partition too short ends before the compaction, and the follower
	// catches up from the log; one too long sets off the watchdog, and the
	// full resync is right), or a slow follower whose heartbeats still
	// pass. The replicas diverge in the request table (the replicas
	// checker).
	BugCatchup = "catchup"
	// BugWaitAll (fail-slow intolerance, Sieve's class: one slow
	// component holds back work that should route around it; after the
	// HDFS write pipeline, whose client waits for the ack of every
	// datanode, so that one fail-slow datanode stalls the write — HDFS-9178
	// in Sieve's study, and the pipeline slowdowns of Do et al.'s
	// "Limplock", SoCC'13): the leader commits an entry only once every
	// follower stored it ("synchronous replication": an acknowledged
	// write is on every member), not once a majority did. Nothing is
	// lost and nothing diverges, and with every member healthy it only
	// costs the slowest follower's latency; but one slow follower — a slow
	// log append on its disk, a slow link from the leader to it — stalls
	// every write, so the clients of the leader and of the other follower,
	// which the fault never touched, stall for as long as it lasts, where
	// the majority rule keeps them going. A crashed follower stalls the
	// writes too, until it is back. Only the slow checker sees it: the
	// stall ends with the fault, and the old hang and gray checkers
	// granted every client the injected delay on top of its bound.
	BugWaitAll = "waitall"
	// BugRestream (a goroutine leak at a peer's restart, the class of the
	// stream and goroutine leaks fixed again and again in peer transports
	// whose per-peer streams are replaced when a peer reconnects, as
	// etcd's rafthttp does): the leader replaces its replication stream to
	// a follower that answers from a new process (it restarted), and the
	// old stream, having started its successor, forgets to end. From then
	// on two goroutines replicate to that follower: every entry and
	// heartbeat goes twice, and the follower drops the second copy as a
	// resend, so nothing a client sees changes and the replicas agree.
	// The leader's stream count, checked every second, reports the leak as an
	// error on the leader for as long as the trial lasts. It takes a
	// follower killed and restarted (a fault-free run, an error, a delay,
	// a partition or a killed leader never shows a follower's new
	// process to a running leader), and the only symptom is on another
	// member than the one the fault hit, long after the fault: the log
	// checker sees it once its rules are scoped to the hit member and the
	// fault's window, where the old rules dismissed every line with a
	// connection word ("peer", "stream") on every member after any kill.
	BugRestream = "restream"
	// BugRejoin (resurrected deletes, the class of replicas that rejoin
	// by merging the state they missed into the state they kept instead of
	// replacing it — Cassandra's "zombie" rows when a replica that missed
	// a delete rejoins, ZooKeeper's learner that must clear its data tree
	// before it loads the leader's SNAP — here behind two recovery paths
	// composed wrongly): a member restarted with state of its own
	// remembers the leader process it followed before (the epoch in its
	// snapshot). A snapshot from that process replaces its state, as it
	// should; one from a leader process that restarted since, the member
	// takes for the leader's recovery from its own disk, maybe older than
	// what the member holds, so it takes from it only the keys it lacks
	// and keeps the rest of its own state: its values, the keys that the
	// snapshot lacks, its request table. The keys deleted or changed
	// while the member was down keep their old values on it until written
	// again (a read of one is not linearizable), and the request IDs of
	// the entries the snapshot stands for are missing from its table for
	// good (the replicas checker). It takes two faults on two
	// members in turn: a follower killed, then the leader killed while
	// the follower is down (or before it caught up), so that the
	// restarted leader, whose log in memory starts after its last
	// snapshot, sends the restarted follower a snapshot. One kill never
	// does it: a follower that restarted alone gets its snapshot, if any,
	// from the leader it followed before; a restarted leader sends its
	// snapshot to followers that never restarted, which replace their
	// state; two kills of one member, or of the two followers, have no
	// leader restart between a follower's restart and its install.
	BugRejoin = "rejoin"
	// BugUnchecked (a disk that lies, the class of Jepsen's NATS 2.12.1
	// analysis, 2025, whose data-loss findings came from corrupted file
	// data, and of the checksums that storage engines verify on every
	// read for that reason): with log reads on (Config.LogReads,
	// MINIKV_LOG_READS=1), the leader reads the entries it replicates
	// back from its log on disk, as hashicorp/raft's leader reads them
	// from its LogStore, and checks each record against the CRC-32 it
	// kept when it appended it; on a mismatch it says so and sends the
	// entries it holds in memory (it repairs). With the bug, it trusts
	// the record unchecked: a read that returns one flipped bit in a key
	// or a value still decodes, and the followers store and apply the
	// wrong entry, so the replicas diverge (replicas) and a follower's
	// reads return a value nobody wrote (linearizability). The disk never
	// changed — only the read lied — so no crash, error, delay or
	// partition shows it: it takes a corrupt fault at the leader's log
	// read.
	BugUnchecked = "unchecked"
	// BugSwallow (a swallowed error, the class Yuan et al., "Simple
	// Testing Can Prevent Most Critical Failures", OSDI'14, found behind
	// most catastrophic failures of distributed stores: an error handler
	// that only logs the error and goes on as if the call had succeeded):
	// a follower that forwards a write to the leader (MsgProp) and gets
	// an error back — the connection reset, the leader's answer lost or
	// refused — logs it and takes the write as delivered, so its client
	// is told the write was applied. When the leader never got it, the
	// acknowledged write is not there: the client's next read of the key,
	// or its cas from the value it wrote, shows it (linearizability); the
	// replicas agree, nothing hangs, and the only log line echoes the
	// injected error on the member it was injected into, which the log
	// checker dismisses as its expected consequence. It takes an error of
	// a forwarded write's peer call (a fault-free run gets none; a
	// client's own timeout is not swallowed).
	BugSwallow = "swallow"
	// BugTickLease (a paused member serving stale reads on a lease it
	// measures in ticks, the class of etcd-io/etcd#20418 and of every
	// lease that a process times with its own timer ticks instead of
	// the clock — a tick-driven Raft's lease-based reads, the "process
	// pause" caveat of leases, Kleppmann's "How to do distributed
	// locking"): with read leases on (Config.LeaseReads,
	// MINIKV_LEASE_READS=300ms), the leader grants each follower that
	// stored every committed entry a lease in each message, and commits
	// nothing such a follower lacks until the lease ran out; a follower
	// that holds one serves reads from its own state. With the bug, the
	// follower counts its lease down in watchdog ticks (one per
	// heartbeat interval) rather than reading it off the clock. A
	// paused process gets no ticks: on waking, Go's ticker delivers one,
	// not the dozen it missed, so the follower goes on serving reads
	// from what it held before the pause while the leader, its lease
	// long over, has committed writes without it. A read invoked after
	// the pause misses writes acknowledged during it (linearizability),
	// until the leader's catch-up reaches the follower. The read that
	// was under way when the pause struck is no violation (its interval
	// spans the pause), so the pause needs no particular site: any call
	// of the follower will do. A delay slows one goroutine and the
	// watchdog keeps ticking; a partition or a crash leaves the clock
	// and the ticks in step, or the lease gone: only a pause (SIGSTOP)
	// of a follower longer than the leader's wait for the lease shows it.
	BugTickLease = "ticklease"
	// BugAtRest (corruption at rest, the class of Jepsen's bitflip
	// nemesis and of the checksums storage engines keep beside every
	// record on disk for it): every log entry on disk carries the CRC-32
	// of its bytes, and a restart checks each entry it replays against
	// it: on a mismatch (its bytes changed on the disk) the replay stops
	// there, as at a torn tail, and the follower gets the rest from the
	// leader again. With the bug, the
	// replay trusts what decodes: a flipped bit in a key or a value makes
	// the restarted member apply a write nobody made, so the replicas
	// diverge (replicas) and its reads return it (linearizability). Only
	// a rot fault (the bytes written changed on the disk, then the
	// restart) shows it: a transient corrupt read, a torn write (an
	// undecodable tail) or a crash leaves the bytes on disk right.
	BugAtRest = "atrest"
)

// AllBugs lists every planted bug.
var AllBugs = []string{BugSnapshot, BugRotate, BugFence, BugRetry, BugSplit, BugLazySync, BugRecover, BugInstall, BugCatchup, BugWaitAll, BugRestream, BugRejoin, BugUnchecked, BugSwallow, BugTickLease, BugAtRest}

// Bugs is a set of enabled planted bugs.
type Bugs struct {
	snapshotStuck        bool
	rotateCloseFirst     bool
	stickyFence          bool
	retryNewID           bool
	splitSnapshot        bool
	lazySync             bool
	recoverReset         bool
	installKeepsRequests bool
	catchupKeepsRequests bool
	waitAll              bool
	streamLeak           bool
	rejoinMerge          bool
	trustBlock           bool
	swallowForward       bool
	tickLease            bool
	trustAtRest          bool
}

// ParseBugs parses a comma-separated list of bug names ("all" enables every
// bug, "" none).
func ParseBugs(s string) (Bugs, error) {
	var b Bugs
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		switch name {
		case "", "none":
		case "all":
			b = Bugs{true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true}
		case BugSnapshot:
			b.snapshotStuck = true
		case BugRotate:
			b.rotateCloseFirst = true
		case BugFence:
			b.stickyFence = true
		case BugRetry:
			b.retryNewID = true
		case BugSplit:
			b.splitSnapshot = true
		case BugLazySync:
			b.lazySync = true
		case BugRecover:
			b.recoverReset = true
		case BugInstall:
			b.installKeepsRequests = true
		case BugCatchup:
			b.catchupKeepsRequests = true
		case BugWaitAll:
			b.waitAll = true
		case BugRestream:
			b.streamLeak = true
		case BugRejoin:
			b.rejoinMerge = true
		case BugUnchecked:
			b.trustBlock = true
		case BugSwallow:
			b.swallowForward = true
		case BugTickLease:
			b.tickLease = true
		case BugAtRest:
			b.trustAtRest = true
		default:
			return b, fmt.Errorf("unknown bug %q (known: %s, all)", name, strings.Join(AllBugs, ", "))
		}
	}
	return b, nil
}

// Names lists the enabled bugs.
func (b Bugs) Names() []string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{b.snapshotStuck, BugSnapshot}, {b.rotateCloseFirst, BugRotate}, {b.stickyFence, BugFence}, {b.retryNewID, BugRetry}, {b.splitSnapshot, BugSplit}, {b.lazySync, BugLazySync}, {b.recoverReset, BugRecover}, {b.installKeepsRequests, BugInstall}, {b.catchupKeepsRequests, BugCatchup}, {b.waitAll, BugWaitAll}, {b.streamLeak, BugRestream}, {b.rejoinMerge, BugRejoin}, {b.trustBlock, BugUnchecked}, {b.swallowForward, BugSwallow}, {b.tickLease, BugTickLease}, {b.trustAtRest, BugAtRest}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return slices.Clip(out)
}
