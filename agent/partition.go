package agent

import (
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

// peerShard is one shard of the goroutine → peer address table.
type peerShard struct {
	mu sync.Mutex
	m  map[uint64]string
	_  [40]byte // keep shards on separate cache lines
}

// peerTags is the address each goroutine last dialled (Dial).
var peerTags [16]peerShard

// tagPeer records that goroutine g just dialled addr.
func tagPeer(g uint64, addr string) {
	sh := &peerTags[(g>>6)%uint64(len(peerTags))]
	sh.mu.Lock()
	if sh.m[g] != addr {
		if sh.m == nil || len(sh.m) >= maxShardEntries {
			// Goroutine identities are reused; a full shard is mostly
			// dead goroutines, so start afresh rather than grow.
			sh.m = make(map[uint64]string)
		}
		sh.m[g] = addr
	}
	sh.mu.Unlock()
}

// peerOf returns the address goroutine g last dialled, or "".
func peerOf(g uint64) string {
	sh := &peerTags[(g>>6)%uint64(len(peerTags))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.m[g]
}
