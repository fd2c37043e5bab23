// Command workload is gofault's workload for the NATS JetStream profile
// (targets/nats): one nats.go connection per server (each talking to that
// server only: no discovered servers, reconnects to the same one) creates
// R3 file-backed streams whose byte limit makes the file store roll over
// to a new 32 KB block every hundred or so messages, and runs a mix of the
// JetStream API through every server (NATS_WORKLOAD_MIX; mix.go):
// publishes with acks (a unique Nats-Msg-Id each) to every stream, fetches
// through a durable pull consumer per server and stream that ack, or nak
// a third of the messages, stream info; on stream A (api.go) publishes,
// purges of the whole stream and of one subject, message deletes,
// configuration updates and replica-count changes (1, 3, 2, 3 replicas in
// turn); on bucket KV get, put, delete and create-or-update at the
// revision last seen, recorded as a history for the linearizability
// checker (keys kv/k0…); on object store OBJ puts of up to 64 KB in 16 KB
// chunks, each read back. It reports each server's health (/healthz) and
// whether it leads the JetStream meta group. It checks (violation names
// are stable):
//
//   - message-lost: an acknowledged message at or above the stream's first
//     sequence is not read back at the sequence its ack named (or two acks
//     named one sequence, or consumers were delivered two messages at one
//     sequence);
//   - message-duplicated: one message stored at two sequences;
//   - stream-stalled: after the load, a stream accepts publishes through
//     some servers but not through another that accepts publishes to other
//     streams;
//   - stream-unavailable: after the load, a stream accepts no publish
//     through any server while another stream does (the partial failure an
//     operator pages on first; reported even when some servers accept
//     nothing);
//   - consumer-stalled, consumer-unavailable: the same for the durable
//     consumers (every client's, fetched through every server), judged
//     through the servers that accepted a publish to the consumer's stream;
//   - recovery: after the load, a server accepts no publish to any stream
//     within NATS_WORKLOAD_RECOVERY;
//   - consumer-lost, consumer-redelivery: a durable consumer that, drained
//     after the load, says nothing is pending or unacknowledged, yet never
//     delivered an acknowledged message, or never delivered a nak'd one
//     again;
//   - purge-reappeared, delete-reappeared, message-lost on stream A: a
//     message acknowledged before an acknowledged purge of its subject was
//     sent, or a sequence whose delete was acknowledged, is read back; a
//     message no purge or delete can have taken is not (judgeAPI);
//   - update-lost: right after an acknowledged update or replica-count
//     change of stream A, its leader reports a last sequence below one
//     acknowledged before the update was sent;
//   - object-lost, object-mismatch: an object whose put was acknowledged
//     is not found, or reads back with other content (at once and after
//     the load). A mismatch whose stored chunks are nats.go's resend of a
//     reused chunk (docs/found.md N4, objresend.go) is the client's: the
//     read reports it as its error, saying what it dismissed, not as a
//     finding.
//
// The buckets' streams answer gets from their leader only (AllowDirect
// off): a direct get may come from a follower behind the leader, which
// promises no linearizable read.
//
// and reports, per server, a digest of that server's own replica of every
// stream (first and last sequence, message count, from the server's
// /jsz?streams=true: StreamInfo answers with the stream leader's view from
// any server, so a replica that is behind or wedged is invisible there) for
// the replicas checker, once the replicas agree or NATS_WORKLOAD_CONVERGE
// passed.
//
// Phases: setup (connect; create the streams once the meta group has a
// leader; create the consumers; wait up to 5 s until all their replicas
// are current; a setup the cluster refused — a server that says its meta
// layer stopped on a write error before the streams exist, see meta.go,
// or streams and consumers it would not create even with the recovery
// bound to retry — ends the trial there as not judged, see
// setupOrGiveUp), load (NATS_WORKLOAD_DURATION), verify (the recovery
// checks), read (every stream read back with an ephemeral pull consumer
// and checked; before it, every durable consumer drained, and after it,
// every object read back), digest. Every choice derives from GOFAULT_SEED.
//
// Environment, beside the workload contract (see package workload):
//
//	NATS_WORKLOAD_DURATION  length of the load phase (default 4s)
//	NATS_WORKLOAD_STREAMS   number of streams (default 2)
//	NATS_WORKLOAD_RATE      operations per second per client (default 40)
//	NATS_WORKLOAD_MIX       weights of the operations, e.g. "publish=30,kv-get=20"
//	                        (unnamed ones get 0; default "publish=44,fetch=8,
//	                        fetch-nak=6,info=4,a-publish=10,purge=1,purge-subject=2,
//	                        delete-msg=3,update=1,scale=1,kv-get=8,kv-put=5,
//	                        kv-delete=2,kv-update=6,object=2")
//	NATS_WORKLOAD_PAYLOAD   payload bytes per message (default 256)
//	NATS_WORKLOAD_MAX_BYTES streams' byte limit (default 120000: 32 KB blocks)
//	NATS_WORKLOAD_RECOVERY  recovery bound of the verify phase (default 15s: above nats-server's 4-9 s election timeout)
//	NATS_WORKLOAD_CONVERGE  how long the digest phase waits for the replicas to agree (default 5s)
//	NATS_WORKLOAD_PORT      name of the servers' client port (default "client")
//	NATS_WORKLOAD_MONITOR   name of the servers' monitoring port (default "monitor")
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gofault/gofault/workload"
)

