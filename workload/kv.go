package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/gofault/gofault/record"
)

// CheckRecovery is the guarantee KVClient.Verify reports as broken: once
// the load stops, a node serves no linearizable read and write within the
// recovery bound.
const CheckRecovery = "recovery"

// Intervals of a KVClient's load: how often it asks its node for its
// health, and how long it waits for the answer.
const (
	healthEvery   = 250 * time.Millisecond
	healthTimeout = 500 * time.Millisecond
)

// KVService is how a target's HTTP key-value service is spoken: the
// requests of each operation and what their answers mean. It holds only
// what differs between targets; a KVClient does the rest (the history, the
// random mix, health reports, the recovery check) alike for all.
type KVService struct {
	// IDHeader names the header that carries a write's unique ID; empty
	// when the service takes none.
	IDHeader string
	// KeyPath is the path a put (PUT, the value as body) and a delete
	// (DELETE) of key go to.
	KeyPath func(key string) string
	// GetPath is the path of a linearizable read of key (GET). A 404
	// answer means the key has no value.
	GetPath func(key string) string
	// Value decodes a read's answer into the value; nil means the body
	// is the value.
	Value func(body string) (string, error)
	// ReadPath is the path of a read of key that is not linearizable, in
	// the named consistency (see Read); nil when the mix has none.
	ReadPath func(key, consistency string) string
	// CASPath is the path of a compare-and-swap of key from expect (POST,
	// the new value as body), answered "true" or "false"; nil when the
	// service has none.
	CASPath func(key, expect string) string
	// Written checks the answer of a put or delete; nil means any 2xx
	// answer is success.
	Written func(method, body string) error
	// Status asks the node what it says of itself (its status or health
	// call); the load reports it for the gray-failure checker and the
	// calibration trial. A node that answers with an error status may be
	// described by a NodeHealth rather than an error.
	Status func(ctx context.Context, c *KVClient) (NodeHealth, error)
	// VerifyRead is what the recovery violation calls the read Verify
	// checks, e.g. "linearizable read".
	VerifyRead string
	// Sent and Acked, if set, are told the ID of every write when it is
	// sent and when its answer is received (a ledger of the writes that
	// must be in every caught-up node's state).
	Sent, Acked func(id string)
}

// NodeHealth is what a node says of itself.
type NodeHealth struct {
	// Leader: the node says it is the leader (Client.Leader).
	Leader bool
	// OK and Msg are reported through Client.Health when it is not the
	// leader.
	OK  bool
	Msg string
}

// Mix is the load's share of each operation, in percent of Total (100
// when Total is 0); the shares must sum to it. Its draws come in this
// order: get, the reads, the extra operations, put, delete, cas.
type Mix struct {
	// Get is the share of linearizable reads, recorded in the history.
	Get int
	// Reads are the reads that are not linearizable.
	Reads []Read
	// Extra are the target's own operations (admin calls, say).
	Extra []ExtraOp
	// Put, Delete and CAS are the writes' shares.
	Put, Delete, CAS int
	// Total is what the shares sum to; 0 means 100. A mix of weights
	// (ParseWeights) sets it to their sum.
	Total int
}

// ExtraOp is an operation of a target's own that a KVClient's load draws
// beside the key-value ones.
type ExtraOp struct {
	// Name names it (in the mix variable, e.g. "snapshot").
	Name string
	// Percent is its share of the mix.
	Percent int
	// Run runs it once on the client; it reports its own requests and
	// must return within the client's request timeout or so.
	Run func(ctx context.Context, c *KVClient)
}

// Read is a read that is not linearizable, so not in the history.
type Read struct {
	// Consistency names it to KVService.ReadPath, e.g. "stale".
	Consistency string
	// Percent is its share of the mix.
	Percent int
	// Progress: the read needs a working cluster (a leader's read), so
	// its success is progress, reported as "<consistency>-read <key>"; a
	// read the node serves alone (stale) reports only its failure.
	Progress bool
}

// KVClient is one client of a key-value service over HTTP, talking to one
// node: it runs each operation through its workload Client (a linearizable
// one into the history) and drives a seeded random mix over a few keys.
// It is not safe for concurrent use: a workload runs one goroutine per
// client.
type KVClient struct {
	wc     *Client
	http   *HTTPClient
	svc    *KVService
	keys   int
	rng    *rand.Rand
	seq    int
	last   map[string]string // the last value this client saw per key
	health time.Time
}

