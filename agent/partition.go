package agent

import (
	"runtime"
	"sync"
	"time"
)

// planChange is closed, and replaced, whenever a new plan is installed: a
// call stalled by a partition (wire.ActStall) waits on it, since the heal
// comes as a new plan.
var planChange struct {
	mu sync.Mutex
	ch chan struct{}
}

// setPlan installs p and wakes the stalled calls.
func setPlan(p *plan) {
	current.Store(p)
	planChange.mu.Lock()
	if planChange.ch != nil {
		close(planChange.ch)
		planChange.ch = nil
	}
	planChange.mu.Unlock()
}

// planChanged returns a channel closed at the next plan.
func planChanged() <-chan struct{} {
	planChange.mu.Lock()
	defer planChange.mu.Unlock()
	if planChange.ch == nil {
		planChange.ch = make(chan struct{})
	}
	return planChange.ch
}

// stall blocks a peer-network call of a cut-off node for at most d, until
// the next plan (which may heal the partition); the caller then asks
// again.
func stall(d time.Duration, changed <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-changed:
	}
}

// maxStalls bounds how often one call asks again after a stall, so a
// controller that keeps answering ActStall cannot hold it forever.
const maxStalls = 64

// peerTag is the address a goroutine last dialled, with the entry of the
// function the goroutine runs: where goroutine identities are reused once
// a goroutine exits (uniqueIDs false), a new goroutine on a reused
// identity that runs another function never dialled that address.
type peerTag struct {
	addr string
	root uintptr
}

// peerTags is what each goroutine last dialled (Dial).
var peerTags = newGTable[peerTag](16)

// tagPeer records that goroutine g just dialled addr.
func tagPeer(g uint64, addr string) {
	if cur, _ := peerTags.get(g); cur.addr == addr {
		return // the goroutine dials the same peer again (or a dead one's did: then lookups miss, never mislead)
	}
	t := peerTag{addr: addr, root: goroutineRoot()}
	if t.root == 0 {
		untagPeer(g)
		return
	}
	peerTags.set(g, t)
}

// untagPeer forgets what goroutine g dialled: it is serving a peer's
// request (Accept), whose peer no dial of its own names.
func untagPeer(g uint64) {
	peerTags.del(g)
}

// peerOf returns the address goroutine g last dialled, or "" when it
// dialled none (or the tag is a dead goroutine's: it ran another
// function).
func peerOf(g uint64) string {
	t, ok := peerTags.get(g)
	if !ok || t.root != goroutineRoot() {
		return ""
	}
	return t.addr
}

// goroutineRoot returns the entry of the function the calling goroutine
// was started with (the frame below runtime.goexit), or 0 when its stack
// is too deep to tell; 1 when goroutine identities are never reused
// (uniqueIDs), so no check is needed. It walks the stack: about a
// microsecond, paid at new peers' dials and at live requests only.
func goroutineRoot() uintptr {
	if uniqueIDs {
		return 1
	}
	var pcs [256]uintptr
	n := runtime.Callers(2, pcs[:])
	if n < 2 || n == len(pcs) {
		return 0
	}
	f := runtime.FuncForPC(pcs[n-2] - 1)
	if f == nil {
		return 0
	}
	return f.Entry()
}
