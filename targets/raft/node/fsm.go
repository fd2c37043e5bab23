package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/hashicorp/raft"
)

// command is one write, the data of a raft log entry.
type command struct {
	Op     string `json:"op"` // put, delete or cas
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Expect string `json:"expect,omitempty"` // cas: the value it expects, "" for absent
	ID     string `json:"id"`               // the client's request ID, unique per write
}

// kvState is the replicated state: the data, how many times each write ID
// was applied (the workload checks that an acknowledged write was applied
// exactly once on every replica), and the index of the last command
// applied. It is what a snapshot holds.
type kvState struct {
	Data   map[string]string `json:"data"`
	Writes map[string]int    `json:"writes"`
	Index  uint64            `json:"index"`
}

// fsm is the service's raft.FSM: a key-value map.
type fsm struct {
	mu sync.Mutex
	st kvState
	// reapplied counts log entries handed to Apply at or below an index
	// already applied: raft applying an entry twice (never reset).
	reapplied int
	// restores counts the snapshots restored (never reset).
	restores int
}

func newFSM() *fsm {
	return &fsm{st: kvState{Data: map[string]string{}, Writes: map[string]int{}}}
}

// Apply implements raft.FSM. A cas returns whether it swapped.
func (f *fsm) Apply(l *raft.Log) any {
	var c command
	if err := json.Unmarshal(l.Data, &c); err != nil {
		return fmt.Errorf("decode entry %d: %w", l.Index, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if l.Index <= f.st.Index {
		f.reapplied++
	}
	f.st.Index = l.Index
	f.st.Writes[c.ID]++
	switch c.Op {
	case "put":
		f.st.Data[c.Key] = c.Value
	case "delete":
		delete(f.st.Data, c.Key)
	case "cas":
		if f.st.Data[c.Key] != c.Expect {
			return false
		}
		f.st.Data[c.Key] = c.Value
		return true
	}
	return nil
}

// Snapshot implements raft.FSM: a copy of the state, written by Persist.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := json.Marshal(f.st)
	if err != nil {
		return nil, err
	}
	return snapshot(b), nil
}

// Restore implements raft.FSM: it replaces the state with a snapshot's.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var st kvState
	if err := json.NewDecoder(rc).Decode(&st); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	if st.Data == nil {
		st.Data = map[string]string{}
	}
	if st.Writes == nil {
		st.Writes = map[string]int{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st = st
	f.restores++
	return nil
}

// restoreCount returns how many snapshots the state machine restored.
func (f *fsm) restoreCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.restores
}

// get reads a key from the local state.
func (f *fsm) get(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.st.Data[key]
	return v, ok
}

// fsmStatus is what /status reports of the state machine.
type fsmStatus struct {
	Index     uint64         `json:"index"`     // last command applied
	Digest    string         `json:"digest"`    // of the data and the write counts
	Reapplied int            `json:"reapplied"` // entries applied twice
	Writes    map[string]int `json:"writes,omitempty"`
}

// status returns the state's index and digest, and the write counts when
// withWrites is set.
func (f *fsm) status(withWrites bool) fsmStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(f.st.Data)) {
		fmt.Fprintf(h, "d %q %q\n", k, f.st.Data[k])
	}
	for _, id := range slices.Sorted(maps.Keys(f.st.Writes)) {
		fmt.Fprintf(h, "w %q %d\n", id, f.st.Writes[id])
	}
	st := fsmStatus{Index: f.st.Index, Digest: hex.EncodeToString(h.Sum(nil))[:16], Reapplied: f.reapplied}
	if withWrites {
		st.Writes = maps.Clone(f.st.Writes)
	}
	return st
}

// snapshot is an FSM snapshot: the encoded state.
type snapshot []byte

// Persist implements raft.FSMSnapshot.
func (s snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (snapshot) Release() {}
