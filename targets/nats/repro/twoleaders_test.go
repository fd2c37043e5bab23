package repro

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestConsumerTwoLeaders reproduces N2 of docs/found.md (nats-server
// v2.15.3): when a member of an R3 consumer cannot create the consumer's
// Raft group (processClusterCreateConsumer ignores createRaftGroup's
// error), it runs the consumer as if it were R1 and makes itself its
// leader, beside the leader the other two members elect. Both leaders
// answer every pull request: each message comes twice, and an ack of one
// copy takes away the nak of the other.
//
// The group's creation is made to fail by ordinary means: the member is
// down while the consumer is created, and a regular file is put where its
// store would keep the new group's log (BlockRaftGroup); then it starts.
func TestConsumerTwoLeaders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, meta, nc, js := startCluster(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S1", Subjects: []string{"s1"}, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	// x: neither the meta leader nor the stream's leader, so that stopping
	// it moves no leadership.
	x := -1
	for i := range c.Servers() {
		if i != meta && c.Server(i).Name() != stream.CachedInfo().Cluster.Leader {
			x = i
			break
		}
	}
	if x < 0 {
		t.Fatalf("setup: no server is neither the meta leader nor the stream's leader %s", stream.CachedInfo().Cluster.Leader)
	}
	xname := c.Server(x).Name()
	c.Stop(x)
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C1", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	group := cons.CachedInfo().Cluster
	if !slices.ContainsFunc(group.Replicas, func(p *jetstream.PeerInfo) bool { return p.Name == xname }) {
		t.Fatalf("setup: the consumer's group %s was placed without %s", group.RaftGroup, xname)
	}
	if err := BlockRaftGroup(c.StoreDir(x), group.RaftGroup); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(x); err != nil {
		t.Fatal(err)
	}
	// x creates the consumer once it has caught up with the meta group.
	if err := WaitFor(15*time.Second, xname+" failing to create "+group.RaftGroup, func() bool {
		return len(c.Log(x).Lines("Error creating filestore WAL")) > 0
	}); err != nil {
		t.Fatalf("setup: %v", err)
	}
	var leaders []string
	_ = WaitFor(3*time.Second, "second leader", func() bool {
		leaders = ConsumerLeaders(c, "$G", "S1", "C1")
		return len(leaders) > 1
	})
	if len(leaders) < 2 {
		t.Fatalf("not reproduced: after %s failed to create the consumer's Raft group, the consumer has leaders %v, not two; nats-server no longer runs such a member as the leader (update docs/found.md N2)", xname, leaders)
	}
	t.Logf("%s could not create %s: %q; leaders of the consumer by each server's /jsz: %v; by the JetStream API: %s",
		xname, group.RaftGroup, c.Log(x).Lines("Error creating filestore WAL")[0], leaders, apiLeaders(c, "$G", "S1", "C1"))
	if h := c.Server(x).Healthz(nil); h.Error != "" {
		t.Logf("%s's healthz: %s", xname, h.Error)
	}

	// What a client sees: one fetch gets every message twice.
	const n = 10
	for i := range n {
		if _, err := js.Publish(ctx, "s1", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	batch, err := cons.Fetch(2*n, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	copies := map[uint64][]jetstream.Msg{}
	for m := range batch.Messages() {
		md, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		copies[md.Sequence.Stream] = append(copies[md.Sequence.Stream], m)
	}
	if err := batch.Error(); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	twice := 0
	for seq := uint64(1); seq <= n; seq++ {
		if len(copies[seq]) == 2 && sameDelivery(copies[seq][0], copies[seq][1]) {
			twice++
		}
	}
	t.Logf("one fetch of %d published messages: %d delivered twice with the same consumer sequence; copies per stream sequence: %v", n, twice, counts(copies))
	if twice != n {
		t.Fatalf("expected each of the %d messages twice from the two leaders, got %v", n, counts(copies))
	}

	// Nak one copy of each and ack the other, as two workers would: the
	// ack, which both leaders receive too, takes the nak'd message away.
	// First the fetch's pull request expires on the leader, so that a nak'd
	// message is not redelivered into it (the client reads it no more).
	if err := WaitFor(5*time.Second, "expired pull request", func() bool {
		ci, err := cons.Info(ctx)
		return err == nil && ci.NumWaiting == 0
	}); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= n; seq++ {
		if err := copies[seq][0].Nak(); err != nil {
			t.Fatal(err)
		}
		if err := copies[seq][1].Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var info *jetstream.ConsumerInfo
	if err := WaitFor(5*time.Second, "consumer with nothing pending", func() bool {
		info, err = cons.Info(ctx)
		return err == nil && info.NumPending == 0 && info.NumAckPending == 0
	}); err != nil {
		t.Fatalf("%v: %+v", err, info)
	}
	batch, err = cons.Fetch(n, jetstream.FetchMaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	again := 0
	for range batch.Messages() {
		again++
	}
	t.Logf("after a nak of one copy and an ack of the other of each: consumer info NumPending %d NumAckPending %d NumRedelivered %d, ack floor %d; a fetch redelivers %d of the %d nak'd messages",
		info.NumPending, info.NumAckPending, info.NumRedelivered, info.AckFloor.Stream, again, n)
	if again != 0 {
		t.Fatalf("expected the acks of the second copies to have taken the nak'd messages away, yet %d came again", again)
	}
}

// sameDelivery says whether a and b are the same delivery of a message:
// the same stream and consumer sequences and delivery count.
func sameDelivery(a, b jetstream.Msg) bool {
	ma, erra := a.Metadata()
	mb, errb := b.Metadata()
	return erra == nil && errb == nil && ma.Sequence == mb.Sequence && ma.NumDelivered == mb.NumDelivered
}

// counts is the number of copies of each stream sequence.
func counts(copies map[uint64][]jetstream.Msg) map[uint64]int {
	n := map[uint64]int{}
	for seq, ms := range copies {
		n[seq] = len(ms)
	}
	return n
}

// apiLeaders is whether each running server leads the consumer, as its
// JetStreamIsConsumerLeader says (the view the JetStream API answers by).
func apiLeaders(c *Cluster, account, stream, consumer string) string {
	var b strings.Builder
	for i := range c.Servers() {
		if s := c.Server(i); s != nil {
			fmt.Fprintf(&b, "%s=%v ", s.Name(), s.JetStreamIsConsumerLeader(account, stream, consumer))
		}
	}
	return strings.TrimSpace(b.String())
}

// connect is a client of s and its JetStream.
// startCluster starts three in-process servers in temporary dirs and
// connects to the meta leader (its index meta); both are shut down when
// the test ends.
func startCluster(t *testing.T) (c *Cluster, meta int, nc *nats.Conn, js jetstream.JetStream) {
	t.Helper()
	c, err := StartCluster([]string{t.TempDir(), t.TempDir(), t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	meta = c.MetaLeader()
	nc, js = connect(t, c.Server(meta))
	t.Cleanup(nc.Close)
	return c, meta, nc, js
}

func connect(t *testing.T, s *server.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}
