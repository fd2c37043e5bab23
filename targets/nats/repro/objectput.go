// Package repro holds standalone reproductions of the bugs gofault found in
// NATS (docs/found.md): each test runs a real nats-server in process and
// nats.go, with no gofault in between, and fails when the bug no longer
// shows (upstream fixed it: the workload's handling of it can go).
package repro

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StartServer starts a real nats-server in this process, JetStream on,
// storing under dir, and waits until it takes connections; Shutdown ends
// it.
func StartServer(dir string) (*server.Server, error) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		return nil, err
	}
	if err := run(s); err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	return s, nil
}

// run starts s and waits until it takes connections; s is shut down
// when it does not within 10 s.
func run(s *server.Server) error {
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return fmt.Errorf("not ready for connections after 10s")
	}
	return nil
}

// PutResent puts data as object meta into obs, a bucket of nc's JetStream,
// while its chunks' publishes meet "no responders", so that nats.go
// resends them (docs/found.md N4). admin, on another connection, takes the
// chunk subjects from the bucket's stream (the metadata subject stays),
// and gives them back once nc has received a reply to each of the chunks'
// publishes (chunks of them, the 503s) — before the resends, which nats.go
// makes 250 ms after each 503, twice at most.
func PutResent(ctx context.Context, nc *nats.Conn, admin jetstream.JetStream, obs jetstream.ObjectStore, meta jetstream.ObjectMeta, data []byte, chunks int) (*jetstream.ObjectInfo, error) {
	status, err := obs.Status(ctx)
	if err != nil {
		return nil, err
	}
	bucket := status.Bucket()
	stream, err := admin.Stream(ctx, "OBJ_"+bucket)
	if err != nil {
		return nil, err
	}
	cfg := stream.CachedInfo().Config
	subjects := cfg.Subjects
	cfg.Subjects = []string{"$O." + bucket + ".M.>"}
	if _, err := admin.UpdateStream(ctx, cfg); err != nil {
		return nil, fmt.Errorf("take the chunk subjects away: %w", err)
	}
	in := nc.Stats().InMsgs
	restored := make(chan error, 1)
	go func() {
		// Put's info lookup is answered once, then each chunk with a 503.
		for nc.Stats().InMsgs < in+1+uint64(chunks) && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cfg.Subjects = subjects
		_, err := admin.UpdateStream(ctx, cfg)
		restored <- err
	}()
	info, err := obs.Put(ctx, meta, bytes.NewReader(data))
	if rerr := <-restored; rerr != nil {
		return nil, fmt.Errorf("give the chunk subjects back: %w", rerr)
	}
	return info, err
}
