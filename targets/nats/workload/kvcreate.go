package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// kvOpHeader is the header of a KV bucket's delete and purge markers
// (nats.go's kvop), with the values kvDel and kvPurge.
const (
	kvOpHeader = "KV-Operation"
	kvDel      = "DEL"
	kvPurge    = "PURGE"
)

// tombstoneCreateError is a KV Create answered "the key exists" on a key
// whose latest entry is a delete or purge marker (docs/found.md N6).
// nats.go's Create is two conditional writes, not one: a write expecting
// no entry, then, when that fails and a read of the key's latest entry
// says it is a marker, a write expecting that marker's revision; when the
// second write or the read fails, Create answers ErrKeyExists. A delete
// between the two writes makes that answer while the key stays deleted
// (nats-server#3895, #5162, both open). The operation is recorded with
// its outcome unknown, not as a failed compare-and-swap, and its error
// says why, with what Create answered (nats.go's wrong-last-sequence
// error, whose code tells the server's refusals apart).
type tombstoneCreateError struct {
	key, marker string
	rev         uint64
	answer      error
}

func (e *tombstoneCreateError) Error() string {
	return fmt.Sprintf("key %s in %s: not judged: Create answered that the key exists, yet its latest entry, read from the stream's leader, is a %s marker (revision %d): nats.go's two-step Create on a tombstoned key, nats-server#3895/#5162 (KV Create on a tombstoned key), a known bug (docs/found.md N6), not a lost delete; Create said: %v",
		e.key, kvBucket, e.marker, e.rev, e.answer)
}

// judgeCreate decides what a Create of key that answered ErrKeyExists
// (answer) means once the key's latest entry was read from the stream's
// leader (latest; err when it could not be read): a delete or purge
// marker makes the outcome unknown (a tombstoneCreateError); a value, no
// entry at all, or a read that failed leaves the compare-and-swap failed
// ("false"), the answer the linearizability checker judges.
func judgeCreate(key string, answer error, latest *jetstream.RawStreamMsg, err error) (string, error) {
	if err != nil || latest == nil {
		return "false", nil
	}
	switch op := latest.Header.Get(kvOpHeader); op {
	case kvDel, kvPurge:
		return "", &tombstoneCreateError{key: key, marker: op, rev: latest.Sequence, answer: answer}
	}
	return "false", nil
}

// createExists judges a Create of key that answered ErrKeyExists (answer)
// from the key's latest entry (judgeCreate).
func (c *client) createExists(ctx context.Context, key string, answer error) (string, error) {
	latest, err := c.latestEntry(ctx, key)
	return judgeCreate(key, answer, latest, err)
}

// latestEntry reads key's latest entry from bucket KV's stream through the
// stream's leader (STREAM.MSG.GET: the stream's direct gets are off, see
// createAPI), not from whichever replica answers a direct get.
func (c *client) latestEntry(ctx context.Context, key string) (*jetstream.RawStreamMsg, error) {
	if c.kvStream == nil {
		return nil, errors.New("no handle on the bucket's stream")
	}
	if info := c.kvStream.CachedInfo(); info == nil || info.Config.AllowDirect {
		return nil, fmt.Errorf("stream %s may answer from any replica (direct gets on)", "KV_"+kvBucket)
	}
	m, err := c.kvStream.GetLastMsgForSubject(ctx, "$KV."+kvBucket+"."+key)
	if err != nil {
		return nil, fmt.Errorf("latest entry of %s: %w", key, err)
	}
	return m, nil
}