// NewKVClients returns one client per node of t, in GOFAULT_NODES order,
// each talking to its node's port over svc, on keys "k0".."k<keys-1>",
// with a random source seeded by the trial's seed and its index.
func NewKVClients(t *T, svc *KVService, port string, keys int) ([]*KVClient, error) {
	var cs []*KVClient
	for i, n := range t.Nodes() {
		addr := n.Addr(port)
		if addr == "" {
			return nil, fmt.Errorf("node %s has no %q port", n.Name, port)
		}
		cs = append(cs, &KVClient{
			wc:   t.Client(n.Name),
			http: NewHTTPClient("http://"+addr, svc.IDHeader),
			svc:  svc,
			keys: keys,
			rng:  rand.New(rand.NewPCG(uint64(t.Seed()), uint64(i))),
			last: map[string]string{},
		})
	}
	return cs, nil
}

// Client returns the workload client that reports the requests.
func (c *KVClient) Client() *Client { return c.wc }

// Rand returns the client's seeded random source, for a target's own
// operations (ExtraOp) to draw from.
func (c *KVClient) Rand() *rand.Rand { return c.rng }

// Do sends one request to the node (HTTPClient.Do), reporting nothing.
func (c *KVClient) Do(ctx context.Context, method, path, id, body string) (string, error) {
	return c.http.Do(ctx, method, path, id, body)
}

func (c *KVClient) key() string { return fmt.Sprintf("k%d", c.rng.IntN(c.keys)) }

// nextID is a fresh write ID, also the value a put or cas writes: no
// other write writes it.
func (c *KVClient) nextID() string {
	c.seq++
	return fmt.Sprintf("%s#%d", c.wc.Name(), c.seq)
}

// Load runs mix at rate operations per second until ctx ends, asking the
// node for its health every 250 ms.
func (c *KVClient) Load(ctx context.Context, mix Mix, rate int) {
	pause := time.Second / time.Duration(rate)
	for ctx.Err() == nil {
		if time.Since(c.health) >= healthEvery {
			c.reportHealth(ctx)
		}
		total := mix.Total
		if total <= 0 {
			total = 100
		}
		c.step(ctx, mix, c.key(), c.rng.IntN(total))
		Sleep(ctx, pause)
	}
}

// step runs the operation of mix that r (in [0,Total)) draws on key.
func (c *KVClient) step(ctx context.Context, mix Mix, key string, r int) {
	if r -= mix.Get; r < 0 {
		_ = c.Get(ctx, key)
		return
	}
	for _, rd := range mix.Reads {
		if r -= rd.Percent; r < 0 {
			c.Read(ctx, key, rd)
			return
		}
	}
	for _, op := range mix.Extra {
		if r -= op.Percent; r < 0 {
			op.Run(ctx, c)
			return
		}
	}
	switch r -= mix.Put; {
	case r < 0:
		c.Put(ctx, key)
	case r < mix.Delete:
		c.Delete(ctx, key)
	default:
		c.CAS(ctx, key)
	}
}

// Get is a linearizable read of key, recorded in the history.
func (c *KVClient) Get(ctx context.Context, key string) error {
	out, err := c.wc.DoOp(ctx, record.Op{Kind: "get", Key: key}, func(ctx context.Context) (string, error) {
		body, err := c.http.Do(ctx, http.MethodGet, c.svc.GetPath(key), "", "")
		switch {
		case IsStatus(err, http.StatusNotFound):
			return "", nil
		case err != nil:
			return "", err
		case c.svc.Value != nil:
			return c.svc.Value(body)
		}
		return body, nil
	})
	if err == nil {
		c.last[key] = out
	}
	return err
}

// Read is a read of key that is not linearizable (see Read).
func (c *KVClient) Read(ctx context.Context, key string, rd Read) {
	fn := func(ctx context.Context) error {
		_, err := c.http.Do(ctx, http.MethodGet, c.svc.ReadPath(key, rd.Consistency), "", "")
		if IsStatus(err, http.StatusNotFound) {
			return nil
		}
		return err
	}
	if rd.Progress {
		_ = c.wc.Do(ctx, rd.Consistency+"-read", key, fn)
		return
	}
	rctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	if err := fn(rctx); err != nil && ctx.Err() == nil {
		c.wc.Error(fmt.Errorf("%s read %s: %w", rd.Consistency, key, err))
	}
}

