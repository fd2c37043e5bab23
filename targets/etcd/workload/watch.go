package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gofault/gofault/workload"
)

// maxFindings bounds the violations one watch reports per check.
const maxFindings = 5

// watcher watches the KV prefix for one client from a start revision, with
// progress notifications, resuming after the last revision it covered
// whenever etcd closes the watch (from the compaction revision when it was
// compacted), and checks what it gets with a watchLog.
type watcher struct {
	c *client

	mu     sync.Mutex
	log    *watchLog
	moved  chan struct{} // closed and replaced whenever the log covers more
	counts map[string]int
	trace  []string // what the watch got, in order, logged when it broke a guarantee
}

// maxTrace bounds a watch's trace (a 5 s trial gives a few hundred lines).
const maxTrace = 2000

// note adds a line to the trace; w.mu is held.
func (w *watcher) note(format string, args ...any) {
	if len(w.trace) < maxTrace {
		w.trace = append(w.trace, time.Now().UTC().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	}
}

func newWatcher(c *client, from int64) *watcher {
	name := fmt.Sprintf("watch of %s from %d", c.wc.Name(), from)
	return &watcher{c: c, log: newWatchLog(name, from), moved: make(chan struct{}), counts: map[string]int{}}
}

// run watches until ctx ends or, when stopAt > 0, the watch covers stopAt.
func (w *watcher) run(ctx context.Context, stopAt int64) {
	for ctx.Err() == nil {
		next := w.next()
		w.mu.Lock()
		w.note("watch from %d", next)
		w.log.watching(next)
		w.mu.Unlock()
		wch := w.c.cli.Watch(clientv3.WithRequireLeader(ctx), kvPrefix, clientv3.WithPrefix(), clientv3.WithRev(next), clientv3.WithProgressNotify(), clientv3.WithCreatedNotify())
		for resp := range wch {
			if resp.Created {
				w.mu.Lock()
				w.note("created, header revision %d", resp.Header.Revision)
				w.mu.Unlock()
				continue
			}
			if resp.CompactRevision != 0 {
				// Legitimate: the watch asked for compacted revisions.
				// It resumes from the compaction.
				w.compacted(resp.CompactRevision)
				break
			}
			if err := resp.Err(); err != nil {
				w.mu.Lock()
				w.note("error %v", err)
				w.mu.Unlock()
				if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
					w.c.wc.Error(fmt.Errorf("watch %s from %d: %w", kvPrefix, next, err))
				}
				break
			}
			// Watch events are not reported as progress: a node that
			// streams events but fails requests must still show as failing.
			if resp.IsProgressNotify() {
				w.progress(resp.Header.Revision)
			} else {
				w.events(resp.Events, resp.Header.Revision)
			}
			if stopAt > 0 && w.covered() >= stopAt {
				return
			}
		}
		workload.Sleep(ctx, 100*time.Millisecond)
	}
}

func (w *watcher) next() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.next()
}

func (w *watcher) covered() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.covered()
}

func (w *watcher) events(evs []*clientv3.Event, hdr int64) {
	revs := make([]int64, len(evs))
	chs := make([]change, len(evs))
	for i, ev := range evs {
		revs[i] = ev.Kv.ModRevision
		chs[i] = change{key: string(ev.Kv.Key)}
		if ev.Type == mvccpb.DELETE {
			chs[i].del = true
		} else {
			chs[i].value = string(ev.Kv.Value)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(revs) > 0 {
		w.note("%d events, revisions %d-%d, header revision %d", len(revs), revs[0], revs[len(revs)-1], hdr)
	}
	w.report(w.log.response(revs, chs))
	w.notify()
}

func (w *watcher) progress(rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.note("progress notification, revision %d", rev)
	w.report(w.log.progress(rev))
	w.notify()
}

func (w *watcher) compacted(rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.note("cancelled: compacted at %d", rev)
	w.log.compacted(rev)
}

// notify wakes waitFor; w.mu is held.
func (w *watcher) notify() {
	close(w.moved)
	w.moved = make(chan struct{})
}

// report reports findings, at most maxFindings per check; w.mu is held.
func (w *watcher) report(fs []finding) {
	for _, f := range fs {
		w.counts[f.check]++
		if w.counts[f.check] <= maxFindings {
			w.c.violation(f.check, f.msg)
		}
	}
}

// waitFor waits until the watch covers revision target, for at most d; it
// reports an error when it does not.
func (w *watcher) waitFor(ctx context.Context, target int64, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		w.mu.Lock()
		covered, moved := w.log.covered(), w.moved
		w.mu.Unlock()
		if covered >= target {
			return
		}
		select {
		case <-moved:
		case <-t.C:
			w.c.wc.Error(fmt.Errorf("watch %s: covered revision %d, not %d, %s after the last write", kvPrefix, covered, target, d))
			return
		case <-ctx.Done():
			return
		}
	}
}

// check checks the watch against the ground truth, once it has stopped or
// caught up, and reports what it found; progress says to report how far a
// watch that caught up to target got.
func (w *watcher) check(t truth, target int64, progress bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.report(w.log.complete(t))
	if len(w.counts) > 0 { // this watch broke a guarantee: what it got
		slog.Info("watch trace", "watch", w.log.name, "trace", strings.Join(w.trace, "; "))
	}
	slog.Info("watch checked", "watch", w.log.name, "events", w.log.events, "progress", w.log.progresses,
		"covered", w.log.covered(), "compacted", len(w.log.gaps))
	if progress && w.log.covered() >= target {
		w.c.wc.Progress(fmt.Sprintf("watch %s: %d events up to revision %d", kvPrefix, w.log.events, w.log.covered()))
	}
	for check, n := range w.counts {
		if n > maxFindings {
			w.c.violation(check, fmt.Sprintf("%s: %d more like these", w.log.name, n-maxFindings))
		}
	}
}
