// Command node is one nats-server for gofault campaigns (targets/nats):
// what nats-server's own main does, for a JetStream cluster member, so that
// the server package is what gofault analyses, instruments and runs.
// nats-server keeps its main in the module's root package, which cannot be
// imported; this one builds server.Options from a few flags instead of the
// server's full flag and config-file parsing:
//
//	node --name=n1 --host=127.0.0.1 --port=4222 --cluster-port=6222 \
//	     --http-port=8222 --dir=/data/n1 \
//	     --routes=nats://127.0.0.1:6222,nats://127.0.0.1:6223,nats://127.0.0.1:6224
//
// It starts the server with JetStream on (its store under --dir), waits
// until the server accepts connections, and shuts it down cleanly on
// SIGTERM or SIGINT. A route to the node itself is harmless: nats-server
// detects and drops it, so every member gets the same --routes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		slog.Error("nats node", "err", err)
		os.Exit(1)
	}
}

// flags is the node's command line.
type flags struct {
	name, host, dir, routes, cluster string
	port, clusterPort, httpPort      int
	maxStore                         int64
	ready                            time.Duration
	debug                            bool
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	fs.StringVar(&f.name, "name", "", "server name (unique in the cluster)")
	fs.StringVar(&f.host, "host", "127.0.0.1", "address every listener binds")
	fs.IntVar(&f.port, "port", 4222, "client port")
	fs.IntVar(&f.clusterPort, "cluster-port", 6222, "cluster (route) port")
	fs.IntVar(&f.httpPort, "http-port", 8222, "monitoring HTTP port (/healthz, /jsz)")
	fs.StringVar(&f.cluster, "cluster-name", "gofault", "cluster name")
	fs.StringVar(&f.routes, "routes", "", "comma-separated route URLs of the cluster's members (this one may be among them)")
	fs.StringVar(&f.dir, "dir", "", "data dir; the JetStream store is <dir>/jetstream")
	fs.Int64Var(&f.maxStore, "max-store", 1<<30, "JetStream file store limit in bytes")
	fs.DurationVar(&f.ready, "ready-timeout", 30*time.Second, "how long to wait for the server to accept connections")
	fs.BoolVar(&f.debug, "debug", false, "debug logging")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.name == "" || f.dir == "" {
		return f, errors.New("--name and --dir are required")
	}
	return f, nil
}

// options builds the server's options from the flags.
func options(f flags) (*server.Options, error) {
	var routes []*url.URL
	for r := range strings.SplitSeq(f.routes, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("route %q: %w", r, err)
		}
		routes = append(routes, u)
	}
	return &server.Options{
		ServerName: f.name,
		Host:       f.host,
		Port:       f.port,
		HTTPHost:   f.host,
		HTTPPort:   f.httpPort,
		Cluster: server.ClusterOpts{
			Name: f.cluster,
			Host: f.host,
			Port: f.clusterPort,
		},
		Routes:            routes,
		JetStream:         true,
		StoreDir:          f.dir, // the server adds "jetstream"
		JetStreamMaxStore: f.maxStore,
		// Memory streams are not used; a small limit keeps three members
		// on one machine from each reserving a share of its RAM.
		JetStreamMaxMemory: 64 << 20,
		Debug:              f.debug,
		Logtime:            true,
		LogtimeUTC:         true,
		// Signals are this program's: shut down, then return from main.
		NoSigs: true,
	}, nil
}

func run(args []string) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	opts, err := options(f)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("new server %s: %w", f.name, err)
	}
	s.ConfigureLogger()
	s.Start()
	if !s.ReadyForConnections(f.ready) {
		s.Shutdown()
		return fmt.Errorf("server %s not ready for connections within %s", f.name, f.ready)
	}
	done := make(chan struct{})
	go func() {
		s.WaitForShutdown()
		close(done)
	}()
	select {
	case <-ctx.Done():
		s.Noticef("Shutting down on signal")
		s.Shutdown()
		<-done
		return nil
	case <-done:
		return errors.New("server shut down by itself")
	}
}
