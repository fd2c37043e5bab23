package agent

import (
	"sync"
	"sync/atomic"

	"github.com/gofault/gofault/agent/wire"
)

// Members of an in-process cluster (gofault test): several members of a
// distributed system run in one process, each a value of one type (the
// member type, e.g. hashicorp/raft's Raft) told apart by one of its
// fields (the member value, Raft.localID). The instrumenter puts
//
//	defer agent.MemberExit(agent.MemberEnter(string(r.localID)))
//
// at the entry of every method of the member type: while such a method
// runs, its goroutine is tagged with the member, and its requests name it
// (wire.Request.Member), so that the controller sees one node per member.
// The tag is the innermost member method on the goroutine's stack; a
// goroutine running none has none.

// noMember is what MemberEnter returns when members are not tagged:
// MemberExit then has nothing to restore.
const noMember = ^uint32(0)

// MemberEnter tags the calling goroutine with member value v, when the
// plan asks (wire.FlagMembers), and returns the rank of the member it
// was tagged with before (0 for none), for MemberExit; otherwise it costs
// an atomic load.
func MemberEnter(v string) uint32 {
	if current.Load().flags&wire.FlagMembers == 0 {
		return noMember
	}
	return enterMember(goroutine(), v, "")
}

// MemberEnterAt is MemberEnter for a member whose transport address is
// addr (gofault test's test.transport.address, e.g. hashicorp/raft's
// Raft.localAddr): the agent also learns that addr is this member's, so
// that a send of an in-process transport to addr (Send) names the member
// it goes to (wire.Request.PeerSeq).
func MemberEnterAt(v, addr string) uint32 {
	if current.Load().flags&wire.FlagMembers == 0 {
		return noMember
	}
	return enterMember(goroutine(), v, addr)
}

// MemberExit gives the calling goroutine back the member it ran before
// the method whose entry called MemberEnter (prev, what that returned).
func MemberExit(prev uint32) {
	if prev == noMember {
		return
	}
	exitMember(goroutine(), prev)
}

// memberTag is the member a goroutine last entered a method of: its value
// and rank (memberRanks), with the entry of the goroutine's function as
// peerTag has it (a reused goroutine identity running another function
// was never tagged).
type memberTag struct {
	value string
	seq   uint32
	root  uintptr
}

// memberTags is the member each goroutine serves.
var memberTags = newGTable[memberTag](16)

// maxMembers bounds the distinct member values a process ranks; values
// past it tag no goroutine.
const maxMembers = 1 << 10

// memberRanks numbers the member values in the order this process first
// tagged a goroutine with them, from 1: a cluster built member by member
// gets the same ranks in every run.
var memberRanks struct {
	mu     sync.Mutex
	rank   map[string]uint32
	values []string // by rank - 1
	// role is each member's role, by rank, once its goroutines wrote
	// one (Role).
	role map[uint32]int64
	// addr is each member's transport address (MemberEnterAt) → rank.
	addr map[string]uint32
}

// ranked is how many member values are ranked (wire.Request.Ranked).
var ranked atomic.Uint32

// rankOf returns member value v's rank, giving it the next one at first
// sight; 0 when maxMembers values are ranked already.
func rankOf(v string) uint32 {
	memberRanks.mu.Lock()
	defer memberRanks.mu.Unlock()
	if r, ok := memberRanks.rank[v]; ok {
		return r
	}
	if len(memberRanks.rank) >= maxMembers {
		return 0
	}
	if memberRanks.rank == nil {
		memberRanks.rank = map[string]uint32{}
	}
	r := uint32(len(memberRanks.rank) + 1)
	memberRanks.rank[v] = r
	ranked.Store(r)
	memberRanks.values = append(memberRanks.values, v)
	return r
}

// valueOf returns the member value of rank r, "" when there is none.
func valueOf(r uint32) string {
	memberRanks.mu.Lock()
	defer memberRanks.mu.Unlock()
	if r == 0 || int(r) > len(memberRanks.values) {
		return ""
	}
	return memberRanks.values[r-1]
}

// enterMember tags goroutine g, entering a method of member v whose
// transport address is addr ("" unknown), and returns the rank it was
// tagged with before (0 for none). The address is recorded when the
// goroutine is tagged anew, not on the common path (the goroutine stays
// with its member).
func enterMember(g uint64, v, addr string) uint32 {
	old, ok := memberTags.get(g)
	root := goroutineRoot()
	var prev uint32
	if ok && old.root == root {
		if old.value == v {
			return old.seq // the goroutine stays with its member (the common case)
		}
		prev = old.seq
	}
	seq := rankOf(v)
	if seq == 0 || root == 0 {
		untagMember(g)
		return prev
	}
	if addr != "" {
		memberAddr(addr, seq)
	}
	memberTags.set(g, memberTag{value: v, seq: seq, root: root})
	return prev
}

// exitMember gives goroutine g back member rank prev (none for 0) as it
// leaves a member's method.
func exitMember(g uint64, prev uint32) {
	cur, ok := memberTags.get(g)
	switch {
	case ok && cur.seq == prev:
		return // back to the same member (the common case)
	case prev == 0:
		untagMember(g)
	default:
		root := goroutineRoot()
		if root == 0 {
			untagMember(g)
			return
		}
		memberTags.set(g, memberTag{value: valueOf(prev), seq: prev, root: root})
	}
}

// untagMember forgets goroutine g's member.
func untagMember(g uint64) { memberTags.del(g) }

// memberOf returns the member goroutine g last entered a method of, and
// its rank; rank 0 when none (or the tag is a dead goroutine's).
func memberOf(g uint64) (string, uint32) {
	t, ok := memberTags.get(g)
	if !ok || t.root != goroutineRoot() {
		return "", 0
	}
	return t.value, t.seq
}

// memberRole records that member rank seq's role is now v; it reports
// whether that is a change.
func memberRole(seq uint32, v int64) bool {
	memberRanks.mu.Lock()
	defer memberRanks.mu.Unlock()
	if old, ok := memberRanks.role[seq]; ok && old == v {
		return false
	}
	if memberRanks.role == nil {
		memberRanks.role = map[uint32]int64{}
	}
	memberRanks.role[seq] = v
	return true
}

// roleOfMember returns member rank seq's role, if its goroutines wrote
// one.
func roleOfMember(seq uint32) (int64, bool) {
	memberRanks.mu.Lock()
	defer memberRanks.mu.Unlock()
	v, ok := memberRanks.role[seq]
	return v, ok
}

// memberAddr records that member rank seq's transport address is addr.
func memberAddr(addr string, seq uint32) {
	memberRanks.mu.Lock()
	defer memberRanks.mu.Unlock()
	if memberRanks.addr[addr] == seq {
		return
	}
	if memberRanks.addr == nil {
		memberRanks.addr = map[string]uint32{}
	}
	if len(memberRanks.addr) < maxMembers {
		memberRanks.addr[addr] = seq
	}
}

// memberAt returns the rank of the member whose transport address is
// addr, 0 when no member announced it.
func memberAt(addr string) uint32 {
	memberRanks.mu.Lock()
	defer memberRanks.mu.Unlock()
	return memberRanks.addr[addr]
}

// resetMembers forgets every tag, rank and member role: a new connection
// is a new trial, whose members are ranked afresh.
func resetMembers() {
	memberTags.reset()
	memberRanks.mu.Lock()
	memberRanks.rank, memberRanks.values, memberRanks.role, memberRanks.addr = nil, nil, nil, nil
	ranked.Store(0)
	memberRanks.mu.Unlock()
}
