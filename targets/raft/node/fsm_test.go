package main

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/hashicorp/raft"
)

func entry(t *testing.T, index uint64, c command) *raft.Log {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: b}
}

// sink is an in-memory raft.SnapshotSink.
type sink struct{ bytes.Buffer }

func (*sink) ID() string    { return "test" }
func (*sink) Cancel() error { return nil }
func (*sink) Close() error  { return nil }

func TestFSM(t *testing.T) {
	f := newFSM()
	f.Apply(entry(t, 1, command{Op: "put", Key: "a", Value: "1", ID: "w1"}))
	if got := f.Apply(entry(t, 2, command{Op: "cas", Key: "a", Expect: "1", Value: "2", ID: "w2"})); got != true {
		t.Errorf("cas from the current value = %v, want true", got)
	}
	if got := f.Apply(entry(t, 3, command{Op: "cas", Key: "a", Expect: "1", Value: "3", ID: "w3"})); got != false {
		t.Errorf("cas from a stale value = %v, want false", got)
	}
	f.Apply(entry(t, 4, command{Op: "put", Key: "b", Value: "x", ID: "w4"}))
	f.Apply(entry(t, 5, command{Op: "delete", Key: "b", ID: "w5"}))
	if v, ok := f.get("a"); v != "2" || !ok {
		t.Errorf("a = %q, %v", v, ok)
	}
	if _, ok := f.get("b"); ok {
		t.Error("b not deleted")
	}

	// A snapshot restored on another replica gives the same state.
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var s sink
	if err := snap.Persist(&s); err != nil {
		t.Fatal(err)
	}
	g := newFSM()
	if err := g.Restore(io.NopCloser(&s)); err != nil {
		t.Fatal(err)
	}
	if fs, gs := f.status(false), g.status(false); fs.Digest != gs.Digest || fs.Index != gs.Index || fs.Index != 5 {
		t.Errorf("restored status %+v, want %+v at index 5", gs, fs)
	}

	// An entry handed over again is counted, and so is its write.
	g.Apply(entry(t, 5, command{Op: "delete", Key: "b", ID: "w5"}))
	st := g.status(true)
	if st.Reapplied != 1 || st.Writes["w5"] != 2 || st.Writes["w1"] != 1 {
		t.Errorf("after reapplying entry 5: %+v", st)
	}
}

func TestParsePeers(t *testing.T) {
	ps, err := parsePeers("n1=127.0.0.1:1=127.0.0.1:2, n2=h:3=h:4")
	if err != nil || len(ps) != 2 || ps[1].id != "n2" || ps[1].raftAddr != "h:3" || ps[1].httpAddr != "h:4" {
		t.Errorf("parsePeers = %+v, %v", ps, err)
	}
	if _, err := parsePeers("n1=127.0.0.1:1"); err == nil {
		t.Error("a peer without its HTTP address was accepted")
	}
}
