package server

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestParseBugs(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"none", nil, false},
		{"snapshot", []string{BugSnapshot}, false},
		{"retry, fence", []string{BugFence, BugRetry}, false},
		{"all", AllBugs, false},
		{"split", []string{BugSplit}, false},
		{"snapshot,bogus", nil, true},
	}
	for _, tt := range tests {
		b, err := ParseBugs(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseBugs(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(b.Names(), tt.want) {
			t.Errorf("ParseBugs(%q) = %v, want %v", tt.in, b.Names(), tt.want)
		}
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
		want string
		data map[string]string
	}{
		{"put", Entry{Op: "put", Key: "a", Value: "2"}, "", map[string]string{"a": "2"}},
		{"delete", Entry{Op: "delete", Key: "a"}, "", map[string]string{}},
		{"cas hit", Entry{Op: "cas", Key: "a", Expect: "1", Value: "3"}, "true", map[string]string{"a": "3"}},
		{"cas miss", Entry{Op: "cas", Key: "a", Expect: "9", Value: "3"}, "false", map[string]string{"a": "1"}},
		{"cas absent", Entry{Op: "cas", Key: "b", Expect: "", Value: "3"}, "true", map[string]string{"a": "1", "b": "3"}},
	}
	for _, tt := range tests {
		n := &Node{data: map[string]string{"a": "1"}}
		if got := n.apply(tt.e); got != tt.want {
			t.Errorf("%s: apply = %q, want %q", tt.name, got, tt.want)
		}
		if !reflect.DeepEqual(n.data, tt.data) {
			t.Errorf("%s: data = %v, want %v", tt.name, n.data, tt.data)
		}
	}
}

// TestWALReplay appends entries, tears the last record as a crash would,
// and checks that a reopened log replays the whole records only.
func TestWALReplay(t *testing.T) {
	dir := t.TempDir()
	w, got, _, err := openWAL(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("fresh log replayed %d entries", len(got))
	}
	want := []Entry{{Index: 1, ID: "a", Op: "put", Key: "k", Value: "v"}, {Index: 2, ID: "b", Op: "delete", Key: "k"}}
	if err := w.append(want); err != nil {
		t.Fatal(err)
	}
	if _, err := w.f.WriteString(`{"i":3,"id":"c","op":"pu`); err != nil {
		t.Fatal(err)
	}
	w.f.Close()
	w, got, _, err = openWAL(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.f.Close()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replayed %+v, want %+v", got, want)
	}
	if w.seq != 2 {
		t.Errorf("reopened log appends to segment %d, want 2", w.seq)
	}
}

// TestSingleNode runs a one-node cluster in process: writes commit alone,
// reads see them, a repeated request ID is applied once, and a restart
// recovers the store from the snapshot and the log.
func TestSingleNode(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "n1", DataDir: dir, Peers: map[string]string{"n1": "127.0.0.1:0"}, Leader: "n1", SnapEvery: 3}
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	steps := []struct {
		e    Entry
		want string
	}{
		{Entry{ID: "1", Op: "put", Key: "x", Value: "a"}, ""},
		{Entry{ID: "2", Op: "cas", Key: "x", Expect: "a", Value: "b"}, "true"},
		{Entry{ID: "2", Op: "cas", Key: "x", Expect: "a", Value: "b"}, "true"}, // a retry: answered, not re-applied
		{Entry{ID: "3", Op: "cas", Key: "x", Expect: "a", Value: "c"}, "false"},
		{Entry{ID: "4", Op: "put", Key: "y", Value: "z"}, ""},
	}
	for _, s := range steps {
		got, err := n.Write(ctx, s.e)
		if err != nil {
			t.Fatalf("write %+v: %v", s.e, err)
		}
		if got != s.want {
			t.Errorf("write %+v = %q, want %q", s.e, got, s.want)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, snapshotName)); err != nil {
		t.Errorf("no snapshot after %d entries: %v", len(steps), err)
	}

	n, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	defer n.Close()
	for key, want := range map[string]string{"x": "b", "y": "z"} {
		v, ok, err := n.Get(ctx, key)
		if err != nil || !ok || v != want {
			t.Errorf("after restart: get %s = %q, %v, %v; want %q", key, v, ok, err, want)
		}
	}
}

// state is what a node's replicated state looks like from outside.
type state struct {
	applied uint64
	digest  string            // Status.Digest: data and request table
	data    map[string]string // what reads return
}

func stateOf(n *Node) state {
	st := n.Status()
	n.mu.Lock()
	defer n.mu.Unlock()
	return state{applied: st.Applied, digest: st.Digest, data: maps.Clone(n.data)}
}

// TestSplitSnapshotCrash restarts a one-node cluster over the data dir a
// crash leaves and compares its replicated state before and after. The
// crash window of the split bug — after the snapshot's data file is
// replaced, before its request table is — is held open by making the
// request table's write fail (its temporary file is a directory), which
// leaves the disk exactly as a crash in the window does. Only the split bug
// in that window changes the state, and then only the request table: the
// data, hence every read, is the same.
func TestSplitSnapshotCrash(t *testing.T) {
	tests := []struct {
		name   string
		bugs   string
		window bool // hold the crash window open
		differ bool
	}{
		{"bug off, crash in the window", "", true, false},
		{"bug on, no crash in the window", BugSplit, false, false},
		{"bug on, crash in the window", BugSplit, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.window {
				if err := os.Mkdir(filepath.Join(dir, requestsName+".tmp"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			bugs, err := ParseBugs(tt.bugs)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Name: "n1", DataDir: dir, Peers: map[string]string{"n1": "127.0.0.1:0"}, Leader: "n1", SnapEvery: 3, Bugs: bugs,
				Log: slog.New(slog.DiscardHandler)}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			n, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			n.Start()
			for i := range 8 {
				e := Entry{ID: fmt.Sprintf("c#%d", i), Op: "put", Key: fmt.Sprintf("k%d", i%3), Value: fmt.Sprint(i)}
				if i%4 == 3 {
					e = Entry{ID: e.ID, Op: "cas", Key: "k0", Expect: "0", Value: "x"}
				}
				if _, err := n.Write(ctx, e); err != nil {
					t.Fatalf("write %+v: %v", e, err)
				}
			}
			before := stateOf(n)
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, snapshotName)); err != nil {
				t.Fatalf("no snapshot: %v", err)
			}

			n, err = Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			n.Start()
			defer n.Close()
			if err := n.waitApplied(ctx, before.applied); err != nil {
				t.Fatal(err)
			}
			after := stateOf(n)
			if after.applied != before.applied {
				t.Fatalf("applied %d after the restart, %d before", after.applied, before.applied)
			}
			if !reflect.DeepEqual(after.data, before.data) {
				t.Errorf("data after the restart %v, before %v: reads would see the divergence", after.data, before.data)
			}
			if got := after.digest != before.digest; got != tt.differ {
				t.Errorf("digest before %s, after the restart %s: differ = %v, want %v", before.digest, after.digest, got, tt.differ)
			}
		})
	}
}