func main() { workload.Main(run) }

// config is the workload's tunables.
type config struct {
	duration, recovery, converge time.Duration
	streams, rate, payload       int
	maxBytes                     int
	port, monitor                string
	mix                          mix
}

func loadConfig(getenv func(string) string) (config, error) {
	s := workload.NewSettings(getenv)
	c := config{
		duration: s.Duration("NATS_WORKLOAD_DURATION", 4*time.Second),
		recovery: s.Duration("NATS_WORKLOAD_RECOVERY", 15*time.Second),
		converge: s.Duration("NATS_WORKLOAD_CONVERGE", 5*time.Second),
		streams:  s.Int("NATS_WORKLOAD_STREAMS", 2),
		rate:     s.Int("NATS_WORKLOAD_RATE", 40),
		payload:  s.Int("NATS_WORKLOAD_PAYLOAD", 256),
		maxBytes: s.Int("NATS_WORKLOAD_MAX_BYTES", 120000),
		port:     s.String("NATS_WORKLOAD_PORT", "client"),
		monitor:  s.String("NATS_WORKLOAD_MONITOR", "monitor"),
		mix:      defaultMix,
	}
	var mixErr error
	if v := s.String("NATS_WORKLOAD_MIX", ""); v != "" {
		c.mix, mixErr = parseMix(v)
	}
	if err := errors.Join(s.Err(), mixErr); err != nil {
		return c, err
	}
	if c.streams < 1 || c.rate < 1 || c.payload < 32 || c.maxBytes < 1 {
		return c, errors.New("NATS_WORKLOAD_STREAMS and _RATE must be at least 1, _PAYLOAD at least 32, _MAX_BYTES positive")
	}
	return c, nil
}

// streamNames are the workload's streams: S1, S2, ….
func streamNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("S%d", i+1)
	}
	return names
}

