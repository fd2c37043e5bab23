package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCommitRule: the leader commits what a majority stored; with the
// waitall bug only what every member stored, so one follower that stored
// nothing holds back every entry the other one has.
func TestCommitRule(t *testing.T) {
	tests := []struct {
		name    string
		bugs    string
		matches []uint64 // the followers' stored indices
		want    uint64
	}{
		{"majority: one follower behind", "", []uint64{5, 0}, 5},
		{"majority: followers apart", "", []uint64{3, 5}, 5},
		{"majority: none stored", "", []uint64{0, 0}, 0},
		{"waitall: one follower behind", BugWaitAll, []uint64{5, 0}, 0},
		{"waitall: followers apart", BugWaitAll, []uint64{3, 5}, 3},
		{"waitall: both stored", BugWaitAll, []uint64{5, 5}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bugs, err := ParseBugs(tt.bugs)
			if err != nil {
				t.Fatal(err)
			}
			n := &Node{bugs: bugs, role: roleLeader, entries: make([]Entry, 5), kick: make(chan struct{}, 1)}
			for i, m := range tt.matches {
				n.peers = append(n.peers, &peer{name: string(rune('b' + i)), match: m})
			}
			n.advanceCommit()
			if n.commit != tt.want {
				t.Errorf("commit %d with followers at %v, want %d", n.commit, tt.matches, tt.want)
			}
		})
	}
}

// TestRestream restarts the follower of a two-member cluster: the leader
// replaces its replication stream to it, and without the restream bug the
// old stream ends (one stream); with it the old one goes on (two), and the
// writes after the restart still succeed on both members.
func TestRestream(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster on local sockets")
	}
	for _, tt := range []struct {
		bugs    string
		streams int32
	}{{"", 1}, {BugRestream, 2}} {
		t.Run("bugs="+tt.bugs, func(t *testing.T) {
			bugs, err := ParseBugs(tt.bugs)
			if err != nil {
				t.Fatal(err)
			}
			peers := map[string]string{}
			lns := map[string]net.Listener{}
			for _, name := range []string{"n1", "n2"} {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				lns[name], peers[name] = ln, ln.Addr().String()
			}
			dir := t.TempDir()
			start := func(name string, ln net.Listener) (*Node, func()) {
				n, err := Open(Config{Name: name, DataDir: filepath.Join(dir, name), Peers: peers, Leader: "n1", Bugs: bugs,
					Log: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				srv := &http.Server{Handler: n.Handler()}
				go srv.Serve(ln)
				n.Start()
				return n, func() { srv.Close(); n.Close() }
			}
			leader, stop1 := start("n1", lns["n1"])
			defer stop1()
			_, stop2 := start("n2", lns["n2"])
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			write := func(i int) {
				t.Helper()
				if _, err := leader.Write(ctx, Entry{ID: fmt.Sprintf("w%d", i), Op: "put", Key: "k", Value: fmt.Sprint(i)}); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
			}
			write(1)
			stop2()
			ln, err := net.Listen("tcp", peers["n2"])
			if err != nil {
				t.Fatal(err)
			}
			follower, stop2 := start("n2", ln)
			defer stop2()
			p := leader.peers[0]
			deadline := time.Now().Add(10 * time.Second)
			for {
				leader.mu.Lock()
				seen := p.epoch == follower.epoch
				leader.mu.Unlock()
				if seen {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the leader never heard from the restarted follower")
				}
				time.Sleep(20 * time.Millisecond)
			}
			write(2)
			time.Sleep(200 * time.Millisecond) // the old stream's exit
			if got := p.streams.Load(); got != tt.streams {
				t.Errorf("%d replication streams to the restarted follower, want %d", got, tt.streams)
			}
			if err := follower.waitApplied(ctx, 2); err != nil {
				t.Fatalf("the restarted follower did not apply the write after its restart: %v", err)
			}
		})
	}
}

// TestCheckStreams: the leader's stream count reports each follower that
// more than one stream serves, and nothing when each has one.
func TestCheckStreams(t *testing.T) {
	for _, tt := range []struct {
		name    string
		streams []int32
		want    []string
	}{
		{"one each", []int32{1, 1}, nil},
		{"a leak", []int32{1, 2}, []string{"peer=b streams=2"}},
		{"two leaks", []int32{3, 2}, []string{"peer=a streams=3", "peer=b streams=2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			n := &Node{log: slog.New(slog.NewTextHandler(&buf, nil))}
			for i, k := range tt.streams {
				p := &peer{name: string(rune('a' + i))}
				p.streams.Store(k)
				n.peers = append(n.peers, p)
			}
			n.checkStreams()
			n.checkStreams() // within streamCheckEvery: nothing more
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if buf.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tt.want) {
				t.Fatalf("logged %q, want %d lines", lines, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], "level=ERROR") || !strings.Contains(lines[i], w) {
					t.Errorf("line %q, want an error with %q", lines[i], w)
				}
			}
		})
	}
}
