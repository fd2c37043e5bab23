package agent

import "sync"

// maxShardEntries bounds a shard of a goroutine table: goroutine
// identities are reused, so a full shard is mostly dead goroutines and is
// started afresh rather than grown.
const maxShardEntries = 1 << 12

// gtable maps goroutine identities to values (the state a goroutine last
// entered, the peer it last dialled, the member it serves), sharded so
// that goroutines on different cores seldom share a lock.
type gtable[V comparable] struct {
	shards []gshard[V]
	mask   uint64 // len(shards) - 1: a shard is found without a division
}

// gshard is one shard of a gtable.
type gshard[V comparable] struct {
	mu sync.Mutex
	m  map[uint64]V
	_  [40]byte // keep shards on separate cache lines
}

// newGTable returns a table of n shards, n a power of two.
func newGTable[V comparable](n int) gtable[V] {
	if n <= 0 || n&(n-1) != 0 {
		panic("gofault agent: a goroutine table's shard count must be a power of two")
	}
	return gtable[V]{shards: make([]gshard[V], n), mask: uint64(n - 1)}
}

func (t *gtable[V]) shard(g uint64) *gshard[V] {
	return &t.shards[(g>>6)&t.mask]
}

// get returns goroutine g's value.
func (t *gtable[V]) get(g uint64) (V, bool) {
	sh := t.shard(g)
	sh.mu.Lock()
	v, ok := sh.m[g]
	sh.mu.Unlock()
	return v, ok
}

// set makes v goroutine g's value and reports whether that changed it.
func (t *gtable[V]) set(g uint64, v V) bool {
	sh := t.shard(g)
	sh.mu.Lock()
	if old, ok := sh.m[g]; ok && old == v {
		sh.mu.Unlock()
		return false
	}
	if sh.m == nil || len(sh.m) >= maxShardEntries {
		sh.m = make(map[uint64]V)
	}
	sh.m[g] = v
	sh.mu.Unlock()
	return true
}

// del forgets goroutine g's value.
func (t *gtable[V]) del(g uint64) {
	sh := t.shard(g)
	sh.mu.Lock()
	delete(sh.m, g)
	sh.mu.Unlock()
}

// reset forgets every value (a new connection is a new trial).
func (t *gtable[V]) reset() {
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		sh.m = nil
		sh.mu.Unlock()
	}
}
