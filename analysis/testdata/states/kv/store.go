// Package kv is a store with a watcher goroutine over a captured struct.
package kv

import (
	"sync"
	"time"
)

type watcher struct {
	rev     int64
	pending []string
	closed  bool
}

var compacting bool // package-level state

// Store holds keys.
type Store struct {
	mu      sync.Mutex
	rev     int64
	stopc   chan struct{}
	synced  map[string]*watcher
	started time.Time
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{stopc: make(chan struct{}), synced: map[string]*watcher{}}
}

// Watch starts a goroutine syncing a new watcher.
func (s *Store) Watch() {
	w := &watcher{}
	s.synced["x"] = w
	go func() {
		for {
			select {
			case <-s.stopc:
				return
			case <-time.After(time.Millisecond):
			}
			if len(w.pending) > 0 {
				w.flush()
			}
			if w.closed {
				return // no action
			}
			local := 3
			if local > 2 { // a branch on a local only
				s.mu.Lock()
				s.mu.Unlock()
			}
			if w.rev < s.rev {
				w.rev = s.rev
			}
		}
	}()
	go func() {
		// A one-shot goroutine: its branch runs once, not a state.
		if w.closed {
			w.flush()
		}
	}()
	go compactLoop()
	go s.retain()
}

// retain compacts once a minute in a goroutine that remembers, in a
// variable it captured, the last minute it compacted.
func (s *Store) retain() {
	prev := int64(0)
	go func() {
		for {
			time.Sleep(time.Second)
			minute := time.Now().Unix() / 60
			if minute == prev {
				continue
			}
			compact()
			prev = minute
		}
	}()
}

func (w *watcher) flush() { w.pending = w.pending[:0] }

// Put writes a key.
func (s *Store) Put() {
	s.rev++
	s.synced["x"].closed = false
	s.synced["x"].pending = append(s.synced["x"].pending, "x")
}

func compactLoop() {
	for {
		time.Sleep(time.Second)
		if compacting {
			compact()
		} else {
			compacting = true
		}
	}
}

func compact() { compacting = false }

// notATask has the same shape but no goroutine runs it.
func notATask(w *watcher) {
	if len(w.pending) > 0 {
		w.flush()
	}
}

var _ = notATask
