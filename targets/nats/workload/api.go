package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

const (
	// apiStream is the R3 stream that purges, message deletes, updates and
	// replica-count changes work on (subjects a.<server>.<0|1>), apart from
	// the S streams whose every acknowledged message must stay.
	apiStream = "A"
	// kvBucket is the R3 key-value bucket of the kv- operations; its keys
	// are k0…k<kvKeys-1>, recorded in the history as kv/k….
	kvBucket = "KV"
	kvKeys   = 4
	// objBucket is the R3 object store of the object operation; objects
	// are up to objMaxSize bytes in objChunk chunks.
	objBucket  = "OBJ"
	objChunk   = 16 * 1024
	objMaxSize = 64 * 1024
	// objectsWait bounds reading the objects back after the load.
	objectsWait = 5 * time.Second
	// drainWait bounds draining the durable consumers after the load: the
	// consumers' AckWait (a message whose ack or nak was lost is
	// redelivered after it) and two seconds.
	drainWait = ackWait + 2*time.Second
	// ackWait is the durable consumers' AckWait.
	ackWait = 5 * time.Second
)

// kvSeen is the value of a key and its revision as the client last saw
// them; value "" is an absent or deleted key.
type kvSeen struct {
	value string
	rev   uint64
}

// createAPI creates stream A, bucket KV and object store OBJ through the
// client's server, those of them the mix uses, at once. The buckets'
// streams are set to answer reads from their leader only (AllowDirect
// off): a direct get may be answered by any replica, a follower behind the
// leader included, so it promises no linearizable read.
func (c *client) createAPI(ctx context.Context) error {
	return workload.Each([]func(context.Context) error{c.createAPIStream, c.createKV, c.createObjects},
		func(create func(context.Context) error) error { return create(ctx) })
}

func (c *client) createAPIStream(ctx context.Context) error {
	if c.cfg.mix.uses(opAPIPublish, opPurge, opPurgeSubject, opDeleteMsg, opUpdate, opScale) {
		err := c.wc.Setup(ctx, "create stream "+apiStream, func(ctx context.Context) error {
			_, err := c.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
				Name:     apiStream,
				Subjects: []string{strings.ToLower(apiStream) + ".>"},
				Storage:  jetstream.FileStorage,
				Replicas: 3,
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("create stream %s through %s: %w", apiStream, c.wc.Node(), err)
		}
	}
	return nil
}

func (c *client) createKV(ctx context.Context) error {
	if c.cfg.mix.uses(opKVGet, opKVPut, opKVDelete, opKVUpdate) {
		err := c.wc.Setup(ctx, "create bucket "+kvBucket, func(ctx context.Context) error {
			if _, err := c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: kvBucket, Replicas: 3, Storage: jetstream.FileStorage}); err != nil {
				return err
			}
			return c.leaderReads(ctx, "KV_"+kvBucket)
		})
		if err != nil {
			return fmt.Errorf("create bucket %s through %s: %w", kvBucket, c.wc.Node(), err)
		}
	}
	return nil
}

func (c *client) createObjects(ctx context.Context) error {
	if c.cfg.mix.uses(opObject) {
		err := c.wc.Setup(ctx, "create object store "+objBucket, func(ctx context.Context) error {
			if _, err := c.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: objBucket, Replicas: 3, Storage: jetstream.FileStorage}); err != nil {
				return err
			}
			return c.leaderReads(ctx, "OBJ_"+objBucket)
		})
		if err != nil {
			return fmt.Errorf("create object store %s through %s: %w", objBucket, c.wc.Node(), err)
		}
	}
	return nil
}

// leaderReads turns direct gets off on the stream.
func (c *client) leaderReads(ctx context.Context, stream string) error {
	st, err := c.js.Stream(ctx, stream)
	if err != nil {
		return err
	}
	cfg := st.CachedInfo().Config
	if !cfg.AllowDirect {
		return nil
	}
	cfg.AllowDirect = false
	_, err = c.js.UpdateStream(ctx, cfg)
	return err
}

// bindAPI opens the client's handles on what createAPI created (a handle
// reads its stream's configuration once: it must come after leaderReads).
func (c *client) bindAPI(ctx context.Context) error {
	m := &c.cfg.mix
	return c.wc.Setup(ctx, "bind the API's streams", func(ctx context.Context) error {
		var err error
		if m.uses(opAPIPublish, opPurge, opPurgeSubject, opDeleteMsg, opUpdate, opScale) {
			if c.api, err = c.js.Stream(ctx, apiStream); err != nil {
				return err
			}
		}
		if m.uses(opKVGet, opKVPut, opKVDelete, opKVUpdate) {
			if c.kv, err = c.js.KeyValue(ctx, kvBucket); err != nil {
				return err
			}
			if c.kvStream, err = c.js.Stream(ctx, "KV_"+kvBucket); err != nil {
				return err
			}
		}
		if m.uses(opObject) {
			if c.obj, err = c.js.ObjectStore(ctx, objBucket); err != nil {
				return err
			}
		}
		return nil
	})
}

