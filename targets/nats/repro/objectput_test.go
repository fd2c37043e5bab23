package repro

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestObjectPutResendsReusedChunk reproduces N4 of docs/found.md
// (nats.go v1.55.0): ObjectStore.Put publishes every chunk asynchronously
// from one *nats.Msg whose Data it points at one reused read buffer. When
// a chunk's publish is answered "no responders" (503: the stream had no
// interest at that server for a moment, as during a leader change or just
// after the bucket was created), the async publisher resends that same
// *nats.Msg 250 ms later — which by then carries the last chunk's bytes.
// Put returns success and stores the object's metadata with the digest of
// the data given; every read of the object then fails with
// ErrDigestMismatch.
//
// The 503 is made deterministic by taking the chunk subjects away from the
// bucket's stream while the chunks are published (PutResent).
func TestObjectPutResendsReusedChunk(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "B"})
	if err != nil {
		t.Fatal(err)
	}
	// Four chunks of distinct bytes.
	const chunk = 1024
	data := make([]byte, 4*chunk)
	for i := range data {
		data[i] = byte(i / chunk)
	}
	anc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer anc.Close()
	admin, err := jetstream.New(anc)
	if err != nil {
		t.Fatal(err)
	}
	meta := jetstream.ObjectMeta{Name: "o", Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}
	if _, err := PutResent(ctx, nc, admin, obs, meta, data, 4); err != nil {
		t.Fatalf("Put: %v (the resend was not reached: no bug shown)", err)
	}
	res, err := obs.Get(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(res)
	res.Close()
	switch {
	case errors.Is(err, jetstream.ErrDigestMismatch):
		t.Logf("reproduced: Put succeeded, the read back fails: %v; %d bytes read, first byte of each chunk: %v", err, len(got), firsts(got, chunk))
	case err != nil:
		t.Fatalf("read back: %v", err)
	case bytes.Equal(got, data):
		t.Fatal("not reproduced: the object reads back whole; nats.go no longer resends a reused chunk (update docs/found.md N4 and the workload's resendShape)")
	default:
		t.Fatalf("read back %d bytes, not the data put, without a digest error", len(got))
	}
}

// firsts is the first byte of every chunk of b.
func firsts(b []byte, chunk int) []byte {
	var f []byte
	for i := 0; i < len(b); i += chunk {
		f = append(f, b[i])
	}
	return f
}
