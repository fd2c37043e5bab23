package main

import (
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Guarantee names reported with violations. They are stable: known-bug
// files match them (checker "violations", symptom "workload saw <name>
// violated").
const (
	// checkRevision: a client's response header revision went backwards
	// (each client talks to one member).
	checkRevision = "revision-monotonic"
	// checkWatchOrder: a watch event older than one delivered before, or
	// older than the watch's start revision.
	checkWatchOrder = "watch-order"
	// checkWatchDuplicate: the same key at the same revision delivered
	// twice on one watch.
	checkWatchDuplicate = "watch-duplicate"
	// checkWatchLost: a committed write in the watched range at or below
	// the revision the watch reached (by events or progress
	// notifications) was never delivered, and no compaction excuses it.
	checkWatchLost = "watch-lost-event"
	// checkWatchMismatch: an event differs from the write at its revision
	// (another key, a PUT for a delete, another value).
	checkWatchMismatch = "watch-mismatch"
	// checkWatchAtomic: one revision's events split over two responses.
	checkWatchAtomic = "watch-atomic"
	// checkWatchProgress: a progress notification went backwards, or an
	// event arrived at or below a revision a progress notification had
	// already promised complete.
	checkWatchProgress = "watch-progress"
	// checkLeaseKeepAlive: a key on a kept-alive lease vanished before
	// the lease could have expired.
	checkLeaseKeepAlive = "lease-keepalive"
	// checkLeaseRevoke: a key on a revoked lease was still there.
	checkLeaseRevoke = "lease-revoke"
)

// allChecks are the guarantee names ETCD_WORKLOAD_SKIP_CHECKS may name.
var allChecks = []string{checkRevision, checkWatchOrder, checkWatchDuplicate, checkWatchLost,
	checkWatchMismatch, checkWatchAtomic, checkWatchProgress, checkLeaseKeepAlive, checkLeaseRevoke}

// parseSkip reads ETCD_WORKLOAD_SKIP_CHECKS: a comma list of guarantee
// names the workload checks but does not report (it logs them instead).
// A known-bug scenario uses it to keep an older release's other, unrelated
// bug out of its trials.
func parseSkip(v string) (map[string]bool, error) {
	skip := map[string]bool{}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(allChecks, name) {
			return nil, fmt.Errorf("ETCD_WORKLOAD_SKIP_CHECKS: unknown check %q (want some of %s)", name, strings.Join(allChecks, ", "))
		}
		skip[name] = true
	}
	return skip, nil
}

// violation reports that guarantee check was broken, unless the settings
// skip it.
func (c *client) violation(check, msg string) {
	if c.w.cfg.skip[check] {
		slog.Info("violation not reported (ETCD_WORKLOAD_SKIP_CHECKS)", "check", check, "msg", msg)
		return
	}
	c.wc.Violation(check, msg)
}

// finding is one broken guarantee: its check name and the evidence.
type finding struct {
	check, msg string
}

// change is one key's change at a revision: what a write made and what a
// watch event reports.
type change struct {
	key   string
	del   bool
	value string // the value put; "" for a delete
}

func (ch change) String() string {
	if ch.del {
		return "DELETE " + ch.key
	}
	return fmt.Sprintf("PUT %s=%s", ch.key, ch.value)
}

// truth is the ground truth for the watches: every write under kvPrefix
// whose response was received, by revision, with all its changes (a
// revision is made by exactly one request). Writes whose outcome is
// unknown are not in it: their events may or may not appear.
type truth map[int64][]change

// revFloor checks that one client's response revisions never go
// backwards: a response to a request sent after another response was
// received must not carry a lower revision (concurrent requests may
// return in any order). It holds across the member's restarts, since a
// member never forgets a revision it applied.
type revFloor struct {
	mu   sync.Mutex
	max  int64
	what string // the request that returned max
}

// floor is the highest revision a client had received when it sent a
// request.
type floor struct {
	rev  int64
	what string
}

// begin returns the floor for a request about to be sent.
func (f *revFloor) begin() floor {
	f.mu.Lock()
	defer f.mu.Unlock()
	return floor{f.max, f.what}
}

