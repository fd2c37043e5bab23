package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"go.yaml.in/yaml/v3"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/fleet"
)

func init() {
	register(command{
		name:    "worker",
		summary: "run the trials of the campaigns queued on NATS JetStream (gofault run --queue)",
		run:     runWorker,
	})
}

// queueFlags are the flags of the commands that meet on a NATS JetStream
// server: its address and how to prove who they are.
type queueFlags struct {
	url, token, creds *string
}

func addQueueFlags(fs *flag.FlagSet) *queueFlags {
	return &queueFlags{
		url:   fs.String("queue", "", "NATS JetStream server of a distributed campaign, nats://HOST:PORT (docs/distributed.md)"),
		token: fs.String("queue-token", os.Getenv("GOFAULT_QUEUE_TOKEN"), "the server's auth token (default $GOFAULT_QUEUE_TOKEN); an embedded server requires it"),
		creds: fs.String("queue-creds", "", "a NATS credentials file, for a server run with accounts"),
	}
}

func (q *queueFlags) auth() fleet.Auth { return fleet.Auth{Token: *q.token, Creds: *q.creds} }

// coordinate sets up the coordinator of a distributed campaign of cfg
// (loaded from path):
// the bundle (given, or written into the work dir), the server (embedded
// when none answers), the coordinator. It returns what the campaign runs,
// the remote, and a function that closes both.
func coordinate(ctx context.Context, q *queueFlags, bf *buildFlags, cf *configFlags, path string, cfg *config.Config, slots int) (*build.Built, engine.Remote, func(), error) {
	work := cfg.Path(cfg.WorkDir)
	raw, err := config.Load(path, cf.sets...)
	if err != nil {
		return nil, nil, nil, err
	}
	conf := *raw
	conf.WorkDir = "" // the worker's own
	confYAML, err := yaml.Marshal(&conf)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("queue: config: %w", err)
	}
	dir := *bf.bundle
	if dir == "" {
		dir = filepath.Join(work, "bundle")
		if _, err := build.WriteBundle(ctx, cfg, raw, dir, build.Options{Rebuild: *bf.rebuild}); err != nil {
			return nil, nil, nil, err
		}
	}
	bd, err := build.OpenBundle(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	bt, err := bd.Built(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	co, stop, err := fleet.DialCoordinator(ctx, *q.url, q.auth(), filepath.Join(work, "nats"), fleet.CoordinatorOptions{Bundle: dir, Config: confYAML, Catalog: bt.Catalog, Slots: slots, Log: slog.Default()})
	if err != nil {
		return nil, nil, nil, err
	}
	return bt, co, stop, nil
}

func runWorker(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("worker", os.Stderr)
	q := addQueueFlags(fs)
	parallel := countFlag(fs, "parallel", "trials run at once, at least 1 (default 1)")
	dir := fs.String("dir", "", "where bundles and trials go (default: the user's cache dir, gofault/worker)")
	name := fs.String("name", "", "the worker's name in the coordinator's log (default host:pid)")
	ackWait := fs.Duration("ack-wait", 30*time.Second, "a trial whose worker shows no sign of life this long goes to another worker (shared by all the workers of a server: the last one started sets it)")
	hostIdle := fs.Duration("host-idle", 10*time.Minute, "a campaign that sent no trial here this long has its runner, work dir and bundle removed (a later trial of it fetches them again)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *q.url == "" {
		return fmt.Errorf("%w: --queue nats://HOST:PORT is required", errUsage)
	}
	if *hostIdle <= 0 {
		return fmt.Errorf("%w: --host-idle must be positive (got %s), e.g. --host-idle 10m", errUsage, *hostIdle)
	}
	if *dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("worker dir: %w (give --dir)", err)
		}
		*dir = filepath.Join(cache, "gofault", "worker")
	}
	conn, err := dialRetry(ctx, q)
	if err != nil {
		return err
	}
	defer conn.Close()
	err = fleet.Work(ctx, conn, fleet.WorkerOptions{Parallel: int(*parallel), Dir: *dir, Name: *name, AckWait: *ackWait, HostIdle: *hostIdle, Log: slog.Default()})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// dialRetry connects a worker, waiting for a server that is not up yet (a
// worker may start before its coordinator).
func dialRetry(ctx context.Context, q *queueFlags) (*fleet.Conn, error) {
	for logged := false; ; logged = true {
		conn, err := fleet.Dial(*q.url, q.auth(), "", slog.Default())
		if err == nil || !errors.Is(err, nats.ErrNoServers) {
			return conn, err
		}
		if !logged {
			slog.Info("queue: no server answers yet; waiting", "queue", *q.url)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