// step runs one operation of the mix.
func (c *client) step(ctx context.Context, op int) {
	switch op {
	case opPublish:
		_ = c.publish(ctx, c.stream())
	case opFetch:
		c.fetch(ctx, c.stream(), false)
	case opFetchNak:
		c.fetch(ctx, c.stream(), true)
	case opInfo:
		c.info(ctx, c.stream())
	case opAPIPublish:
		c.apiPublish(ctx)
	case opPurge:
		c.purge(ctx, "")
	case opPurgeSubject:
		c.purge(ctx, c.apiSubject())
	case opDeleteMsg:
		c.deleteMsg(ctx)
	case opUpdate, opScale:
		c.update(ctx, op == opScale)
	case opKVGet:
		c.kvGet(ctx, c.kvKey())
	case opKVPut:
		c.kvPut(ctx, c.kvKey())
	case opKVDelete:
		c.kvDelete(ctx, c.kvKey())
	case opKVUpdate:
		c.kvUpdate(ctx, c.kvKey())
	case opObject:
		c.object(ctx)
	}
}

// nextID is a fresh message ID or value: "<client>#<n>".
func (c *client) nextID() string {
	c.seq++
	return fmt.Sprintf("%s#%d", c.wc.Name(), c.seq)
}

// apiSubject is one of the client's two subjects of stream A.
func (c *client) apiSubject() string {
	return fmt.Sprintf("%s.%s.%d", strings.ToLower(apiStream), c.wc.Node(), c.rng.IntN(2))
}

// apiPublish publishes one message to one of the client's subjects of
// stream A and records its ack.
func (c *client) apiPublish(ctx context.Context) {
	id, subj := c.nextID(), c.apiSubject()
	call := time.Now()
	_ = c.wc.Do(ctx, "publish", subj, func(ctx context.Context) error {
		ack, err := c.js.Publish(ctx, subj, []byte(id+" api"), jetstream.WithMsgID(id), jetstream.WithExpectStream(apiStream))
		if err != nil {
			return err
		}
		c.led.apiAck(apiMsg{id: id, subject: subj, seq: ack.Sequence, call: call, ret: time.Now()})
		c.apiSeqs = append(c.apiSeqs, ack.Sequence)
		return nil
	})
}

// purge purges stream A, all of it (subject "") or one subject, and
// records the purge (its outcome unknown when it failed).
func (c *client) purge(ctx context.Context, subject string) {
	r := apiRemoval{subject: subject, call: time.Now()}
	var opts []jetstream.StreamPurgeOpt
	what := apiStream
	if subject != "" {
		opts = append(opts, jetstream.WithPurgeSubject(subject))
		what = subject
	}
	err := c.wc.Do(ctx, "purge", what, func(ctx context.Context) error { return c.api.Purge(ctx, opts...) })
	r.ret, r.ok = time.Now(), err == nil
	c.led.apiRemove(r)
}

// deleteMsg deletes a message the client published to stream A. A
// sequence the server no longer holds (a purge took it) is no removal and
// no error: the read-back judges whether it should be there.
func (c *client) deleteMsg(ctx context.Context) {
	if len(c.apiSeqs) == 0 {
		return
	}
	i := c.rng.IntN(len(c.apiSeqs))
	seq := c.apiSeqs[i]
	c.apiSeqs = append(c.apiSeqs[:i], c.apiSeqs[i+1:]...)
	r := apiRemoval{seq: seq, call: time.Now()}
	gone := false
	err := c.wc.Do(ctx, "delete-msg", fmt.Sprintf("%s %d", apiStream, seq), func(ctx context.Context) error {
		err := c.api.DeleteMsg(ctx, seq)
		if noSuchMsg(err) {
			gone = true
			return nil
		}
		return err
	})
	if gone {
		return
	}
	r.ret, r.ok = time.Now(), err == nil
	c.led.apiRemove(r)
}

// noSuchMsg says whether a message delete failed because the stream does
// not hold the sequence: nats.go folds the server's error (code 10057,
// "no message found", or "sequence N not found" below the stream's first
// sequence) into the text of ErrMsgDeleteUnsuccessful.
func noSuchMsg(err error) bool {
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return true
	}
	return errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) &&
		(strings.Contains(err.Error(), "no message found") || strings.HasSuffix(err.Error(), " not found"))
}