// end takes the revision rev of the response to request what, sent at
// floor at; it returns a finding when rev is below it. A zero revision (a
// response without a header) is ignored.
func (f *revFloor) end(at floor, rev int64, what string) *finding {
	if rev == 0 {
		return nil
	}
	f.mu.Lock()
	if rev > f.max {
		f.max, f.what = rev, what
	}
	f.mu.Unlock()
	if rev < at.rev {
		return &finding{checkRevision, fmt.Sprintf("%s returned revision %d after %s had returned revision %d", what, rev, at.what, at.rev)}
	}
	return nil
}

// revKey names one event: a key at a revision.
type revKey struct {
	rev int64
	key string
}

// span is a closed range of revisions.
type span struct{ lo, hi int64 }

// declaration is the range of revisions a progress notification covered
// first; early when it came before any event of its watch call.
type declaration struct {
	span
	early bool
}

// watchLog is what one watch delivered, checked as it arrives; complete
// checks it against the ground truth at the end. It is fed from one
// goroutine (the watch's) and read after it ended.
type watchLog struct {
	name  string // "watch of n1/0 from 12", for the messages
	from  int64  // the watch's start revision
	start int64  // the start revision of the watch call now running (from, or where it resumed)

	seen         map[revKey]change
	lastEvent    int64 // highest event revision delivered
	lastProgress int64 // highest progress notification revision
	resp         int   // responses delivered so far
	lastResp     int   // the response that delivered lastEvent
	split        int64 // last revision reported as split
	gaps         []span
	compactedAt  int64         // resume revision after a compaction
	byProgress   []declaration // revisions a progress notification covered first
	events       int
	progresses   int
	callEvents   int // events delivered since the running watch call started
}

func newWatchLog(name string, from int64) *watchLog {
	return &watchLog{name: name, from: from, start: from, seen: map[revKey]change{}}
}

// watching notes that the watch (re)started at revision rev: the events
// and progress notifications that follow are those of a watch from rev.
func (l *watchLog) watching(rev int64) { l.start, l.callEvents = rev, 0 }

// covered is the revision up to which the watch must have delivered every
// event: the last event's, or the last progress notification's.
func (l *watchLog) covered() int64 { return max(l.lastEvent, l.lastProgress, l.from-1) }

// next is the revision to resume the watch from after it broke.
func (l *watchLog) next() int64 { return max(l.covered()+1, l.compactedAt) }

// response checks one response's events (rev, change), in order.
func (l *watchLog) response(revs []int64, chs []change) []finding {
	var fs []finding
	l.resp++
	for i, rev := range revs {
		ch := chs[i]
		k := revKey{rev, ch.key}
		if _, dup := l.seen[k]; dup {
			fs = append(fs, finding{checkWatchDuplicate, fmt.Sprintf("%s got %s at revision %d twice", l.name, ch, rev)})
			continue
		}
		l.seen[k] = ch
		l.events++
		l.callEvents++
		switch {
		case rev < l.lastEvent:
			fs = append(fs, finding{checkWatchOrder, fmt.Sprintf("%s got %s at revision %d after revision %d", l.name, ch, rev, l.lastEvent)})
		case rev < l.from:
			fs = append(fs, finding{checkWatchOrder, fmt.Sprintf("%s got %s at revision %d before its start revision", l.name, ch, rev)})
		}
		if rev <= l.lastProgress {
			fs = append(fs, finding{checkWatchProgress, fmt.Sprintf("%s got %s at revision %d after a progress notification at revision %d", l.name, ch, rev, l.lastProgress)})
		}
		if rev == l.lastEvent && l.lastResp != l.resp && l.split != rev {
			l.split = rev
			fs = append(fs, finding{checkWatchAtomic, fmt.Sprintf("%s got revision %d's events in two responses (%s in the second)", l.name, rev, ch)})
		}
		if rev >= l.lastEvent {
			l.lastEvent, l.lastResp = rev, l.resp
		}
	}
	return fs
}