func run(ctx context.Context, t *workload.T) error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	slog.Info("nats workload", "duration", cfg.duration, "streams", cfg.streams, "rate", cfg.rate, "mix", cfg.mix.String())
	streams := streamNames(cfg.streams)
	led := newLedger()
	var clients []*client
	for i, n := range t.Nodes() {
		addr, mon := n.Addr(cfg.port), n.Addr(cfg.monitor)
		if addr == "" || mon == "" {
			return fmt.Errorf("node %s has no %q or %q port (set NATS_WORKLOAD_PORT, NATS_WORKLOAD_MONITOR)", n.Name, cfg.port, cfg.monitor)
		}
		clients = append(clients, &client{
			cfg:     cfg,
			streams: streams,
			wc:      t.Client(n.Name),
			url:     "nats://" + addr,
			monitor: "http://" + mon,
			http:    &http.Client{Timeout: 2 * time.Second},
			rng:     rand.New(rand.NewPCG(uint64(t.Seed()), uint64(i))),
			led:     led,
			kvSeen:  map[string]kvSeen{},
		})
	}
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	var unjudged string
	if err := t.Phase("setup", func(ctx context.Context) error {
		why, err := setupOrGiveUp(ctx, clients)
		unjudged = why
		return err
	}); err != nil {
		return err
	}
	if unjudged != "" {
		slog.Warn("the trial cannot be judged; skipping its load and checks", "why", unjudged)
		t.NotJudged(unjudged)
		return nil
	}
	if err := t.Phase("load", func(ctx context.Context) error {
		lctx, cancel := t.Load(ctx, cfg.duration)
		defer cancel()
		workload.Each(clients, func(c *client) error { c.load(lctx); return nil })
		return ctx.Err()
	}); err != nil {
		return err
	}
	if err := t.Phase("verify", func(ctx context.Context) error {
		rs := resources(streams, durables(clients))
		got := make([]map[string]probe, len(clients))
		workload.Each(clients, func(c *client) error { got[c.index(clients)] = c.verify(ctx, rs); return nil })
		if ctx.Err() != nil {
			return ctx.Err()
		}
		servers := make([]string, len(clients))
		byServer := map[string]map[string]probe{}
		for i, c := range clients {
			servers[i] = c.wc.Node()
			byServer[c.wc.Node()] = got[i]
		}
		for _, f := range judgeRecovery(servers, rs, byServer) {
			c := clients[0]
			for _, o := range clients {
				if o.wc.Node() == f.node {
					c = o
				}
			}
			c.wc.Violation(f.check, f.msg)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := t.Phase("read", func(ctx context.Context) error { return readBack(ctx, clients, led) }); err != nil {
		return err
	}
	return t.Phase("digest", func(ctx context.Context) error { return digests(ctx, clients) })
}

// setup connects every client, creates the streams through the first
// client (once the meta group has a leader), then every client's
// durable consumers, and waits (a while at most) until every stream and
// consumer has a leader and all its replicas are current. A consumer
// created a moment ago is not yet current on its followers: their
// /healthz fails, and logs a warning, until it is. The wait asks the
// leaders, whose answers log nothing.
//
// The creation gets workload.DefaultSetupTimeout in all. When it fails,
// every client retries creating the streams and its consumers through its
// own server, for the recovery bound in all; if that fails too, setup
// returns a *setupError. A meta layer outage (meta.go) is an
// *outageError. retried says whether the retry ran.
func setup(ctx context.Context, clients []*client) (retried bool, err error) {
	if err := workload.Each(clients, func(c *client) error { return c.connect(ctx) }); err != nil {
		return false, err
	}
	if why := waitMeta(ctx, clients); why != "" {
		return false, &outageError{why: why}
	}
	fctx, cancel := context.WithTimeout(ctx, workload.DefaultSetupTimeout)
	defer cancel()
	first := watchMeta(fctx, clients, func(ctx context.Context) error {
		creates := []func(context.Context) error{clients[0].createStreams, clients[0].createAPI}
		if err := workload.Each(creates, func(create func(context.Context) error) error { return create(ctx) }); err != nil {
			return err
		}
		return workload.Each(clients, func(c *client) error { return c.createConsumers(ctx) })
	})
	var oe *outageError
	if first != nil && (errors.As(first, &oe) || ctx.Err() != nil) {
		return false, first
	}
	if first != nil {
		recovery := clients[0].cfg.recovery
		slog.Warn("setup failed; retrying through every server for the recovery bound", "err", first, "bound", recovery)
		rctx, cancel := context.WithTimeout(ctx, recovery)
		defer cancel()
		retry := watchMeta(rctx, clients, func(ctx context.Context) error {
			return workload.Each(clients, func(c *client) error {
				// Bounded by rctx as a whole, not per stream.
				c.wc.SetupTimeout = recovery
				defer func() { c.wc.SetupTimeout = 0 }()
				if err := c.createStreams(ctx); err != nil {
					return err
				}
				if err := c.createAPI(ctx); err != nil {
					return err
				}
				return c.createConsumers(ctx)
			})
		})
		switch {
		case errors.As(retry, &oe) || ctx.Err() != nil:
			return true, retry
		case retry != nil:
			return true, &setupError{first: first, retry: retry, recovery: recovery}
		}
	}
	workload.Each(clients, func(c *client) error { c.waitCurrent(ctx); return nil })
	return first != nil, ctx.Err()
}

// readBack drains every durable consumer (and meanwhile sets stream A back
// to three current replicas: restoreAPI), reads every stream (and stream
// A) back through the first client that can and checks it against the
// acks and the consumers' deliveries (judgeConsumer, judgeAPI), then reads
// every acknowledged object back (judgeObject). Each attempt to read a
// stream gets its share of what is left of the workload's time
// (readTimeout), so the phase ends, and the digest phase runs, even when
// every attempt fails.
func readBack(ctx context.Context, clients []*client, led *ledger) error {
	type durable struct {
		c      *client
		stream string
	}
	var ds []durable
	for _, c := range clients {
		for _, st := range c.streams {
			ds = append(ds, durable{c, st})
		}
	}
	restore := func() {}
	if clients[0].api != nil {
		restore = func() { clients[0].restoreAPI(ctx) }
	}
	var wg sync.WaitGroup
	wg.Go(restore)
	defer wg.Wait()
	workload.Each(ds, func(d durable) error {
		ok := d.c.drain(ctx, d.stream)
		led.drained(d.stream, d.c.durable(), ok)
		if !ok && ctx.Err() == nil {
			slog.Info("consumer not drained; its deliveries are not judged", "consumer", d.c.durable(), "stream", d.stream)
		}
		return nil
	})
	streams := clients[0].streams
	if clients[0].api != nil {
		streams = append(streams[:len(streams):len(streams)], apiStream)
	}
	wg.Wait()
	for si, name := range streams {
		var read streamRead
		var err error
		for ci, c := range clients {
			left := (len(streams)-si-1)*len(clients) + len(clients) - ci
			deadline, _ := ctx.Deadline()
			rctx, cancel := context.WithTimeout(ctx, readTimeout(time.Now(), deadline, clients[0].cfg.converge, left))
			read, err = c.readStream(rctx, name)
			cancel()
			if err == nil {
				break
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// No server could serve the stream: the recovery checks said
			// so already; nothing to compare.
			clients[0].wc.Error(fmt.Errorf("read back %s: %w", name, err))
			continue
		}
		var fs []finding
		led.mu.Lock()
		acks := slices.Clone(led.acks[name])
		n := len(acks)
		if name == apiStream {
			n = len(led.apiMsgs)
			fs = judgeAPI(name, led.apiMsgs, led.removals, read)
		} else {
			fs = checkMessages(name, acks, read, led.conflicts[name])
		}
		led.mu.Unlock()
		if name != apiStream {
			for _, d := range durables(clients) {
				fs = append(fs, judgeConsumer(name, d, acks, read.first, led.consumerLog(name, d))...)
			}
		}
		for _, f := range fs {
			clients[0].wc.Violation(f.check, f.msg)
		}
		slog.Info("read back", "stream", name, "first", read.first, "last", read.last, "read", len(read.ids), "acked", n)
	}
	readObjects(ctx, clients, led)
	return ctx.Err()
}

// readObjects reads every acknowledged object back through the first
// client that can, and judges it, for objectsWait at most (and within the
// read phase's share of the time left).
func readObjects(ctx context.Context, clients []*client, led *ledger) {
	if clients[0].obj == nil {
		return
	}
	deadline, _ := ctx.Deadline()
	ctx, cancel := context.WithTimeout(ctx, min(objectsWait, readTimeout(time.Now(), deadline, clients[0].cfg.converge, 1)))
	defer cancel()
	for _, name := range led.objectNames() {
		led.mu.Lock()
		put := led.objects[name]
		led.mu.Unlock()
		var resend *resendError
		for _, c := range clients {
			if err := c.checkObject(ctx, name, put); ctx.Err() != nil || err == nil || errors.As(err, &resend) {
				break
			}
		}
	}
}

// maxReadTimeout bounds one attempt to read a stream back; a default
// trial's stream (about 300 messages) reads in well under a second.
const maxReadTimeout = 10 * time.Second

// readTimeout is how long one of the left read attempts may take: at most
// maxReadTimeout, and an equal share of the time before the workload's
// deadline once the digest phase's converge wait and a second of margin
// are kept back (at least a second; no deadline: maxReadTimeout).
func readTimeout(now, deadline time.Time, converge time.Duration, left int) time.Duration {
	if deadline.IsZero() || left < 1 {
		return maxReadTimeout
	}
	share := (deadline.Sub(now) - converge - time.Second) / time.Duration(left)
	return min(maxReadTimeout, max(time.Second, share))
}

// digests waits until every server that answers holds every stream in the
// same state (or cfg.converge passed), then reports each server's digest
// for the replicas checker.
func digests(ctx context.Context, clients []*client) error {
	cfg := clients[0].cfg
	streams := clients[0].streams
	deadline := time.Now().Add(cfg.converge)
	for {
		states := make([]map[string]replicaState, len(clients))
		workload.Each(clients, func(c *client) error {
			states[c.index(clients)] = c.replicas(ctx)
			return nil
		})
		if converged(streams, states) || time.Now().After(deadline) || ctx.Err() != nil {
			for i, c := range clients {
				if states[i] != nil {
					c.wc.Digest("end", digest(streams, states[i]))
				}
			}
			return ctx.Err()
		}
		workload.Sleep(ctx, 200*time.Millisecond)
	}
}

// client talks to one server.
type client struct {
	cfg     config
	streams []string
	wc      *workload.Client
	url     string
	monitor string
	http    *http.Client
	rng     *rand.Rand
	led     *ledger
	seq     int
	health  time.Time

	nc   *nats.Conn
	js   jetstream.JetStream
	cons map[string]jetstream.Consumer
	// api, kv and obj are the handles on stream A and the buckets, and
	// kvStream on bucket KV's stream (nil when the mix does not use them).
	api      jetstream.Stream
	kv       jetstream.KeyValue
	kvStream jetstream.Stream
	obj      jetstream.ObjectStore
	// apiSeqs are the client's acknowledged sequences of stream A that it
	// has not deleted; kvSeen what it last saw of each key of bucket KV;
	// scales how many replica-count changes it made.
	apiSeqs []uint64
	kvSeen  map[string]kvSeen
	scales  int
	// probes are verify's handles on every durable consumer.
	probes map[resource]jetstream.Consumer
}

func (c *client) index(clients []*client) int {
	for i := range clients {
		if clients[i] == c {
			return i
		}
	}
	return -1
}

func (c *client) close() {
	if c.nc != nil {
		c.nc.Close()
	}
}

// connect opens the client's connection to its server only: discovered
// servers are ignored and a lost connection is re-established to the same
// server every 100 ms, for as long as the workload runs.
func (c *client) connect(ctx context.Context) error {
	err := c.wc.Setup(ctx, "connect", func(ctx context.Context) error {
		nc, err := nats.Connect(c.url,
			nats.Name(c.wc.Name()),
			nats.IgnoreDiscoveredServers(),
			nats.DontRandomize(),
			nats.MaxReconnects(-1),
			nats.ReconnectWait(100*time.Millisecond),
			nats.ReconnectJitter(0, 0),
			// Publishes while disconnected fail at once rather than
			// wait in a buffer.
			nats.ReconnectBufSize(-1),
			nats.Timeout(time.Second),
		)
		if err != nil {
			return err
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return err
		}
		c.nc, c.js = nc, js
		return nil
	})
	if err != nil {
		return fmt.Errorf("connect to %s (%s): %w", c.wc.Node(), c.url, err)
	}
	return nil
}

// createStreams creates every stream (or finds it), waiting for the meta
// group to elect a leader.
func (c *client) createStreams(ctx context.Context) error {
	for _, name := range c.streams {
		err := c.wc.Setup(ctx, "create stream "+name, func(ctx context.Context) error {
			_, err := c.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
				Name:     name,
				Subjects: []string{strings.ToLower(name) + ".>"},
				Storage:  jetstream.FileStorage,
				Replicas: 3,
				// A byte limit below 128 KB makes the file store use its
				// smallest blocks (32 KB; stream.go
				// autoTuneFileStorageBlockSize), so a trial's messages span
				// several blocks. The load stays below the limit: nothing
				// is discarded in a default trial.
				MaxBytes: int64(c.cfg.maxBytes),
				Discard:  jetstream.DiscardOld,
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("create stream %s through %s: %w", name, c.wc.Node(), err)
		}
	}
	return nil
}

// createConsumers creates the client's durable pull consumer on every
// stream, through its server.
func (c *client) createConsumers(ctx context.Context) error {
	c.cons = map[string]jetstream.Consumer{}
	for _, name := range c.streams {
		err := c.wc.Setup(ctx, "create consumer on "+name, func(ctx context.Context) error {
			cons, err := c.js.CreateOrUpdateConsumer(ctx, name, jetstream.ConsumerConfig{
				Durable:   c.durable(),
				AckPolicy: jetstream.AckExplicitPolicy,
				AckWait:   ackWait,
			})
			if err != nil {
				return err
			}
			c.cons[name] = cons
			return nil
		})
		if err != nil {
			return fmt.Errorf("create consumer on %s through %s: %w", name, c.wc.Node(), err)
		}
	}
	return c.bindAPI(ctx)
}

func (c *client) stream() string { return c.streams[c.rng.IntN(len(c.streams))] }

// load runs operations drawn from the mix at the configured rate, and
// reports health every 250 ms, until ctx ends.
func (c *client) load(ctx context.Context) {
	pause := time.Second / time.Duration(c.cfg.rate)
	for ctx.Err() == nil {
		if time.Since(c.health) >= 250*time.Millisecond {
			c.reportHealth(ctx)
		}
		c.step(ctx, c.cfg.mix.pick(c.rng))
		workload.Sleep(ctx, pause)
	}
}

// info asks the client's server for the stream's info (answered by the
// stream's leader; jetstream.Stream is one STREAM.INFO request).
func (c *client) info(ctx context.Context, stream string) {
	_ = c.wc.Do(ctx, "stream-info", stream, func(ctx context.Context) error {
		_, err := c.js.Stream(ctx, stream)
		return err
	})
}

// publish sends one message with a fresh ID to the stream through the
// client's server and records its ack; it returns the publish's error.
func (c *client) publish(ctx context.Context, stream string) error {
	id := c.nextID()
	payload := []byte(id + " " + strings.Repeat("x", max(0, c.cfg.payload-len(id)-1)))
	subj := strings.ToLower(stream) + "." + c.wc.Node()
	return c.wc.Do(ctx, "publish", stream, func(ctx context.Context) error {
		ack, err := c.js.Publish(ctx, subj, payload, jetstream.WithMsgID(id), jetstream.WithExpectStream(stream))
		if err != nil {
			return err
		}
		c.led.ack(stream, pubAck{seq: ack.Sequence, id: id})
		return nil
	})
}

// fetch pulls up to 20 messages from the client's consumer on the stream
// and acks them; with nak, it naks about a third of them instead (the
// consumer must deliver those again).
func (c *client) fetch(ctx context.Context, stream string, nak bool) {
	cons := c.cons[stream]
	kind := "fetch"
	if nak {
		kind = "fetch-nak"
	}
	_ = c.wc.Do(ctx, kind, stream, func(ctx context.Context) error {
		batch, err := cons.FetchNoWait(20)
		if err != nil {
			return err
		}
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				return err
			}
			c.led.delivered(stream, c.durable(), md.Sequence.Stream, messageID(m.Data()))
			if nak && c.rng.IntN(3) == 0 {
				c.led.nakked(stream, c.durable(), md.Sequence.Stream)
				if err := m.Nak(); err != nil {
					return err
				}
				continue
			}
			if err := m.Ack(); err != nil {
				return err
			}
		}
		return batch.Error()
	})
}

// messageID is the ID a payload starts with.
func messageID(payload []byte) string {
	id, _, _ := strings.Cut(string(payload), " ")
	return id
}

// durables are the names of the clients' durable consumers, one per
// client on every stream.
func durables(clients []*client) []string {
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = c.durable()
	}
	return names
}

// durable is the name of the client's durable consumer on every stream.
func (c *client) durable() string { return durableName(c.wc.Node()) }

// verify tries every resource through the client's server, in turn,
// until each was served once or the recovery bound passed: a stream is
// served when a publish to it is acknowledged, a consumer (any client's
// durable) when a fetch through this server delivers a message. A
// consumer is tried only once its stream accepted a publish through this
// server, which leaves it a message to deliver (judgeRecovery judges it
// only then). It returns what the tries found, by resource name.
func (c *client) verify(ctx context.Context, rs []resource) map[string]probe {
	vctx, cancel := context.WithTimeout(ctx, c.cfg.recovery)
	defer cancel()
	start := time.Now()
	got := map[string]probe{}
	served := func() int {
		n := 0
		for _, p := range got {
			if p.ok {
				n++
			}
		}
		return n
	}
	// Streams first in every round: a hung consumer probe (up to
	// consumeWait and a second) must not space out a stream's tries.
	ordered := make([]resource, 0, len(rs))
	for _, consumers := range []bool{false, true} {
		for _, r := range rs {
			if (r.consumer != "") == consumers {
				ordered = append(ordered, r)
			}
		}
	}
	for served() < len(rs) && vctx.Err() == nil {
		for _, r := range ordered {
			p := got[r.String()]
			if p.ok || vctx.Err() != nil {
				continue
			}
			if r.consumer != "" && !got[resource{stream: r.stream}.String()].ok {
				continue // judged only once its stream took a publish here
			}
			var err error
			if r.consumer == "" {
				err = c.publish(vctx, r.stream)
			} else {
				err = c.consume(vctx, r)
			}
			p.tries++
			p.ok = err == nil
			if err != nil && (p.err == "" || vctx.Err() == nil) {
				// A try cut short by the bound keeps the last real error.
				p.err = err.Error()
			}
			got[r.String()] = p
		}
		if served() < len(rs) {
			workload.Sleep(vctx, 100*time.Millisecond)
		}
	}
	if d := time.Since(start); d > time.Second && ctx.Err() == nil {
		slog.Info("verify", "node", c.wc.Node(), "took", d.Round(time.Millisecond), "served", served(), "of", len(rs))
	}
	return got
}

// consumeWait bounds one fetch of verify's: a consumer with a leader
// delivers a pending message at once.
const consumeWait = time.Second

// consume fetches one message from the durable consumer r through the
// client's server and naks it, so that it stays pending for the other
// clients' fetches (verify's publishes leave each consumer at least one
// message it has not delivered). It reports progress when a message came,
// and returns why none did. Failures are not reported as client errors:
// the fetch of another client's consumer is a probe of the resource, and
// judgeRecovery reports what it found.
func (c *client) consume(ctx context.Context, r resource) error {
	cctx, cancel := context.WithTimeout(ctx, consumeWait+time.Second)
	defer cancel()
	cons, ok := c.probes[r]
	if !ok {
		var err error
		if cons, err = c.js.Consumer(cctx, r.stream, r.consumer); err != nil {
			return fmt.Errorf("consumer info: %w", err)
		}
		if c.probes == nil {
			c.probes = map[resource]jetstream.Consumer{}
		}
		c.probes[r] = cons
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(consumeWait))
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	n := 0
	for m := range batch.Messages() {
		n++
		if md, err := m.Metadata(); err == nil {
			c.led.delivered(r.stream, r.consumer, md.Sequence.Stream, messageID(m.Data()))
		}
		_ = m.Nak()
	}
	if n > 0 {
		c.wc.Progress("fetch " + r.String())
		return nil
	}
	if err := batch.Error(); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	return fmt.Errorf("fetch: no message within %s", consumeWait)
}

// leaderInfo returns the stream's info as its leader answers it. Any
// member of a clustered stream may answer stream info: one whose replica
// stopped (a Raft write error, docs/found.md N5) counts itself leaderless
// and answers with its own state, empty or behind, naming no leader. Such
// an answer is asked again a few times, then reported as an error (the
// read back tries another server) rather than judged as the stream's
// contents: it once made 92 messages that two members held look lost.
func leaderInfo(ctx context.Context, st jetstream.Stream) (*jetstream.StreamInfo, error) {
	const tries = 5
	for i := 1; ; i++ {
		info, err := st.Info(ctx)
		if err != nil {
			return nil, err
		}
		if !leaderless(info) {
			return info, nil
		}
		if i == tries {
			return nil, fmt.Errorf("%d answers named no leader (the last: first %d, last %d, %d messages): a member whose replica is not current answered", tries, info.State.FirstSeq, info.State.LastSeq, info.State.Msgs)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// leaderless reports whether a clustered stream's info names no leader.
func leaderless(info *jetstream.StreamInfo) bool {
	return info.Cluster != nil && info.Cluster.Leader == ""
}

// readStream reads the whole stream back through an ephemeral pull
// consumer on the client's server, until ctx ends: the message ID at every
// sequence from the stream's first to its last at the time of the read
// (done at the last sequence, or once it read as many messages as the
// stream said it holds).
//
// Not an ordered consumer: its Fetch re-creates the consumer every time,
// and retries a failed create forever, each try under its own 10 s
// timeout, whatever the caller's context says (nats.go v1.55.0
// jetstream/ordered.go: reset, MaxResetAttempts 0 meaning unlimited).
// A create that kept failing — a server whose JetStream a disk error
// disabled — held the read phase past the workload's deadline (fuzz
// trial 2-11). Here every call is bounded by ctx or by its own wait.
func (c *client) readStream(ctx context.Context, name string) (streamRead, error) {
	read := streamRead{ids: map[uint64]string{}}
	st, err := c.js.Stream(ctx, name)
	if err != nil {
		return read, fmt.Errorf("stream %s through %s: %w", name, c.wc.Node(), err)
	}
	info, err := leaderInfo(ctx, st)
	if err != nil {
		return read, fmt.Errorf("stream info %s through %s: %w", name, c.wc.Node(), err)
	}
	read.first, read.last = info.State.FirstSeq, info.State.LastSeq
	if info.State.Msgs == 0 {
		return read, nil
	}
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckNonePolicy,
		Replicas:      1,
		MemoryStorage: true,
		// Removed by the server if the delete below does not get through.
		InactiveThreshold: 30 * time.Second,
	})
	if err != nil {
		return read, fmt.Errorf("consumer on %s through %s: %w", name, c.wc.Node(), err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = st.DeleteConsumer(dctx, cons.CachedInfo().Name)
	}()
	for ctx.Err() == nil {
		batch, err := cons.Fetch(200, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return read, fmt.Errorf("read %s through %s: %w", name, c.wc.Node(), err)
		}
		n := 0
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				return read, fmt.Errorf("read %s through %s: %w", name, c.wc.Node(), err)
			}
			read.ids[md.Sequence.Stream] = messageID(m.Data())
			n++
			if md.Sequence.Stream >= read.last {
				return read, nil
			}
		}
		// Every message the stream said it holds: the last sequences
		// may be deleted ones (stream A's), which no consumer delivers.
		if uint64(len(read.ids)) >= info.State.Msgs {
			return read, nil
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return read, fmt.Errorf("read %s through %s: %w", name, c.wc.Node(), err)
		}
		if n == 0 {
			return read, fmt.Errorf("read %s through %s: no message after %d of %d", name, c.wc.Node(), len(read.ids), read.last)
		}
	}
	return read, fmt.Errorf("read %s through %s: %w", name, c.wc.Node(), ctx.Err())
}

// settleWait bounds how long the setup waits for the replicas to settle.
const settleWait = 5 * time.Second

// waitCurrent waits, for at most settleWait, until every stream and the
// client's consumer on it have a leader and all their replicas are
// current, in the leaders' view. It is a courtesy to the servers' health
// checks, not a requirement: a replica that a fault in the setup stopped
// (nats-server stops a Raft group on a critical write error) never
// becomes current, and the load goes on with the others; the checks after
// the load judge it. The attempts are not reported.
func (c *client) waitCurrent(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, settleWait)
	defer cancel()
	var last error
	for _, name := range c.streams {
		for {
			if last = c.current(wctx, name); last == nil || wctx.Err() != nil {
				break
			}
			workload.Sleep(wctx, 100*time.Millisecond)
		}
	}
	if last != nil && ctx.Err() == nil {
		slog.Warn("replicas not settled; loading anyway", "node", c.wc.Node(), "err", last)
	}
}

