package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/targets/nats/repro"
	"github.com/nats-io/nats.go/jetstream"
)

// chunks digests one chunk per byte value: chunks(0, 1, 2) is three
// distinct chunks, chunks(2, 2) the third twice.
func chunks(ids ...byte) [][sha256.Size]byte {
	out := make([][sha256.Size]byte, len(ids))
	for i, id := range ids {
		out[i] = sha256.Sum256([]byte{id})
	}
	return out
}

func TestResendShape(t *testing.T) {
	put := chunks(0, 1, 2, 3)
	for _, tc := range []struct {
		name   string
		put    [][sha256.Size]byte
		stored [][sha256.Size]byte
		want   bool
	}{
		{"every chunk resent (the reproduction)", put, chunks(3, 3, 3, 3), true},
		{"one chunk resent after the rest", put, chunks(0, 2, 3, 3), true},
		{"the first two resent", put, chunks(2, 3, 3, 3), true},
		// Server bugs the shape must not hide.
		{"whole (no mismatch to explain)", put, put, false},
		{"a chunk lost", put, chunks(0, 1, 3), false},
		{"a chunk of other bytes", put, chunks(0, 9, 2, 3), false},
		{"two chunks swapped", put, chunks(1, 0, 2, 3), false},
		{"a chunk other than the last duplicated", put, chunks(0, 0, 2, 3), false},
		{"a chunk too many", put, chunks(0, 1, 2, 3, 3), false},
		{"one chunk put: a resend carries the same bytes", chunks(0), chunks(5), false},
	} {
		if got := resendShape(tc.put, tc.stored); got != tc.want {
			t.Errorf("%s: resendShape = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestJudgeMismatch(t *testing.T) {
	put := objectPut{chunks: chunks(0, 1, 2, 3)}
	f := finding{check: checkObjectMismatch, msg: "object o in OBJ: the content read back does not match its digest"}
	fs, err := judgeMismatch(f, "o", put, chunks(0, 3, 3, 3), nil)
	var re *resendError
	if len(fs) != 0 || !errors.As(err, &re) || re.copies != 2 || !strings.Contains(err.Error(), "N4") {
		t.Errorf("resend: findings %v, err %v; want none and a resendError naming N4 with 2 copies", fs, err)
	}
	fs, err = judgeMismatch(f, "o", put, chunks(0, 9, 2, 3), nil)
	if err != nil || len(fs) != 1 || !strings.Contains(fs[0].msg, "4 chunks put, 4 stored, 3 of them as put in place") {
		t.Errorf("a corrupt chunk: findings %v, err %v; want the finding with the chunk counts", fs, err)
	}
	fs, err = judgeMismatch(f, "o", put, nil, errors.New("nats: timeout"))
	if err != nil || len(fs) != 1 || !strings.Contains(fs[0].msg, "could not be read") {
		t.Errorf("chunks unread: findings %v, err %v; want the finding, saying so", fs, err)
	}
}

// TestObjectResendJudged: an object stored by nats.go's resend of a reused
// chunk (made as targets/nats/repro does, on a real nats-server) is read
// back as a digest mismatch (repro.PutResent) and, once its stored chunks are read, judged
// the client's (no finding); an object whose stored chunk the test then
// replaces with other bytes — a server that corrupted it — is a finding.
func TestObjectResendJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nats-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := startServer(t)
	nc, js := connectJS(t, s)
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: objBucket})
	if err != nil {
		t.Fatal(err)
	}
	c := &client{nc: nc, js: js, obj: obs}
	data := bytes.Repeat([]byte{0}, 3*objChunk+100)
	for i := range data {
		data[i] = byte(i / objChunk)
	}
	put := newObjectPut(data)
	meta := jetstream.ObjectMeta{Name: "resent", Opts: &jetstream.ObjectMetaOptions{ChunkSize: objChunk}}

	_, admin := connectJS(t, s)
	if _, err := repro.PutResent(ctx, nc, admin, obs, meta, data, len(put.chunks)); err != nil {
		t.Fatal(err)
	}
	fs, err := c.judgeRead(ctx, "resent", put)
	var re *resendError
	if len(fs) != 0 || !errors.As(err, &re) {
		t.Fatalf("the resent object: findings %v, err %v; want no finding and nats.go's resend", fs, err)
	}

	// Planted: the same object put whole, then one stored chunk made other
	// bytes by purging it and publishing others on its subject.
	meta.Name = "corrupt"
	info, err := obs.Put(ctx, meta, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	subj := "$O." + objBucket + ".C." + info.NUID
	stream, err := js.Stream(ctx, "OBJ_"+objBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
		t.Fatal(err)
	}
	for i := range put.chunks {
		b := data[i*objChunk : min(len(data), (i+1)*objChunk)]
		if i == 1 {
			b = bytes.Repeat([]byte{9}, len(b))
		}
		if _, err := js.Publish(ctx, subj, b); err != nil {
			t.Fatal(err)
		}
	}
	fs, err = c.judgeRead(ctx, "corrupt", put)
	if err != nil || len(fs) != 1 || fs[0].check != checkObjectMismatch || !strings.Contains(fs[0].msg, "3 of them as put in place") {
		t.Fatalf("the corrupt object: findings %v, err %v; want one object-mismatch with the chunk counts", fs, err)
	}
}
