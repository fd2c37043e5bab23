package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
)

// objectPut is what the workload keeps of an acknowledged object put: the
// SHA-256 of its content and of each of its objChunk chunks, in order.
type objectPut struct {
	sum    [sha256.Size]byte
	chunks [][sha256.Size]byte
}

// newObjectPut digests data whole and chunk by chunk.
func newObjectPut(data []byte) objectPut {
	p := objectPut{sum: sha256.Sum256(data)}
	for c := range slices.Chunk(data, objChunk) {
		p.chunks = append(p.chunks, sha256.Sum256(c))
	}
	return p
}

// resendError is an object-mismatch that nats.go's ObjectStore.Put made,
// not the server (docs/found.md N4, reproduced by
// targets/nats/repro/objectput_test.go): Put publishes every chunk from one
// *nats.Msg pointing at one reused buffer, and a chunk whose publish was
// answered "no responders" is resent 250 ms later from that message, by
// then the last chunk. The read is reported as this error, not as a
// finding; its message says what was dismissed and why.
type resendError struct {
	object         string
	chunks, copies int
}

func (e *resendError) Error() string {
	return fmt.Sprintf("object %s in %s: not judged: its %d stored chunks are the chunks put with %d of them replaced by copies of the last one, the shape of nats.go's ObjectStore.Put resending a reused message after a 503 (a client bug, docs/found.md N4), not the server's",
		e.object, objBucket, e.chunks, e.copies)
}

// judgeMismatch decides what an object-mismatch f means once the object's
// stored chunks were read (stored, in stream order; err when they could
// not be): nats.go's resend (resendShape: no finding, a resendError) or
// the finding, which then says what was seen of the chunks.
func judgeMismatch(f finding, name string, put objectPut, stored [][sha256.Size]byte, err error) ([]finding, error) {
	switch {
	case err != nil:
		f.msg += fmt.Sprintf(" (its stored chunks could not be read to tell nats.go's resend of a reused chunk, docs/found.md N4: %v)", err)
	case resendShape(put.chunks, stored):
		last := put.chunks[len(put.chunks)-1]
		return nil, &resendError{object: name, chunks: len(stored), copies: countOf(stored, last) - countOf(put.chunks, last)}
	default:
		f.msg += fmt.Sprintf(" (%d chunks put, %d stored, %d of them as put in place)", len(put.chunks), len(stored), inPlace(put.chunks, stored))
	}
	return []finding{f}, nil
}

// resendShape reports whether stored (the chunk digests of an object as
// its stream holds them, in order) is what nats.go's resend makes of the
// chunks put: as many chunks as put, the ones that are not copies of the
// last chunk put are chunks put, in their order, and at least one chunk
// put is missing, its place taken by a copy of the last. A server that
// lost, reordered, duplicated (other than the last) or corrupted a chunk
// does not make this shape.
func resendShape(put, stored [][sha256.Size]byte) bool {
	if len(put) < 2 || len(stored) != len(put) {
		return false
	}
	last := put[len(put)-1]
	notLast := func(c [sha256.Size]byte) bool { return c != last }
	p, s := filter(put[:len(put)-1], notLast), filter(stored, notLast)
	if len(s) >= len(p) {
		return false
	}
	i := 0 // s must be a subsequence of p
	for _, c := range p {
		if i < len(s) && s[i] == c {
			i++
		}
	}
	return i == len(s)
}

func filter(cs [][sha256.Size]byte, keep func([sha256.Size]byte) bool) [][sha256.Size]byte {
	var out [][sha256.Size]byte
	for _, c := range cs {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

func countOf(cs [][sha256.Size]byte, c [sha256.Size]byte) int {
	return len(filter(cs, func(x [sha256.Size]byte) bool { return x == c }))
}

// inPlace counts the positions where stored holds the chunk put there.
func inPlace(put, stored [][sha256.Size]byte) int {
	n := 0
	for i := range min(len(put), len(stored)) {
		if put[i] == stored[i] {
			n++
		}
	}
	return n
}

// storedChunks reads the chunks of object name as bucket OBJ's stream
// holds them (the subject of the object's current NUID, in stream order)
// and digests each. It asks the stream's leader, one chunk at a time
// (STREAM.MSG.GET with next_by_subj, which only the leader answers): a
// consumer, even an ordered one, may be placed on a copy still catching up
// after a restart and end on a prefix (docs/found.md N7), which would make
// chunks the leader holds look lost.
func (c *client) storedChunks(ctx context.Context, name string) ([][sha256.Size]byte, error) {
	info, err := c.obj.GetInfo(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("object info: %w", err)
	}
	subj := fmt.Sprintf("$O.%s.C.%s", objBucket, info.NUID)
	var out [][sha256.Size]byte
	for seq := uint64(1); ; {
		m, err := c.leaderMsg(ctx, "OBJ_"+objBucket, seq, subj)
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", len(out)+1, err)
		}
		if m == nil {
			return out, nil
		}
		out = append(out, sha256.Sum256(m.Data))
		seq = m.Sequence + 1
	}
}

// leaderMsg asks stream's leader for its first message on subject at or
// after seq; nil when there is none.
func (c *client) leaderMsg(ctx context.Context, stream string, seq uint64, subject string) (*jetstream.RawStreamMsg, error) {
	req, err := json.Marshal(struct {
		Seq  uint64 `json:"seq"`
		Next string `json:"next_by_subj"`
	}{seq, subject})
	if err != nil {
		return nil, err
	}
	resp, err := c.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, err
	}
	var r struct {
		Message *struct {
			Subject  string `json:"subject"`
			Sequence uint64 `json:"seq"`
			Data     []byte `json:"data"`
		} `json:"message"`
		Error *struct {
			Code        int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return nil, fmt.Errorf("stream message get: %w", err)
	}
	switch {
	case r.Error != nil && r.Error.Code == noMessageFound:
		return nil, nil
	case r.Error != nil:
		return nil, fmt.Errorf("stream message get: %s (%d)", r.Error.Description, r.Error.Code)
	case r.Message == nil:
		return nil, errors.New("stream message get: an answer with neither a message nor an error")
	}
	return &jetstream.RawStreamMsg{Subject: r.Message.Subject, Sequence: r.Message.Sequence, Data: r.Message.Data}, nil
}

// noMessageFound is JetStream's error code for a message get that found
// none (JSNoMessageFoundErr).
const noMessageFound = 10037
