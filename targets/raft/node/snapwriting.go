package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/raft"
)

// snapshotMark is appended to a "found temporary snapshot" warning that
// adminLogger logs at info instead, because the directory it names is a
// snapshot this member is writing at that moment.
const snapshotMark = " (a snapshot this member is still writing, logged at info by the node program)"

// writingSnapshots is the set of snapshot directories (<id>.tmp) this
// member is writing now: hashicorp/raft's FileSnapshotStore lists its
// directory (after every snapshot, to reap old ones; for a user snapshot
// or restore) and warns "found temporary snapshot" about each .tmp
// directory it meets. One that a sink still writes (a periodic snapshot,
// a snapshot installed from the leader and a user restore can overlap) is
// not worth a warning: on a busy machine the log checker saw it now and
// then without any fault. One left behind by a sink that was closed or
// cancelled (hashicorp/consul#5314: a failed Close keeps its .tmp) is,
// and stays a warning.
type writingSnapshots struct {
	mu sync.Mutex
	// dirs counts the sinks created and not yet closed or cancelled, by
	// directory name.
	dirs map[string]int
	// creating counts the Create calls not yet returned, by the prefix
	// "<term>-<index>-" of the directory each makes: the directory exists
	// before Create returns its sink (and its name).
	creating map[string]int
}

func newWritingSnapshots() *writingSnapshots {
	return &writingSnapshots{dirs: map[string]int{}, creating: map[string]int{}}
}

// writing reports whether dir (a directory name, <id>.tmp) is a snapshot
// being written now.
func (w *writingSnapshots) writing(dir string) bool {
	if w == nil || !strings.HasSuffix(dir, ".tmp") {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirs[dir] > 0 {
		return true
	}
	for prefix, n := range w.creating {
		if n > 0 && strings.HasPrefix(dir, prefix) {
			return true
		}
	}
	return false
}

func (w *writingSnapshots) add(m map[string]int, key string, d int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m[key] += d; m[key] <= 0 {
		delete(m, key)
	}
}

// trackingSnapshotStore is a raft.SnapshotStore that keeps writingSnapshots
// up to date with the sinks of the store it wraps.
type trackingSnapshotStore struct {
	raft.SnapshotStore
	w *writingSnapshots
}

// Create implements raft.SnapshotStore.
func (s trackingSnapshotStore) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration, configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	prefix := fmt.Sprintf("%d-%d-", term, index) // FileSnapshotStore's snapshotName
	s.w.add(s.w.creating, prefix, 1)
	defer s.w.add(s.w.creating, prefix, -1)
	sink, err := s.SnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return sink, err
	}
	t := &trackingSink{SnapshotSink: sink, w: s.w, dir: sink.ID() + ".tmp"}
	s.w.add(s.w.dirs, t.dir, 1)
	return t, nil
}

// trackingSink is a sink of trackingSnapshotStore: its directory is being
// written until Close or Cancel returns.
type trackingSink struct {
	raft.SnapshotSink
	w    *writingSnapshots
	dir  string
	once sync.Once
}

func (t *trackingSink) done() { t.once.Do(func() { t.w.add(t.w.dirs, t.dir, -1) }) }

// Close implements raft.SnapshotSink.
func (t *trackingSink) Close() error {
	defer t.done()
	return t.SnapshotSink.Close()
}

// Cancel implements raft.SnapshotSink.
func (t *trackingSink) Cancel() error {
	defer t.done()
	return t.SnapshotSink.Cancel()
}
