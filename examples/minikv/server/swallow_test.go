package server

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"
)

// TestSwallowForward: a follower whose forwarded write fails (the leader
// refuses the connection) answers the write with the error, and with
// swallow as applied.
func TestSwallowForward(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	leader := ln.Addr().String()
	ln.Close() // nothing listens: the forward's connection is refused
	for _, tt := range []struct {
		bugs    string
		applied bool
	}{{"", false}, {BugSwallow, true}} {
		t.Run("bugs="+tt.bugs, func(t *testing.T) {
			bugs, err := ParseBugs(tt.bugs)
			if err != nil {
				t.Fatal(err)
			}
			n, err := Open(Config{Name: "n2", DataDir: t.TempDir(), Peers: map[string]string{"n1": leader, "n2": "127.0.0.1:1"},
				Leader: "n1", Bugs: bugs, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer n.wal.f.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err = n.Write(ctx, Entry{ID: "w1", Op: "put", Key: "k", Value: "v"})
			if applied := err == nil; applied != tt.applied {
				t.Errorf("forwarded write to a leader that refuses it: error %v, want applied = %v", err, tt.applied)
			}
		})
	}
}