// scaleCycle is the replica counts the scale operation sets in turn.
var scaleCycle = [...]int{1, 3, 2, 3}

// update changes stream A's configuration: its description, or (scale)
// its replica count, and judges the state the stream's leader reports
// right after.
func (c *client) update(ctx context.Context, scale bool) {
	acked := c.led.apiMaxSeq()
	_ = c.wc.Do(ctx, "update", apiStream, func(ctx context.Context) error {
		info, err := c.api.Info(ctx)
		if err != nil {
			return err
		}
		cfg := info.Config
		what := "an update of its description"
		if scale {
			cfg.Replicas = scaleCycle[c.scales%len(scaleCycle)]
			c.scales++
			what = fmt.Sprintf("a change to %d replicas", cfg.Replicas)
		} else {
			cfg.Description = "updated by " + c.nextID()
		}
		if _, err := c.js.UpdateStream(ctx, cfg); err != nil {
			return err
		}
		// Not the update's own answer: a server that just joined the
		// stream may answer it, with the state it has so far
		// (processClusterUpdateStream). The stream's leader answers info.
		after, err := c.api.Info(ctx)
		if err != nil {
			return fmt.Errorf("info after the update: %w", err)
		}
		if after.Cluster == nil || after.Cluster.Leader == "" {
			return nil // no leader's view to judge
		}
		for _, f := range judgeUpdate(apiStream, what, acked, after.State.LastSeq) {
			c.wc.Violation(f.check, f.msg)
		}
		return nil
	})
}

// restoreAPI sets stream A back to three replicas, as it was created,
// and waits until they are all current (for settleWait at most), so that
// the read-back finds it settled: a stream whose replica count changed a
// moment ago may answer no consumer yet (a fault-free trial's read-back
// found no responder through any server). The read-back still judges
// whatever it finds.
func (c *client) restoreAPI(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, settleWait)
	defer cancel()
	_ = c.wc.Do(wctx, "restore", apiStream, func(context.Context) error {
		var last error
		for wctx.Err() == nil {
			if last = c.settleAPI(wctx); last == nil {
				return nil
			}
			workload.Sleep(wctx, 100*time.Millisecond)
		}
		return last
	})
}

// settleAPI makes one step towards stream A's three current replicas: nil
// once they are.
func (c *client) settleAPI(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	info, err := c.api.Info(rctx)
	if err != nil {
		return err
	}
	if info.Config.Replicas != 3 {
		cfg := info.Config
		cfg.Replicas = 3
		if _, err := c.js.UpdateStream(rctx, cfg); err != nil {
			return err
		}
		return errors.New("replicas restored to 3, not yet current")
	}
	return allCurrent(info.Cluster, 3)
}

// kvKey picks a key of bucket KV.
func (c *client) kvKey() string { return fmt.Sprintf("k%d", c.rng.IntN(kvKeys)) }

// kvOp is the history's record of an operation on a key of bucket KV.
func kvOp(kind, key, value, expect string) record.Op {
	return record.Op{Kind: kind, Key: "kv/" + key, Value: value, Expect: expect}
}

// kvGet reads a key (absent or deleted: "").
func (c *client) kvGet(ctx context.Context, key string) {
	_, _ = c.wc.DoOp(ctx, kvOp("get", key, "", ""), func(ctx context.Context) (string, error) {
		e, err := c.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			c.kvSeen[key] = kvSeen{}
			return "", nil
		}
		if err != nil {
			return "", err
		}
		c.kvSeen[key] = kvSeen{value: string(e.Value()), rev: e.Revision()}
		return string(e.Value()), nil
	})
}

// kvPut writes a fresh value.
func (c *client) kvPut(ctx context.Context, key string) {
	v := c.nextID()
	_, _ = c.wc.DoOp(ctx, kvOp("put", key, v, ""), func(ctx context.Context) (string, error) {
		rev, err := c.kv.Put(ctx, key, []byte(v))
		if err != nil {
			return "", err
		}
		c.kvSeen[key] = kvSeen{value: v, rev: rev}
		return "", nil
	})
}

// kvDelete deletes a key (a delete marker).
func (c *client) kvDelete(ctx context.Context, key string) {
	_, _ = c.wc.DoOp(ctx, kvOp("delete", key, "", ""), func(ctx context.Context) (string, error) {
		if err := c.kv.Delete(ctx, key); err != nil {
			return "", err
		}
		c.kvSeen[key] = kvSeen{}
		return "", nil
	})
}

