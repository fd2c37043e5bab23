package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
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