// recoveryDetail is a CheckRecovery violation's text: the node, what it
// did not serve within bound, and the last error it answered (none when
// every request hung to the bound).
func recoveryDetail(node, read string, bound time.Duration, last error) string {
	msg := fmt.Sprintf("node %s served no %s and write within %s after the load stopped", node, read, bound)
	if last != nil {
		msg += "; last error: " + last.Error()
	}
	return msg
}

// Put writes a fresh value to key and reports whether it was acknowledged.
func (c *KVClient) Put(ctx context.Context, key string) bool {
	_, err := c.write(ctx, record.Op{Kind: "put", Key: key}, http.MethodPut, c.svc.KeyPath(key))
	return err == nil
}

// Delete deletes key.
func (c *KVClient) Delete(ctx context.Context, key string) {
	c.write(ctx, record.Op{Kind: "delete", Key: key}, http.MethodDelete, c.svc.KeyPath(key))
}

// CAS swaps key from the value this client last saw to a fresh one.
func (c *KVClient) CAS(ctx context.Context, key string) {
	expect := c.last[key]
	c.write(ctx, record.Op{Kind: "cas", Key: key, Expect: expect}, http.MethodPost, c.svc.CASPath(key, expect))
}

// write sends one write with a fresh ID, recorded in the history; it
// returns the answer ("true" or "false" for a cas), or the error when
// none was received.
func (c *KVClient) write(ctx context.Context, op record.Op, method, path string) (string, error) {
	id := c.nextID()
	if op.Kind != "delete" {
		op.Value = id
	}
	if c.svc.Sent != nil {
		c.svc.Sent(id)
	}
	out, err := c.wc.DoOp(ctx, op, func(ctx context.Context) (string, error) {
		out, err := c.http.Do(ctx, method, path, id, op.Value)
		if op.Kind == "cas" {
			return out, err
		}
		if err == nil && c.svc.Written != nil {
			err = c.svc.Written(method, out)
		}
		return "", err
	})
	if err != nil {
		return "", err
	}
	if c.svc.Acked != nil {
		c.svc.Acked(id)
	}
	switch {
	case op.Kind == "put", op.Kind == "cas" && out == "true":
		c.last[op.Key] = id
	case op.Kind == "delete":
		c.last[op.Key] = ""
	case op.Kind == "cas":
		delete(c.last, op.Key) // learn the value with the next get
	}
	return out, nil
}

// reportHealth reports what the node says of itself (KVService.Status):
// the leader says so (the calibration trial kills it), another node is
// healthy or not as it says; a node that does not answer is unhealthy.
func (c *KVClient) reportHealth(ctx context.Context) {
	c.health = time.Now()
	rctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	h, err := c.svc.Status(rctx, c)
	switch {
	case err == nil && h.Leader:
		c.wc.Leader()
	case err == nil:
		c.wc.Health(h.OK, h.Msg)
	case ctx.Err() == nil:
		c.wc.Health(false, "status: "+err.Error())
	}
}

// Verify checks that the node serves a linearizable read and a write
// again within bound, else reports a CheckRecovery violation that names
// the last error the node answered (its refusal tells one stall from
// another: a leader stuck in a transfer, a member that cannot catch up);
// then it reads every key once more, so a write acknowledged and then
// lost shows in the history.
func (c *KVClient) Verify(ctx context.Context, bound time.Duration) {
	vctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	start := time.Now()
	var last error
	for {
		err := c.Get(vctx, "k0")
		if err == nil {
			if _, err = c.write(vctx, record.Op{Kind: "put", Key: "k0"}, http.MethodPut, c.svc.KeyPath("k0")); err == nil {
				break
			}
		}
		if vctx.Err() == nil || last == nil {
			last = err
		}
		if vctx.Err() != nil {
			if ctx.Err() == nil {
				c.wc.Violation(CheckRecovery, recoveryDetail(c.wc.Node(), c.svc.VerifyRead, bound, last))
			}
			return
		}
		Sleep(vctx, 100*time.Millisecond)
	}
	if d := time.Since(start); d > time.Second {
		c.wc.Progress(fmt.Sprintf("recovered after %s", d.Round(time.Millisecond)))
	}
	for i := 1; i < c.keys; i++ {
		_ = c.Get(ctx, fmt.Sprintf("k%d", i))
	}
}
