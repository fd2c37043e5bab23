// Command node is one member of a small replicated key-value service built
// on github.com/hashicorp/raft, the way services built on it (Consul, Nomad,
// Vault, rqlite) use it: a raft-boltdb log and stable store, file
// snapshots, the TCP transport, and an HTTP API that forwards writes to the
// leader and offers stale, leader (VerifyLeader) and linearizable (Barrier)
// reads. Snapshot thresholds and trailing logs are small, so snapshots, log
// compaction and InstallSnapshot to a member that fell behind happen within
// a trial of a few seconds. The service is deliberately thin: gofault
// analyses and instruments hashicorp/raft and its stores, not this glue.
//
// Usage:
//
//	node --name n1 --dir DIR --raft-addr 127.0.0.1:7001 --http-addr 127.0.0.1:8001 \
//	     --peers n1=127.0.0.1:7001=127.0.0.1:8001,n2=…,n3=…
//
// A member without raft state bootstraps the cluster from --peers (every
// member does, with the same configuration, which raft allows); a member
// restarted on its data dir resumes from its log and snapshots.
//
// The HTTP API (docs in http.go): GET /health, GET /status, GET/PUT/DELETE
// /kv/{key} (GET takes ?read=stale|leader|linearizable, default
// linearizable), POST /cas/{key}?expect=V. Writes carry their request ID in
// the X-Request-ID header; the state machine counts how often each ID was
// applied, so the workload can tell a write lost or applied twice.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb"
)

// peer is one member of the cluster, from --peers.
type peer struct {
	id       raft.ServerID
	raftAddr raft.ServerAddress
	httpAddr string
}

// parsePeers reads "n1=raftaddr=httpaddr,…".
func parsePeers(s string) ([]peer, error) {
	var ps []peer
	for _, p := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(p), "=")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return nil, fmt.Errorf("--peers: %q is not name=raft-addr=http-addr", p)
		}
		ps = append(ps, peer{raft.ServerID(parts[0]), raft.ServerAddress(parts[1]), parts[2]})
	}
	return ps, nil
}

func main() {
	name := flag.String("name", "", "this member's name (its raft server ID), one of --peers")
	dir := flag.String("dir", "", "data directory (raft log, stable store, snapshots)")
	raftAddr := flag.String("raft-addr", "", "address of the raft TCP transport")
	httpAddr := flag.String("http-addr", "", "address of the HTTP API")
	peersFlag := flag.String("peers", "", "every member: name=raft-addr=http-addr,…")
	logLevel := flag.String("log-level", "info", "hclog level: trace, debug, info, warn, error")
	threshold := flag.Uint64("snapshot-threshold", 64, "log entries since the last snapshot that trigger one")
	trailing := flag.Uint64("trailing-logs", 32, "log entries kept after a snapshot")
	snapEvery := flag.Duration("snapshot-interval", 500*time.Millisecond, "how often to check whether to snapshot")
	election := flag.Duration("election-timeout", 500*time.Millisecond, "heartbeat and election timeout")
	flag.Parse()
	peers, err := parsePeers(*peersFlag)
	if err != nil || *name == "" || *dir == "" || *raftAddr == "" || *httpAddr == "" {
		fmt.Fprintln(os.Stderr, "node: --name, --dir, --raft-addr, --http-addr and --peers are required", err)
		os.Exit(2)
	}
	windows, writing := &adminWindows{}, newWritingSnapshots()
	logger := adminLogger{hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.LevelFromString(*logLevel), Output: os.Stderr}), windows, writing}
	cfg := raft.DefaultConfig()
	cfg.LocalID = raft.ServerID(*name)
	cfg.Logger = logger
	cfg.HeartbeatTimeout = *election
	cfg.ElectionTimeout = *election
	cfg.LeaderLeaseTimeout = *election / 2
	cfg.CommitTimeout = 20 * time.Millisecond
	cfg.SnapshotThreshold = *threshold
	cfg.TrailingLogs = *trailing
	cfg.SnapshotInterval = *snapEvery
	// A member removed by an admin call (POST /admin/membership) stays
	// up, to be added back.
	cfg.ShutdownOnRemove = false
	srv, err := start(cfg, *dir, *raftAddr, peers, logger, writing)
	if err != nil {
		logger.Error("start failed", "error", err)
		os.Exit(1)
	}
	srv.windows = windows
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		logger.Error("listen failed", "error", err)
		os.Exit(1)
	}
	hs := &http.Server{Handler: srv.handler(), ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.NewTextHandler(os.Stderr, nil), slog.LevelDebug)}
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("http server failed", "error", err)
			os.Exit(1)
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	hs.Close()
	if err := srv.raft.Shutdown().Error(); err != nil {
		logger.Error("shutdown failed", "error", err)
	}
	srv.store.Close()
}

// server is one member: its raft, state machine and store.
type server struct {
	id    raft.ServerID
	raft  *raft.Raft
	fsm   *fsm
	store *raftboltdb.BoltStore
	peers []peer
	http  *http.Client // forwards requests to the leader
	// writes is held shared by the leader's writes and consistent reads,
	// exclusively by a restore (admin.go), which must not undo a write.
	writes sync.RWMutex
	// adminBusy is held by the admin call the leader is running.
	adminBusy sync.Mutex
	// windows are the admin operations in progress, for adminLogger
	// (nil: not kept).
	windows *adminWindows
	// electionTimeout is the member's election timeout as configured
	// (raft.Config.ElectionTimeout; the node never reloads it).
	electionTimeout time.Duration
}

// start opens the member's stores and transport, starts raft, and
// bootstraps the cluster when the member has no state yet. writing, when
// not nil, is kept up to date with the snapshots being written.
func start(cfg *raft.Config, dir, raftAddr string, peers []peer, logger hclog.Logger, writing *writingSnapshots) (*server, error) {
	store, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		return nil, fmt.Errorf("bolt store: %w", err)
	}
	files, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, logger)
	if err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	var snaps raft.SnapshotStore = files
	if writing != nil {
		snaps = trackingSnapshotStore{files, writing}
	}
	addr, err := net.ResolveTCPAddr("tcp", raftAddr)
	if err != nil {
		return nil, err
	}
	trans, err := raft.NewTCPTransportWithLogger(raftAddr, addr, 3, 2*time.Second, logger)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	existing, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		return nil, err
	}
	f := newFSM()
	r, err := raft.NewRaft(cfg, f, store, store, snaps, trans)
	if err != nil {
		return nil, err
	}
	if !existing {
		var conf raft.Configuration
		for _, p := range peers {
			conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: p.id, Address: p.raftAddr})
		}
		if err := r.BootstrapCluster(conf).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return nil, fmt.Errorf("bootstrap: %w", err)
		}
	}
	return &server{id: cfg.LocalID, raft: r, fsm: f, store: store, peers: peers, http: &http.Client{Timeout: forwardTimeout}, electionTimeout: cfg.ElectionTimeout}, nil
}