// current says why the stream or the client's consumer on it is not
// settled, or nil.
func (c *client) current(ctx context.Context, name string) error {
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := c.js.Stream(rctx, name)
	if err != nil {
		return err
	}
	if err := allCurrent(st.CachedInfo().Cluster, 3); err != nil {
		return fmt.Errorf("stream %s: %w", name, err)
	}
	ci, err := c.cons[name].Info(rctx)
	if err != nil {
		return err
	}
	if err := allCurrent(ci.Cluster, 3); err != nil {
		return fmt.Errorf("consumer %s on %s: %w", ci.Name, name, err)
	}
	return nil
}

// get fetches one JSON document from the server's monitoring endpoint; a
// status other than 200 is an error.
func (c *client) get(ctx context.Context, path string, v any) error {
	status, err := c.getAny(ctx, path, v)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, status, http.StatusText(status))
	}
	return nil
}

// jsz is the part of a server's /jsz?streams=true the workload reads.
type jsz struct {
	// Disabled: the server runs without JetStream — as nats-server
	// does by design after a critical storage error ("JetStream out of
	// resources, will be DISABLED"); it holds no replicas then.
	Disabled bool `json:"disabled"`
	Meta     *struct {
		Leader string `json:"leader"`
	} `json:"meta_cluster"`
	Accounts []struct {
		Streams []struct {
			Name  string `json:"name"`
			State struct {
				Msgs     uint64 `json:"messages"`
				FirstSeq uint64 `json:"first_seq"`
				LastSeq  uint64 `json:"last_seq"`
			} `json:"state"`
		} `json:"stream_detail"`
	} `json:"account_details"`
}