// kvUpdate writes a fresh value if the key still holds what the client
// last saw: Update at the revision it saw the value at, or Create when it
// saw the key absent or deleted (or saw nothing). Values are unique, so
// "the revision is r" is "the value is the one written at r": the
// history's compare-and-swap on the value. A Create answered that the key
// exists is judged again from the key's latest entry (createExists).
func (c *client) kvUpdate(ctx context.Context, key string) {
	seen, v := c.kvSeen[key], c.nextID()
	out, err := c.wc.DoOp(ctx, kvOp("cas", key, v, seen.value), func(ctx context.Context) (string, error) {
		var rev uint64
		var err error
		if seen.value == "" {
			rev, err = c.kv.Create(ctx, key, []byte(v))
		} else {
			rev, err = c.kv.Update(ctx, key, []byte(v), seen.rev)
		}
		out, oerr := casOutcome(err)
		if out == "false" && seen.value == "" {
			out, oerr = c.createExists(ctx, key, err) // docs/found.md N6
		}
		if out == "true" {
			c.kvSeen[key] = kvSeen{value: v, rev: rev}
		}
		return out, oerr
	})
	if err != nil || out == "false" {
		delete(c.kvSeen, key) // learn it again
	}
}

// object puts an object of random size and content into bucket OBJ and
// reads it back through the same server.
func (c *client) object(ctx context.Context) {
	name := strings.ReplaceAll(c.nextID(), "/", "-")
	data := make([]byte, 1+c.rng.IntN(objMaxSize))
	for i := range data {
		data[i] = byte(c.rng.Uint32())
	}
	put := newObjectPut(data)
	err := c.wc.Do(ctx, "object-put", name, func(ctx context.Context) error {
		meta := jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: objChunk}}
		_, err := c.obj.Put(ctx, meta, bytes.NewReader(data))
		return err
	})
	if err != nil {
		return
	}
	c.led.objectPut(name, put)
	_ = c.checkObject(ctx, name, put)
}

// checkObject reads the object back and judges it; it returns the read's
// error when the read failed for another reason than a finding. A
// mismatch is judged again from the object's stored chunks
// (judgeMismatch): nats.go's resend of a reused chunk is its error, not a
// finding.
func (c *client) checkObject(ctx context.Context, name string, put objectPut) error {
	return c.wc.Do(ctx, "object-get", name, func(ctx context.Context) error {
		fs, err := c.judgeRead(ctx, name, put)
		for _, f := range fs {
			c.wc.Violation(f.check, f.msg)
		}
		return err
	})
}

// judgeRead reads object name back and judges it against what was put
// (judgeObject, then judgeMismatch from its stored chunks).
func (c *client) judgeRead(ctx context.Context, name string, put objectPut) ([]finding, error) {
	got, err := c.readObject(ctx, name)
	fs, err := judgeObject(objBucket, name, put.sum, got, err)
	if len(fs) == 1 && fs[0].check == checkObjectMismatch {
		stored, serr := c.storedChunks(ctx, name)
		fs, err = judgeMismatch(fs[0], name, put, stored, serr)
	}
	return fs, err
}

// readObject reads an object whole; every read is bounded by ctx.
func (c *client) readObject(ctx context.Context, name string) ([]byte, error) {
	res, err := c.obj.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	return io.ReadAll(res)
}

// drainBudget is how long the drain may take: drainWait, or what is left
// before the workload's deadline once the read-back (readMargin) and the
// digest phase's converge wait are kept back, at least a second (no
// deadline: drainWait). A drain cut short leaves its consumer unjudged.
func drainBudget(now, deadline time.Time, converge time.Duration) time.Duration {
	if deadline.IsZero() {
		return drainWait
	}
	return min(drainWait, max(time.Second, deadline.Sub(now)-converge-readMargin))
}

// drain fetches and acks every message the client's durable consumer on
// the stream still has, until the consumer says nothing is pending or
// unacknowledged (true) or its budget (drainBudget) passed (false).
func (c *client) drain(ctx context.Context, stream string) bool {
	deadline, _ := ctx.Deadline()
	dctx, cancel := context.WithTimeout(ctx, drainBudget(time.Now(), deadline, c.cfg.converge))
	defer cancel()
	cons := c.cons[stream]
	if cons == nil {
		return false
	}
	for dctx.Err() == nil {
		ictx, icancel := context.WithTimeout(dctx, time.Second)
		info, err := cons.Info(ictx)
		icancel()
		if err == nil && info.NumPending == 0 && info.NumAckPending == 0 {
			return true
		}
		n := 0
		if batch, err := cons.FetchNoWait(100); err == nil {
			for m := range batch.Messages() {
				n++
				if md, err := m.Metadata(); err == nil {
					c.led.delivered(stream, c.durable(), md.Sequence.Stream, messageID(m.Data()))
				}
				_ = m.Ack()
			}
		}
		if n == 0 {
			workload.Sleep(dctx, 100*time.Millisecond)
		}
	}
	return false
}
