package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Guarantee names of the API operations (checker "violations"; stable,
// for known-bug files).
const (
	// A message of stream A acknowledged before an acknowledged purge of
	// its subject was sent, read back after the purge.
	checkPurged = "purge-reappeared"
	// A sequence of stream A whose delete was acknowledged, read back.
	checkDeleted = "delete-reappeared"
	// A stream's last sequence, as its leader reports it right after an
	// acknowledged update of its configuration or replica count, below a
	// sequence acknowledged before.
	checkUpdateLost = "update-lost"
	// An acknowledged message that a durable consumer never delivered,
	// though the consumer said nothing was pending or unacknowledged.
	checkConsumerLost = "consumer-lost"
	// A nak'd message the consumer never delivered again, though it said
	// nothing was pending or unacknowledged.
	checkRedelivery = "consumer-redelivery"
	// An object whose put was acknowledged is not found.
	checkObjectLost = "object-lost"
	// An object read back with other content than was put.
	checkObjectMismatch = "object-mismatch"
)

// apiMsg is one acknowledged publish to stream A: its ID, subject and
// sequence, and when the publish was sent and its ack came.
type apiMsg struct {
	id, subject string
	seq         uint64
	call, ret   time.Time
}

// apiRemoval is one purge or message delete on stream A.
type apiRemoval struct {
	// purge: the subject purged, "" for the whole stream.
	subject string
	// delete: the sequence deleted; 0 for a purge.
	seq       uint64
	call, ret time.Time
	// ok: acknowledged; false: the outcome is unknown (it may have taken
	// effect).
	ok bool
}

// String names the removal as findings do.
func (r apiRemoval) String() string {
	switch {
	case r.seq != 0:
		return fmt.Sprintf("delete of %d", r.seq)
	case r.subject == "":
		return "purge of the stream"
	}
	return "purge of " + r.subject
}

// covers says whether the removal, once applied, took m away: a delete of
// its sequence, or a purge of the whole stream or m's subject, applied
// after m was stored.
func (r apiRemoval) covers(m apiMsg) bool {
	if r.seq != 0 {
		return r.seq == m.seq
	}
	return r.subject == "" || r.subject == m.subject
}

// judgeAPI judges stream A, where purges and deletes took messages away,
// from its read-back:
//
//   - purge-reappeared: a message acknowledged before an acknowledged
//     purge of its subject (or the whole stream) was sent is read back;
//   - delete-reappeared: a sequence whose delete was acknowledged is read
//     back;
//   - message-lost: a message that no purge or delete can have taken
//     away (every one of its subject was applied before its publish was
//     sent, or definitely not at all) is not read back at the sequence its
//     ack named. A removal that ran while the message was being published
//     may or may not have taken it; so may one whose outcome is unknown,
//     whenever the message was published (it may take effect late).
func judgeAPI(stream string, msgs []apiMsg, rms []apiRemoval, read streamRead) []finding {
	var purged, deleted, lost []string
	for _, r := range rms {
		if r.ok && r.seq != 0 {
			if id, ok := read.ids[r.seq]; ok {
				deleted = append(deleted, fmt.Sprintf("%s (acknowledged %s) read back: %s", r, r.ret.UTC().Format(time.StampMilli), id))
			}
		}
	}
	for _, m := range msgs {
		var gone *apiRemoval
		mayGo := false
		for i, r := range rms {
			if !r.covers(m) {
				continue
			}
			// A delete's sequence is its message's; a removal that
			// returned after the publish was sent may have run after it
			// was stored; one of unknown outcome may have run at any time
			// after it was sent, also long after it timed out (a purge
			// proposed before a crash, committed after the election), so
			// it may have taken any message of its subject.
			if r.seq != 0 || !r.ok || r.ret.After(m.call) {
				mayGo = true
			}
			if r.ok && r.seq == 0 && r.call.After(m.ret) && gone == nil {
				gone = &rms[i]
			}
		}
		got, ok := read.ids[m.seq]
		switch {
		case gone != nil:
			if ok && got == m.id {
				purged = append(purged, fmt.Sprintf("%s at %d, acknowledged before the %s was sent, read back", m.id, m.seq, gone))
			}
		case mayGo:
		case m.seq > read.last:
			lost = append(lost, fmt.Sprintf("%s acknowledged at %d, after the stream's last sequence %d", m.id, m.seq, read.last))
		case !ok:
			lost = append(lost, fmt.Sprintf("%s acknowledged at %d, neither purged nor deleted, not read back", m.id, m.seq))
		case got != m.id:
			lost = append(lost, fmt.Sprintf("%s acknowledged at %d, %s read back there", m.id, m.seq, got))
		}
	}
	var fs []finding
	if len(purged) > 0 {
		fs = append(fs, finding{check: checkPurged, msg: fmt.Sprintf("stream %s: %d purged messages read back: %s", stream, len(purged), sample(purged))})
	}
	if len(deleted) > 0 {
		fs = append(fs, finding{check: checkDeleted, msg: fmt.Sprintf("stream %s: %d deleted sequences read back: %s", stream, len(deleted), sample(deleted))})
	}
	if len(lost) > 0 {
		fs = append(fs, finding{check: checkLost, msg: fmt.Sprintf("stream %s (first %d, last %d): %d acknowledged messages lost: %s", stream, read.first, read.last, len(lost), sample(lost))})
	}
	return fs
}

// judgeUpdate judges the state the stream's leader reports right after
// an acknowledged update of its configuration: its last sequence may not
// be below acked, the highest sequence acknowledged before the update was
// sent (purges and deletes keep the last sequence). what describes the
// update.
func judgeUpdate(stream, what string, acked, last uint64) []finding {
	if last >= acked {
		return nil
	}
	return []finding{{check: checkUpdateLost, msg: fmt.Sprintf("stream %s: after %s its last sequence is %d, below %d, acknowledged before the update", stream, what, last, acked)}}
}

// nak is one message a consumer's client nak'd: its stream sequence and
// how many times the consumer had delivered it by then.
type nak struct {
	seq    uint64
	before int
}

// consumerLog is what the workload saw of one durable consumer.
type consumerLog struct {
	// delivered counts the deliveries by stream sequence.
	delivered map[uint64]int
	naks      []nak
	// drained: after the load, the consumer said it had nothing pending
	// and nothing unacknowledged.
	drained bool
}

// judgeConsumer judges one durable consumer on stream, created before the
// first publish with deliver-all and explicit acks, from acks (the
// stream's acknowledged publishes) and first (the stream's first sequence
// at the read-back: below it, the stream's limits may have discarded a
// message). Only a drained consumer is judged: one that still has
// messages pending may deliver them later.
//
//   - consumer-lost: an acknowledged message at or above first was never
//     delivered;
//   - consumer-redelivery: a nak'd message at or above first was never
//     delivered again.
func judgeConsumer(stream, consumer string, acks []pubAck, first uint64, cl consumerLog) []finding {
	if !cl.drained {
		return nil
	}
	var lost, notAgain []string
	for _, a := range acks {
		if a.seq >= first && cl.delivered[a.seq] == 0 {
			lost = append(lost, fmt.Sprintf("%s at %d", a.id, a.seq))
		}
	}
	for _, n := range cl.naks {
		if n.seq >= first && cl.delivered[n.seq] <= n.before {
			notAgain = append(notAgain, fmt.Sprintf("%d (delivered %d times before the nak)", n.seq, n.before))
		}
	}
	var fs []finding
	if len(lost) > 0 {
		fs = append(fs, finding{check: checkConsumerLost, msg: fmt.Sprintf("consumer %s on %s said nothing was pending, yet never delivered %d acknowledged messages: %s",
			consumer, stream, len(lost), sample(lost))})
	}
	if len(notAgain) > 0 {
		fs = append(fs, finding{check: checkRedelivery, msg: fmt.Sprintf("consumer %s on %s said nothing was pending, yet never redelivered %d nak'd messages: %s",
			consumer, stream, len(notAgain), sample(notAgain))})
	}
	return fs
}

// judgeObject judges reading back an object whose put was acknowledged
// with content of the given SHA-256: the read's error or its content.
// A read that failed for another reason than the object's absence or a
// digest mismatch is no finding; its error is returned.
func judgeObject(bucket, name string, want [sha256.Size]byte, got []byte, err error) ([]finding, error) {
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return []finding{{check: checkObjectLost, msg: fmt.Sprintf("object %s in %s: put acknowledged, then not found", name, bucket)}}, nil
	case errors.Is(err, jetstream.ErrDigestMismatch):
		return []finding{{check: checkObjectMismatch, msg: fmt.Sprintf("object %s in %s: the content read back does not match its digest", name, bucket)}}, nil
	case err != nil:
		return nil, err
	case sha256.Sum256(got) != want:
		return []finding{{check: checkObjectMismatch, msg: fmt.Sprintf("object %s in %s: %d bytes read back, not the content put", name, bucket, len(got))}}, nil
	}
	return nil, nil
}

// casOutcome classifies the result of a KV create or update at a revision:
// "true" when it succeeded, "false" when the server answered that the key's
// revision differed (a definite failure: nothing was written), and the
// error itself otherwise (the outcome is unknown).
func casOutcome(err error) (string, error) {
	switch {
	case err == nil:
		return "true", nil
	case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return "false", nil
	}
	return "", err
}
