package repro

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestObjectGetFromCatchingUpReplica reproduces N7 of docs/found.md
// (nats-server v2.15.3, nats.go v1.55.0): ObjectStore.Get reads the
// object's chunks through an ordered consumer — an ephemeral, R1, memory
// consumer that the meta leader places on any of the stream's peers
// (createGroupForConsumer: a random one of those its meta group thinks
// caught up) — and stops at the first chunk whose NumPending is 0. Placed
// on a replica still catching up after a restart, the consumer counts
// pending from that replica's store: it delivers the chunks the replica
// holds, the last with NumPending 0, and Get ends there with
// ErrDigestMismatch, right after Put succeeded. The same object reads back
// whole from a consumer placed elsewhere, and from any once the replica
// caught up.
//
// Ordinary means only: the object's source is slow (GateReader), and one
// replica, f, is restarted while Put waits on it — after the first two
// chunks reached f, before the last two and the metadata were put. Right
// after f is back, twelve concurrent Gets through the stream's leader
// each get their own consumer; those placed on f read two chunks.
func TestObjectGetFromCatchingUpReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, meta, _, js := startCluster(t)
	if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "OBJ", Replicas: 3, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, "OBJ_OBJ")
	if err != nil {
		t.Fatal(err)
	}
	// l leads the stream; f, the replica restarted, leads nothing.
	l, f := -1, -1
	for i := range c.Servers() {
		switch {
		case c.Server(i).Name() == stream.CachedInfo().Cluster.Leader:
			l = i
		case i != meta && f < 0:
			f = i
		}
	}
	if l < 0 || f < 0 {
		t.Fatalf("setup: no stream leader and other replica among %d servers", c.Servers())
	}
	fname := c.Server(f).Name()
	lnc, ljs := connect(t, c.Server(l))
	defer lnc.Close()
	obs, err := ljs.ObjectStore(ctx, "OBJ")
	if err != nil {
		t.Fatal(err)
	}
	const chunk, chunks, gets, cycles = 16 * 1024, 4, 12, 3
	for cycle := range cycles {
		name := fmt.Sprintf("o%d", cycle)
		data := make([]byte, chunks*chunk)
		_, _ = rand.Read(data)
		held := putAcrossRestart(ctx, t, c, f, obs, name, data, chunk)
		fails, fine := getConcurrently(ctx, t, obs, name, data, chunk, gets)
		t.Logf("cycle %d: %s held %d of the %d chunks when it restarted; %d of %d concurrent Gets through %s failed with ErrDigestMismatch, having read %v chunks; %d read it whole",
			cycle, fname, held, chunks, len(fails), gets, c.Server(l).Name(), fails, fine)
		if len(fails) > 0 {
			for _, n := range fails {
				if n != held {
					t.Errorf("a failed Get read %d chunks, not the %d %s held: not the shape of a consumer on %s", n, held, fname, fname)
				}
			}
			return
		}
	}
	t.Fatalf("not reproduced in %d cycles of %d Gets: no Get failed its digest after %s restarted; nats-server may no longer serve an ephemeral consumer from a replica that is catching up (update docs/found.md N7)", cycles, gets, fname)
}

// putAcrossRestart puts data as object name into obs in chunk-sized
// chunks, stopping replica f once the first two chunks reached it, then
// putting the rest of the object (the other two replicas store it), and
// starting f again. It returns how many of the object's chunks f held.
func putAcrossRestart(ctx context.Context, t *testing.T, c *Cluster, f int, obs jetstream.ObjectStore, name string, data []byte, chunk int) int {
	t.Helper()
	const gate = 2 // chunks
	status, err := obs.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := status.(*jetstream.ObjectBucketStatus).StreamInfo().State.LastSeq
	g := NewGateReader(bytes.NewReader(data), gate*chunk)
	opened := false
	defer func() { // a failed setup does not leave Put waiting
		if !opened {
			close(g.Open)
		}
	}()
	put := make(chan error, 1)
	go func() {
		_, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: uint32(chunk)}}, g)
		put <- err
	}()
	select {
	case <-g.At:
	case err := <-put:
		t.Fatalf("setup: Put of %s ended before its gate: %v", name, err)
	}
	if err := WaitFor(10*time.Second, fmt.Sprintf("%d chunks of %s on %s", gate, name, c.Server(f).Name()), func() bool {
		return c.LastSeq(f, "OBJ_OBJ") >= base+gate
	}); err != nil {
		t.Fatalf("setup: %v", err)
	}
	held := int(c.LastSeq(f, "OBJ_OBJ") - base)
	c.Stop(f)
	opened = true
	close(g.Open)
	if err := <-put; err != nil {
		t.Fatalf("setup: Put of %s: %v", name, err)
	}
	if err := c.Start(f); err != nil {
		t.Fatal(err)
	}
	return held
}

// getConcurrently reads object name back through n concurrent Gets; it
// returns, for each Get that failed with ErrDigestMismatch, how many whole
// chunks it had read, and how many Gets read data back whole.
func getConcurrently(ctx context.Context, t *testing.T, obs jetstream.ObjectStore, name string, data []byte, chunk, n int) (fails []int, fine int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			gctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			res, err := obs.Get(gctx, name)
			var got []byte
			if err == nil {
				got, err = io.ReadAll(res)
				_ = res.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, jetstream.ErrDigestMismatch):
				fails = append(fails, len(got)/chunk)
			case err != nil:
				t.Errorf("Get %s: %v", name, err)
			case !bytes.Equal(got, data):
				t.Errorf("Get %s: %d bytes read without an error, not the data put", name, len(got))
			default:
				fine++
			}
		})
	}
	wg.Wait()
	return fails, fine
}
