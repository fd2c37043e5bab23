package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

func TestJudgeCreate(t *testing.T) {
	entry := func(op string) *jetstream.RawStreamMsg {
		m := &jetstream.RawStreamMsg{Subject: "$KV.KV.k0", Sequence: 7, Data: []byte("n1/0#3")}
		if op != "" {
			m.Header = nats.Header{kvOpHeader: []string{op}}
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		latest  *jetstream.RawStreamMsg
		err     error
		want    string
		unknown bool
	}{
		{"a delete marker: nats.go's two-step Create", entry(kvDel), nil, "", true},
		{"a purge marker", entry(kvPurge), nil, "", true},
		{"a value: the key exists", entry(""), nil, "false", false},
		{"no entry: a server that answered exists on a key never written", nil, jetstream.ErrMsgNotFound, "false", false},
		{"the read failed", nil, errors.New("nats: timeout"), "false", false},
	} {
		out, err := judgeCreate("k0", jetstream.ErrKeyExists, tc.latest, tc.err)
		var te *tombstoneCreateError
		if out != tc.want || errors.As(err, &te) != tc.unknown || (err != nil) != tc.unknown {
			t.Errorf("%s: judgeCreate = %q, %v; want %q, unknown %v", tc.name, out, err, tc.want, tc.unknown)
		}
		if tc.unknown && (!strings.Contains(err.Error(), "nats-server#3895/#5162") || !strings.Contains(err.Error(), "N6")) {
			t.Errorf("%s: %v does not name the known bug and its row", tc.name, err)
		}
	}
}

// deleteBeforeSecondWrite is a connection to the server that, before it
// sends the second publish to subject (the second conditional write of
// nats.go's Create), runs before: the delete that nats-server#5162
// describes landing between Create's two writes, made deterministic.
type deleteBeforeSecondWrite struct {
	net.Conn
	subject []byte
	before  func()

	mu     sync.Mutex
	writes int
}

func (c *deleteBeforeSecondWrite) Write(p []byte) (int, error) {
	if bytes.Contains(p, c.subject) {
		c.mu.Lock()
		c.writes++
		if c.writes == 2 {
			c.before()
		}
		c.mu.Unlock()
	}
	return c.Conn.Write(p)
}

// dialer makes a connection's conn through wrap.
type dialer struct{ wrap func(net.Conn) net.Conn }

func (d dialer) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return d.wrap(c), nil
}

// existsKV is a bucket whose Create answers that the key exists whatever
// the server holds: the planted server bug.
type existsKV struct{ jetstream.KeyValue }

func (existsKV) Create(context.Context, string, []byte, ...jetstream.KVCreateOpt) (uint64, error) {
	return 0, jetstream.ErrKeyExists
}

// TestCreateOnTombstone: on a real nats-server, a Create of a deleted key
// (kvUpdate after the client saw it deleted) meets a delete between its
// two conditional writes — made deterministic by running another client's
// delete just before the Create's second publish leaves the connection —
// and answers ErrKeyExists; its op is recorded with its outcome unknown
// and its error names N6. A planted server bug, Create answering exists
// on a key never written (its latest read finds no entry), is recorded as
// the failed compare-and-swap cas(""→v) → "false" with nothing written
// before it: the linearizability checker's finding.
func TestCreateOnTombstone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nats-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := startServer(t)
	_, admin := connectJS(t, s)
	akv, err := admin.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: kvBucket})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := akv.Put(ctx, "k0", []byte("admin#1")); err != nil {
		t.Fatal(err)
	}
	if err := akv.Delete(ctx, "k0"); err != nil {
		t.Fatal(err)
	}
	raced := make(chan error, 1)
	_, js := connectJS(t, s, nats.SetCustomDialer(dialer{func(c net.Conn) net.Conn {
		return &deleteBeforeSecondWrite{Conn: c, subject: []byte(" $KV." + kvBucket + ".k0 "), before: func() {
			raced <- akv.Delete(ctx, "k0")
		}}
	}}))

	var stdout bytes.Buffer
	env := workload.Env{Nodes: []workload.Node{{Name: "n1", Ports: map[string]int{"client": 4222}}}}
	err = workload.Run(ctx, env, &stdout, func(ctx context.Context, wt *workload.T) error {
		c := &client{wc: wt.Client("n1"), js: js, kvSeen: map[string]kvSeen{}}
		c.cfg.mix[opKVUpdate] = 1
		// As createKV, with one replica: direct gets off.
		if err := c.leaderReads(ctx, "KV_"+kvBucket); err != nil {
			return err
		}
		if err := c.bindAPI(ctx); err != nil {
			return err
		}
		c.kvUpdate(ctx, "k0")
		c.kv = existsKV{c.kv}
		c.kvUpdate(ctx, "k1")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-raced:
		if err != nil {
			t.Fatalf("the delete between Create's writes: %v", err)
		}
	default:
		t.Fatal("no delete ran between Create's writes")
	}
	ops := map[string]record.Op{}
	var errs []string
	for line := range strings.Lines(stdout.String()) {
		var e record.ClientEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Kind == record.EvOp && e.Op != nil:
			ops[e.Op.Key] = *e.Op
		case e.Kind == record.EvError:
			errs = append(errs, e.Msg)
		}
	}
	if op := ops["kv/k0"]; op.Kind != "cas" || !op.Unknown {
		t.Errorf("the Create that met a delete between its writes: op %+v; want a cas with its outcome unknown", op)
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "cas kv/k0") || !strings.Contains(errs[0], "docs/found.md N6") || !strings.Contains(errs[0], "err_code=10071 description=wrong last sequence: 3") {
		t.Errorf("errors %q; want one, about kv/k0, naming N6 and what Create said", errs)
	}
	if op := ops["kv/k1"]; op.Kind != "cas" || op.Unknown || op.Out != "false" || op.Expect != "" {
		t.Errorf("the planted Create answering exists on a key never written: op %+v; want cas(\"\"→v) → \"false\"", op)
	}
}
