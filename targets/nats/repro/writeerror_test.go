package repro

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestConsumerOnFrozenReplica reproduces N5 of docs/found.md (nats-server
// v2.15.3): a failed write of a stream replica's Raft term and vote
// (setWriteErrLocked) stops that replica's Raft node for good — it never
// catches up again, nothing restarts it — yet its server still leads
// consumers of the stream and serves them from its frozen store: a
// consumer led there says nothing is pending and delivers none of the
// acknowledged messages, while a consumer led elsewhere delivers them all.
//
// The write is made to fail by ordinary means: the replica is stopped, a
// directory is put where its term and vote file goes (BlockTermVote), it
// is started, and the stream's leader is moved, so that it must write a
// new term.
func TestConsumerOnFrozenReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, meta, nc, js := startCluster(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S1", Subjects: []string{"s1"}, Replicas: 3, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	group := stream.CachedInfo().Cluster
	// x: neither the meta leader nor the stream's leader, so that stopping
	// it moves no leadership; y: the third server.
	x, y := -1, -1
	for i := range c.Servers() {
		if i == meta || c.Server(i).Name() == group.Leader {
			continue
		}
		if x < 0 {
			x = i
		} else {
			y = i
		}
	}
	if x < 0 {
		t.Fatalf("setup: no server is neither the meta leader nor the stream's leader %s", group.Leader)
	}
	if y < 0 { // the third server is the meta leader
		y = meta
	}
	xname, yname := c.Server(x).Name(), c.Server(y).Name()
	c.Stop(x)
	if err := BlockTermVote(c.StoreDir(x), group.RaftGroup); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(x); err != nil {
		t.Fatal(err)
	}
	failed := func() bool { return len(c.Log(x).Lines("Critical write error")) > 0 }
	// x may campaign for S1 itself as it comes back, and fail then.
	if err := WaitFor(15*time.Second, xname+" running S1", func() bool {
		return failed() || c.Server(x).JetStreamIsStreamCurrent("$G", "S1")
	}); err != nil {
		t.Fatalf("setup: %v; %s logged %q", err, xname, c.Log(x).Lines(""))
	}
	// Else a new term: y's election asks x for its vote, and x must write
	// the term before it answers.
	if !failed() {
		if err := StepDown(nc, "S1", "", yname); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	if err := WaitFor(10*time.Second, xname+"'s write error on "+group.RaftGroup, failed); err != nil {
		t.Fatalf("setup: %v; %s logged %q", err, xname, c.Log(x).Lines(""))
	}
	t.Logf("%s: %q", xname, c.Log(x).Lines("Critical write error")[0])

	// n acknowledged messages, stored by the other two replicas.
	const n = 20
	for i := range n {
		if _, err := js.Publish(ctx, "s1", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Two consumers of every message: CX led by x, CY by another server.
	consumers := map[string]jetstream.Consumer{}
	for _, name := range []string{"CX", "CY"} {
		cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		consumers[name] = cons
	}
	if err := moveConsumerLeader(c, nc, "CX", x); err != nil {
		t.Fatalf("setup: %v", err)
	}
	if c.Server(x).JetStreamIsConsumerLeader("$G", "S1", "CY") {
		if err := moveConsumerLeader(c, nc, "CY", y); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}

	// What a client sees.
	got := map[string]int{}
	pending := map[string]uint64{}
	for _, name := range []string{"CX", "CY"} {
		info, err := consumers[name].Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pending[name] = info.NumPending
		batch, err := consumers[name].Fetch(n, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			got[name]++
			if err := m.Ack(); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("consumer %s led by %s: NumPending %d, a fetch of %d got %d", name, info.Cluster.Leader, info.NumPending, n, got[name])
	}
	own := ownStreamState(c, x, "S1")
	t.Logf("%s's own S1 replica (/jsz): %s; the others: %s, %s", xname, own, ownStreamState(c, y, "S1"), ownStreamState(c, 3-x-y, "S1"))
	if h := c.Server(x).Healthz(nil); h.Error != "" {
		t.Logf("%s's healthz: %s", xname, h.Error)
	}
	if got["CY"] != n || pending["CY"] != n {
		t.Fatalf("setup: consumer CY, led away from %s, got %d of %d messages (NumPending %d)", xname, got["CY"], n, pending["CY"])
	}
	if got["CX"] != 0 || pending["CX"] != 0 {
		t.Fatalf("not reproduced: consumer CX, led by %s whose S1 replica stopped at a write error, had NumPending %d and delivered %d of %d messages; nats-server no longer serves a consumer from a frozen replica (update docs/found.md N5)", xname, pending["CX"], got["CX"], n)
	}

	// Stream info requests are answered by the stream's leader, and, once
	// its node is lostQuorumInterval (10 s) old, by the frozen replica too,
	// which has no leader; the client takes the first answer.
	const asks = 20
	empty := 0
	first := time.Now()
	err = WaitFor(15*time.Second, "empty stream info answer", func() bool {
		info, err := stream.Info(ctx)
		return err == nil && info.State.Msgs == 0
	})
	if err != nil {
		t.Logf("stream info of S1: %v", err)
		return
	}
	waited := time.Since(first)
	for range asks {
		if info, err := stream.Info(ctx); err == nil && info.State.Msgs == 0 {
			empty++
		}
	}
	t.Logf("stream info of S1: the first empty answer after %v; then %d of %d answers said S1 holds no message", waited.Round(time.Millisecond), empty, asks)
}

// moveConsumerLeader makes server i the leader of consumer name of S1: it
// asks the consumer's leader to step down to server i until server i
// leads (a leader hands over only to a peer it heard from lately, and
// else to another).
func moveConsumerLeader(c *Cluster, nc *nats.Conn, name string, i int) error {
	leads := func() bool { return c.Server(i).JetStreamIsConsumerLeader("$G", "S1", name) }
	target := c.Server(i).Name()
	var last error
	err := WaitFor(15*time.Second, target+" leading consumer "+name, func() bool {
		if leads() {
			return true
		}
		if last = StepDown(nc, "S1", name, target); last == nil {
			_ = WaitFor(2*time.Second, "", leads)
		}
		return leads()
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last step down: %v)", err, last)
	}
	return err
}

// ownStreamState is server i's own view of its replica of stream, from its
// /jsz: first and last sequence and message count.
func ownStreamState(c *Cluster, i int, stream string) string {
	s := c.Server(i)
	if s == nil {
		return "stopped"
	}
	d, err := s.JszAccount(&server.JSzOptions{Account: "$G", Streams: true})
	if err != nil {
		return err.Error()
	}
	for _, sd := range d.Streams {
		if sd.Name == stream {
			return fmt.Sprintf("%s first=%d last=%d msgs=%d", s.Name(), sd.State.FirstSeq, sd.State.LastSeq, sd.State.Msgs)
		}
	}
	return s.Name() + " has no " + stream
}
