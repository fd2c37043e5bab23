// Command node runs one minikv replica.
//
//	node --name n1 --data-dir /tmp/n1 --listen 127.0.0.1:7001 \
//	     --peers n1=127.0.0.1:7001,n2=127.0.0.1:7002,n3=127.0.0.1:7003
//
// The first node of --peers (or --leader) is the static leader. --bugs (or
// the MINIKV_BUGS environment variable) enables planted bugs: a comma list
// of snapshot, rotate, fence, retry, split, or all; the default is none.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofault/gofault/examples/minikv/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "minikv:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		name      = flag.String("name", "", "this node's name, as in --peers")
		dataDir   = flag.String("data-dir", "", "directory of the log and snapshots")
		listen    = flag.String("listen", "", "host:port of the HTTP API")
		peers     = flag.String("peers", "", "every node as name=host:port, comma separated")
		leader    = flag.String("leader", "", "the static leader's name (default: first of --peers)")
		bugs      = flag.String("bugs", os.Getenv("MINIKV_BUGS"), "planted bugs to enable: "+strings.Join(server.AllBugs, ",")+", all (default $MINIKV_BUGS)")
		snapEvery = flag.Uint64("snap-every", envInt("MINIKV_SNAP_EVERY"), "applied entries between snapshots (default $MINIKV_SNAP_EVERY or 120)")
		keep      = flag.Uint64("compact-keep", envInt("MINIKV_COMPACT_KEEP"), "entries a snapshot leaves in memory for slow followers; one further behind gets a snapshot (default $MINIKV_COMPACT_KEEP or 64)")
		segment   = flag.Int64("segment-bytes", int64(envInt("MINIKV_SEGMENT_BYTES")), "WAL segment size (default $MINIKV_SEGMENT_BYTES or 6 KiB)")
		verbose   = flag.Bool("v", false, "debug logs")
		// The leader timeout's default is left to the server (1.5 s).
		leaderTimeout = flag.Duration("leader-timeout", 0, "a follower declares the leader lost after this silence (default $MINIKV_LEADER_TIMEOUT or 1.5s)")
	)
	flag.Parse()
	if v := os.Getenv("MINIKV_LEADER_TIMEOUT"); v != "" && *leaderTimeout == 0 {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("MINIKV_LEADER_TIMEOUT=%q: want a positive duration such as 2500ms", v)
		}
		*leaderTimeout = d
	}
	var leaseReads time.Duration
	if v := os.Getenv("MINIKV_LEASE_READS"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("MINIKV_LEASE_READS=%q: want a duration such as 300ms (0: no read leases)", v)
		}
		leaseReads = d
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("node", *name)

	if *name == "" || *dataDir == "" || *listen == "" || *peers == "" {
		return errors.New("--name, --data-dir, --listen and --peers are required")
	}
	pm, order, err := parsePeers(*peers)
	if err != nil {
		return err
	}
	if *leader == "" {
		*leader = order[0]
	}
	b, err := server.ParseBugs(*bugs)
	if err != nil {
		return err
	}
	if names := b.Names(); len(names) > 0 {
		log.Info("planted bugs enabled", "bugs", strings.Join(names, ","))
	}
	n, err := server.Open(server.Config{
		Name: *name, DataDir: *dataDir, Peers: pm, Leader: *leader,
		Bugs: b, Log: log, SnapEvery: *snapEvery, CompactKeep: *keep, SegmentBytes: *segment,
		LeaderTimeout: *leaderTimeout, LogReads: os.Getenv("MINIKV_LOG_READS") == "1", LeaseReads: leaseReads,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		n.Close()
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: n.Handler(), ReadHeaderTimeout: 5 * time.Second}
	n.Start()
	log.Info("serving", "listen", *listen, "leader", *leader)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		n.Close()
		return fmt.Errorf("serve: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return n.Close()
}

// envInt reads a non-negative integer from the environment; unset or
// malformed is 0 (the default).
func envInt(name string) uint64 {
	n, err := strconv.ParseUint(os.Getenv(name), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// parsePeers parses name=host:port,... into a map and the names in order.
func parsePeers(s string) (map[string]string, []string, error) {
	m := map[string]string{}
	var order []string
	for _, p := range strings.Split(s, ",") {
		name, addr, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || name == "" || addr == "" {
			return nil, nil, fmt.Errorf("--peers: %q is not name=host:port", p)
		}
		if _, dup := m[name]; dup {
			return nil, nil, fmt.Errorf("--peers: %s listed twice", name)
		}
		m[name] = addr
		order = append(order, name)
	}
	return m, order, nil
}
