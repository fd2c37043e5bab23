package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofault/gofault/examples/minikv/transport"
)

// TestSnapshotInstall cuts a follower off (it is not running) until the
// leader compacted past it, then starts it: it catches up from the
// leader's snapshot, and its state equals the leader's unless the install
// bug leaves it its own request table.
func TestSnapshotInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster on local sockets")
	}
	for _, tt := range []struct {
		bugs string
		same bool
	}{{"", true}, {BugInstall, false}} {
		t.Run("bugs="+tt.bugs, func(t *testing.T) {
			bugs, err := ParseBugs(tt.bugs)
			if err != nil {
				t.Fatal(err)
			}
			names := []string{"n1", "n2", "n3"}
			lns := map[string]net.Listener{}
			peers := map[string]string{}
			for _, name := range names {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				lns[name], peers[name] = ln, ln.Addr().String()
			}
			dir := t.TempDir()
			nodes := map[string]*Node{}
			start := func(name string) {
				n, err := Open(Config{Name: name, DataDir: filepath.Join(dir, name), Peers: peers, Leader: "n1", Bugs: bugs,
					SnapEvery: 10, CompactKeep: 4, Log: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				srv := &http.Server{Handler: n.Handler()}
				go srv.Serve(lns[name])
				n.Start()
				nodes[name] = n
				t.Cleanup(func() { srv.Close(); n.Close() })
			}
			start("n1")
			start("n2")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := range 40 {
				if _, err := nodes["n1"].Write(ctx, Entry{ID: fmt.Sprintf("r%d", i), Op: "put", Key: "k", Value: fmt.Sprint(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if st := nodes["n1"].Status(); st.SnapIndex < 20 {
				t.Fatalf("leader's snapshot at %d, want >= 20", st.SnapIndex)
			}
			start("n3") // behind the compacted log: it needs the snapshot
			lead := nodes["n1"].Status()
			var st Status
			for ctx.Err() == nil {
				if st = nodes["n3"].Status(); st.Applied >= lead.Applied {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if st.Applied != lead.Applied {
				t.Fatalf("n3 applied %d, leader %d", st.Applied, lead.Applied)
			}
			if st.SnapIndex == 0 {
				t.Errorf("n3 caught up without a snapshot")
			}
			if same := st.Digest == lead.Digest; same != tt.same {
				t.Errorf("n3's digest %s, leader's %s: equal = %v, want %v", st.Digest, lead.Digest, same, tt.same)
			}
		})
	}
}

// TestCatchupInstall: with the catchup bug, a follower that has not lost
// its leader since its last install (resync unset) keeps its own request
// table when it installs a snapshot; one whose watchdog declared the
// leader lost (resync set), or that restarted with a snapshot of its own,
// takes the snapshot's. A node started on an empty data dir does not
// resync. Without the bug every install takes the snapshot's table.
func TestCatchupInstall(t *testing.T) {
	for _, tt := range []struct {
		bugs   string
		resync bool
		keeps  bool
	}{
		{"", false, false},
		{"", true, false},
		{BugCatchup, true, false},
		{BugCatchup, false, true},
		{BugInstall, true, true},
	} {
		t.Run(fmt.Sprintf("bugs=%s,resync=%v", tt.bugs, tt.resync), func(t *testing.T) {
			dir := t.TempDir()
			n := openFollower(t, dir, tt.bugs)
			if n.resync {
				t.Fatalf("a node started on an empty data dir resyncs")
			}
			n.resync = tt.resync
			snap, err := json.Marshal(snapshotFile{Index: 10, Data: map[string]string{"k": "v"}, Done: map[string]string{"r1": "ok"}})
			if err != nil {
				t.Fatal(err)
			}
			resp := n.installSnapshot(transport.Message{Type: transport.MsgSnap, From: 1, Index: 10, Payload: snap})
			if resp.Reject || resp.Index != 10 {
				t.Fatalf("install answered %+v, want index 10", resp)
			}
			if _, has := n.done["r1"]; has == tt.keeps {
				t.Errorf("request table after the install: %v; want the follower's own kept = %v", n.done, tt.keeps)
			}
			if n.data["k"] != "v" || n.applied != 10 {
				t.Errorf("state after the install: data %v, applied %d", n.data, n.applied)
			}
			if n.resync {
				t.Errorf("resync still set after an install")
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			n = openFollower(t, dir, tt.bugs)
			defer n.Close()
			if !n.resync {
				t.Errorf("a node restarted with a snapshot of its own does not resync")
			}
		})
	}
}

// openFollower opens n2, a follower of the static leader n1, on dir with
// the planted bugs named in bugs.
func openFollower(t *testing.T, dir, bugs string) *Node {
	t.Helper()
	b, err := ParseBugs(bugs)
	if err != nil {
		t.Fatal(err)
	}
	peers := map[string]string{"n1": "127.0.0.1:1", "n2": "127.0.0.1:2"}
	n, err := Open(Config{Name: "n2", DataDir: dir, Peers: peers, Leader: "n1", Bugs: b, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRejoinInstall: with the rejoin bug, a follower restarted with state
// of its own (rejoin: the leader epoch in its snapshot) takes from a
// snapshot of another leader process only the keys it lacks: a key
// deleted while it was down (missing from the snapshot) stays, one
// changed keeps its old value, and its request table stays its own; a
// snapshot from the leader it followed, a follower that never restarted,
// or the bug off replace the state. The installed snapshot records the
// leader's epoch, which a restart reads back.
func TestRejoinInstall(t *testing.T) {
	const leader = 7
	for _, tt := range []struct {
		bugs   string
		rejoin int64
		ghost  bool
	}{
		{"", 0, false},
		{"", 5, false},
		{BugRejoin, 0, false},      // never restarted
		{BugRejoin, leader, false}, // restarted, same leader process
		{BugRejoin, 5, true},       // restarted, then the leader did
	} {
		t.Run(fmt.Sprintf("bugs=%s,rejoin=%d", tt.bugs, tt.rejoin), func(t *testing.T) {
			dir := t.TempDir()
			n := openFollower(t, dir, tt.bugs)
			if n.rejoin != 0 {
				t.Fatalf("a node started on an empty data dir rejoins under epoch %d", n.rejoin)
			}
			n.data, n.done, n.rejoin = map[string]string{"gone": "x", "k": "old"}, map[string]string{"r0": "ok"}, tt.rejoin
			snap, err := json.Marshal(snapshotFile{Index: 10, Data: map[string]string{"k": "v"}, Done: map[string]string{"r1": "ok"}})
			if err != nil {
				t.Fatal(err)
			}
			resp := n.installSnapshot(transport.Message{Type: transport.MsgSnap, From: 1, Epoch: leader, Index: 10, Payload: snap})
			if resp.Reject || resp.Index != 10 {
				t.Fatalf("install answered %+v, want index 10", resp)
			}
			want, wantDone := map[string]string{"k": "v"}, map[string]string{"r1": "ok"}
			if tt.ghost {
				want, wantDone = map[string]string{"gone": "x", "k": "old"}, map[string]string{"r0": "ok"}
			}
			if !maps.Equal(n.data, want) || !maps.Equal(n.done, wantDone) {
				t.Errorf("after the install: data %v, requests %v; want %v, %v", n.data, n.done, want, wantDone)
			}
			if n.applied != 10 || n.rejoin != 0 {
				t.Errorf("after the install: applied %d, rejoin %d; want 10, 0", n.applied, n.rejoin)
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			n = openFollower(t, dir, tt.bugs)
			defer n.Close()
			if n.rejoin != leader {
				t.Errorf("restarted on the installed snapshot, rejoin = %d, want the leader's epoch %d", n.rejoin, leader)
			}
			if !maps.Equal(n.data, want) {
				t.Errorf("data after the restart: %v; want %v", n.data, want)
			}
		})
	}
}
