package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// watcher watches the KV prefix for one client and checks that events
// arrive in revision order, without duplicates, and — at verify — without
// gaps relative to the acknowledged writes.
type watcher struct {
	c    *client
	from int64

	mu      sync.Mutex
	seen    map[int64]string // revision → key of every event
	lastRev int64
	moved   chan struct{} // closed and replaced whenever lastRev grows
}

func newWatcher(c *client, from int64) *watcher {
	return &watcher{c: c, from: from, seen: map[int64]string{}, lastRev: from - 1, moved: make(chan struct{})}
}

// run watches until ctx ends, re-establishing the watch after the last
// revision seen whenever etcd closes it.
func (w *watcher) run(ctx context.Context) {
	for ctx.Err() == nil {
		w.mu.Lock()
		next := w.lastRev + 1
		w.mu.Unlock()
		wch := w.c.cli.Watch(clientv3.WithRequireLeader(ctx), kvPrefix, clientv3.WithPrefix(), clientv3.WithRev(next))
		for resp := range wch {
			if err := resp.Err(); err != nil {
				if ctx.Err() == nil {
					w.c.wc.Error(fmt.Errorf("watch %s from %d: %w", kvPrefix, next, err))
				}
				break
			}
			if resp.IsProgressNotify() {
				continue
			}
			// Watch events are not reported as progress: a node that
			// streams events but fails requests must still show as failing.
			for _, ev := range resp.Events {
				w.observe(ev.Kv.ModRevision, string(ev.Kv.Key))
			}
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// observe checks one event against those before it.
func (w *watcher) observe(rev int64, key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if prev, dup := w.seen[rev]; dup {
		w.c.wc.Violation(checkWatchOrder, fmt.Sprintf("watcher of %s got revision %d (key %s) twice (first for key %s)", w.c.wc.Name(), rev, key, prev))
		return
	}
	w.seen[rev] = key
	if rev < w.lastRev {
		w.c.wc.Violation(checkWatchOrder, fmt.Sprintf("watcher of %s got revision %d (key %s) after revision %d", w.c.wc.Name(), rev, key, w.lastRev))
		return
	}
	if rev < w.from {
		w.c.wc.Violation(checkWatchOrder, fmt.Sprintf("watcher of %s started at revision %d got revision %d (key %s)", w.c.wc.Name(), w.from, rev, key))
	}
	w.lastRev = rev
	close(w.moved)
	w.moved = make(chan struct{})
}

// waitFor waits until the watcher has seen revision target, for at most d.
func (w *watcher) waitFor(ctx context.Context, target int64, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		w.mu.Lock()
		last, moved := w.lastRev, w.moved
		w.mu.Unlock()
		if last >= target {
			return
		}
		select {
		case <-moved:
		case <-t.C:
			w.c.wc.Error(fmt.Errorf("watch %s: saw revision %d, not %d, %s after the last write", kvPrefix, last, target, d))
			return
		case <-ctx.Done():
			return
		}
	}
}

// checkComplete reports every acknowledged write at or below both target
// and the last revision seen that the watcher skipped: a gap.
func (w *watcher) checkComplete(writes map[int64]string, target int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var missed []int64
	for rev := range writes {
		if rev >= w.from && rev <= w.lastRev && rev <= target {
			if _, ok := w.seen[rev]; !ok {
				missed = append(missed, rev)
			}
		}
	}
	sort.Slice(missed, func(i, j int) bool { return missed[i] < missed[j] })
	if w.lastRev >= target {
		w.c.wc.Progress(fmt.Sprintf("watch %s: %d events up to revision %d", kvPrefix, len(w.seen), w.lastRev))
	}
	for i, rev := range missed {
		if i == 5 {
			w.c.wc.Violation(checkWatchOrder, fmt.Sprintf("watcher of %s missed %d more writes", w.c.wc.Name(), len(missed)-i))
			break
		}
		w.c.wc.Violation(checkWatchOrder, fmt.Sprintf("watcher of %s skipped revision %d (write of %s) but saw revision %d", w.c.wc.Name(), rev, writes[rev], w.lastRev))
	}
}