// progress checks a progress notification at revision rev. etcd sends
// one only for watchers at or past their start revision (v3.5.35
// mvcc/watchable_store.go progressIfSync), and its client resumes a
// broken watch at or after where the watch call started: one below the
// running watch call's start revision was made for other watchers of the
// stream (a stale RequestProgress response broadcast to a watch created
// after it), and promises nothing about this watch's events.
func (l *watchLog) progress(rev int64) []finding {
	l.resp++
	l.progresses++
	var fs []finding
	if rev < l.start-1 {
		fs = append(fs, finding{checkWatchProgress, fmt.Sprintf("%s got a progress notification at revision %d on its watch from revision %d", l.name, rev, l.start)})
	}
	if rev < l.lastProgress {
		return append(fs, finding{checkWatchProgress, fmt.Sprintf("%s got a progress notification at revision %d after one at revision %d", l.name, rev, l.lastProgress)})
	}
	if c := l.covered(); rev > c {
		l.byProgress = append(l.byProgress, declaration{span{c + 1, rev}, l.callEvents == 0})
	}
	l.lastProgress = rev
	return fs
}

// missed reports an event the watch never got at rev. A progress
// notification that came before any event of its watch call and covered
// rev had declared it delivered: etcd's stale RequestProgress response,
// made for the stream's other watchers before this one existed and
// delivered after its created response (docs/policies.md), whose watch
// then never gets those events — watch-progress, the notification's fault,
// so that the loss it causes is one finding apart from events lost while
// the watch ran (etcd #18089, #17529, #19179). Otherwise it is a lost
// event, saying which later notification declared it delivered, if one
// did.
func (l *watchLog) missed(ch change, rev, upTo int64) finding {
	for _, d := range l.byProgress {
		if d.lo > rev || rev > d.hi {
			continue
		}
		if d.early {
			return finding{checkWatchProgress, fmt.Sprintf("%s never got %s at revision %d: a progress notification at revision %d, before any event of the watch, had declared it delivered", l.name, ch, rev, d.hi)}
		}
		return finding{checkWatchLost, fmt.Sprintf("%s missed %s at revision %d (it reached revision %d; a progress notification at revision %d had declared it delivered)", l.name, ch, rev, upTo, d.hi)}
	}
	return finding{checkWatchLost, fmt.Sprintf("%s missed %s at revision %d (it reached revision %d)", l.name, ch, rev, upTo)}
}

// compacted notes that the watch, resumed from next(), was cancelled
// because the store was compacted at compactRev: the events from next()
// to compactRev-1 are legitimately gone, and the watch resumes at
// compactRev.
func (l *watchLog) compacted(compactRev int64) {
	if n := l.next(); compactRev > n {
		l.gaps = append(l.gaps, span{n, compactRev - 1})
		l.compactedAt = compactRev
	}
}

func (l *watchLog) excused(rev int64) bool {
	for _, g := range l.gaps {
		if g.lo <= rev && rev <= g.hi {
			return true
		}
	}
	return false
}

// complete checks the watch against the ground truth: every change of a
// known write from the start revision to covered() must have been
// delivered, unless a compaction cancelled the watch over it, and every
// event at a known write's revision must be one of its changes.
func (l *watchLog) complete(t truth) []finding {
	var fs []finding
	revs := make([]int64, 0, len(t))
	for rev := range t {
		revs = append(revs, rev)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	upTo := l.covered()
	byRev := map[int64][]revKey{}
	for k := range l.seen {
		byRev[k.rev] = append(byRev[k.rev], k)
	}
	for _, rev := range revs {
		if rev < l.from || rev > upTo || l.excused(rev) {
			continue
		}
		want := map[string]bool{}
		for _, ch := range t[rev] {
			want[ch.key] = true
			got, ok := l.seen[revKey{rev, ch.key}]
			switch {
			case !ok:
				fs = append(fs, l.missed(ch, rev, upTo))
			case got != ch:
				fs = append(fs, finding{checkWatchMismatch, fmt.Sprintf("%s got %s at revision %d, which wrote %s", l.name, got, rev, ch)})
			}
		}
		got := byRev[rev]
		sort.Slice(got, func(i, j int) bool { return got[i].key < got[j].key })
		for _, k := range got {
			if !want[k.key] {
				fs = append(fs, finding{checkWatchMismatch, fmt.Sprintf("%s got %s at revision %d, which did not write %s", l.name, l.seen[k], rev, k.key)})
			}
		}
	}
	return fs
}