// replicas reads the server's own replicas of the streams from its /jsz;
// nil when it does not answer.
func (c *client) replicas(ctx context.Context) map[string]replicaState {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var j jsz
	if err := c.get(rctx, "/jsz?streams=true", &j); err != nil {
		slog.Info("jsz", "node", c.wc.Node(), "err", err)
		return nil
	}
	if j.Disabled {
		// The server gave its replicas up and says so: an admitted
		// loss of a replica, not a silent divergence. The health report
		// carries it to the gray and recovery checkers.
		c.wc.Health(false, "JetStream disabled")
		return nil
	}
	states := map[string]replicaState{}
	for _, a := range j.Accounts {
		for _, s := range a.Streams {
			states[s.Name] = replicaState{Messages: s.State.Msgs, FirstSeq: s.State.FirstSeq, LastSeq: s.State.LastSeq}
		}
	}
	return states
}

// reportHealth reports the server's /healthz, and whether it leads the
// JetStream meta group (the calibration trial kills the leader).
func (c *client) reportHealth(ctx context.Context) {
	c.health = time.Now()
	rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	var h struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := c.get(rctx, "/healthz", &h); err != nil {
		if ctx.Err() == nil {
			c.wc.Health(false, "healthz: "+err.Error())
		}
		return
	}
	var j jsz
	if err := c.get(rctx, "/jsz", &j); err == nil && j.Meta != nil && j.Meta.Leader == c.wc.Node() {
		c.wc.Leader()
		return
	}
	c.wc.Health(true, "healthz "+h.Status)
}
