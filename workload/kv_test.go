package workload

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testService speaks a minikv-like wire: /kv/KEY, /cas/KEY?expect=, IDs
// in X-Request-ID.
func testService() *KVService {
	return &KVService{
		IDHeader:   "X-Request-ID",
		KeyPath:    func(key string) string { return "/kv/" + key },
		GetPath:    func(key string) string { return "/kv/" + key },
		ReadPath:   func(key, c string) string { return "/kv/" + key + "?read=" + c },
		CASPath:    func(key, expect string) string { return "/cas/" + key + "?expect=" + url.QueryEscape(expect) },
		VerifyRead: "linearizable read",
		Status: func(ctx context.Context, c *KVClient) (NodeHealth, error) {
			_, err := c.Do(ctx, http.MethodGet, "/status", "", "")
			return NodeHealth{OK: err == nil, Msg: "serving"}, err
		},
	}
}

// answer is a scripted HTTP answer.
type answer struct {
	code int
	body string
}

// kvServer answers each request with the next of its answers (the last
// one again when they run out) and records the requests.
type kvServer struct {
	mu      sync.Mutex
	answers []answer
	reqs    []string // "METHOD path?query id=ID body=BODY"
}

func (s *kvServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := new(strings.Builder)
	_, _ = fmt.Fprint(body, r.Method, " ", r.URL.RequestURI(), " id=", r.Header.Get("X-Request-ID"), " body=")
	b := make([]byte, 64)
	n, _ := r.Body.Read(b)
	body.Write(b[:n])
	s.mu.Lock()
	s.reqs = append(s.reqs, body.String())
	a := s.answers[min(len(s.reqs), len(s.answers))-1]
	s.mu.Unlock()
	w.WriteHeader(a.code)
	fmt.Fprint(w, a.body)
}

// nodesAt is one node n1 whose "client" port is addr's.
func nodesAt(t *testing.T, addr string) []Node {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return []Node{{Name: "n1", Ports: map[string]int{"client": p}}}
}

// serveKV starts a kvServer with answers, closed when t ends, and returns
// it and its address; refused: an address where nothing listens instead.
func serveKV(t *testing.T, answers []answer, refused bool) (*kvServer, string) {
	srv := &kvServer{answers: answers}
	if refused {
		return srv, refusedAddr(t)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs.Listener.Addr().String()
}

// refusedAddr is an address where nothing listens.
func refusedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestKVClientOps: each operation's request, and the history entry and
// events its answer gives — ok, failed (a cas that did not swap, a write
// the service refused in its body) or indeterminate (an error status, a
// refused connection).
func TestKVClientOps(t *testing.T) {
	written := func(method, body string) error {
		if body != "true" {
			return fmt.Errorf("kv %s answered %q", method, body)
		}
		return nil
	}
	for _, tc := range []struct {
		name    string
		answers []answer
		refused bool
		written func(method, body string) error
		op      func(ctx context.Context, c *KVClient)
		reqs    []string
		want    []string
	}{
		{name: "get", answers: []answer{{200, "v1"}},
			op:   func(ctx context.Context, c *KVClient) { _ = c.Get(ctx, "k0") },
			reqs: []string{"GET /kv/k0 id= body="},
			want: []string{`n1/0 op get k0 out="v1" unknown=false`}},
		{name: "get of a missing key", answers: []answer{{404, "no such key"}},
			op:   func(ctx context.Context, c *KVClient) { _ = c.Get(ctx, "k0") },
			want: []string{`n1/0 op get k0 out="" unknown=false`}},
		{name: "get answered 500", answers: []answer{{500, "no leader\n"}},
			op:   func(ctx context.Context, c *KVClient) { _ = c.Get(ctx, "k0") },
			want: []string{"n1/0 error get k0: 500 no leader", `n1/0 op get k0 out="" unknown=true`}},
		{name: "get refused", refused: true,
			op:   func(ctx context.Context, c *KVClient) { _ = c.Get(ctx, "k0") },
			want: []string{"n1/0 error get k0: ", `n1/0 op get k0 out="" unknown=true`}},
		{name: "put", answers: []answer{{200, ""}},
			op:   func(ctx context.Context, c *KVClient) { c.Put(ctx, "k1") },
			reqs: []string{"PUT /kv/k1 id=n1/0#1 body=n1/0#1"},
			want: []string{`n1/0 op put k1 out="" unknown=false`}},
		{name: "put answered 503 is indeterminate", answers: []answer{{503, "busy"}},
			op:   func(ctx context.Context, c *KVClient) { c.Put(ctx, "k1") },
			want: []string{"n1/0 error put k1: 503 busy", `n1/0 op put k1 out="" unknown=true`}},
		{name: "put whose answer says it failed", answers: []answer{{200, "false"}}, written: written,
			op:   func(ctx context.Context, c *KVClient) { c.Put(ctx, "k1") },
			want: []string{`n1/0 error put k1: kv PUT answered "false"`, `n1/0 op put k1 out="" unknown=true`}},
		{name: "delete", answers: []answer{{200, "true"}}, written: written,
			op:   func(ctx context.Context, c *KVClient) { c.Delete(ctx, "k1") },
			reqs: []string{"DELETE /kv/k1 id=n1/0#1 body="},
			want: []string{`n1/0 op delete k1 out="" unknown=false`}},
		{name: "cas that swaps, then one from the new value", answers: []answer{{200, "true"}},
			op:   func(ctx context.Context, c *KVClient) { c.CAS(ctx, "k2"); c.CAS(ctx, "k2") },
			reqs: []string{"POST /cas/k2?expect= id=n1/0#1 body=n1/0#1", "POST /cas/k2?expect=n1%2F0%231 id=n1/0#2 body=n1/0#2"},
			want: []string{`n1/0 op cas k2 out="true" unknown=false`, `n1/0 op cas k2 out="true" unknown=false`}},
		{name: "cas that fails, then one from what a get read", answers: []answer{{200, "false"}, {200, "v9"}, {200, "false"}},
			op:   func(ctx context.Context, c *KVClient) { c.CAS(ctx, "k2"); _ = c.Get(ctx, "k2"); c.CAS(ctx, "k2") },
			reqs: []string{"POST /cas/k2?expect= id=n1/0#1 body=n1/0#1", "GET /kv/k2 id= body=", "POST /cas/k2?expect=v9 id=n1/0#2 body=n1/0#2"},
			want: []string{`n1/0 op cas k2 out="false" unknown=false`, `n1/0 op get k2 out="v9" unknown=false`, `n1/0 op cas k2 out="false" unknown=false`}},
		{name: "leader read is progress", answers: []answer{{200, "v"}},
			op:   func(ctx context.Context, c *KVClient) { c.Read(ctx, "k3", Read{Consistency: "leader", Progress: true}) },
			reqs: []string{"GET /kv/k3?read=leader id= body="},
			want: []string{"n1/0 progress leader-read k3"}},
		{name: "stale read reports only its failure", answers: []answer{{200, "v"}, {500, "closed"}},
			op: func(ctx context.Context, c *KVClient) {
				c.Read(ctx, "k3", Read{Consistency: "stale"})
				c.Read(ctx, "k3", Read{Consistency: "stale"})
			},
			want: []string{"n1/0 error stale read k3: 500 closed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, addr := serveKV(t, tc.answers, tc.refused)
			svc := testService()
			svc.Written = tc.written
			evs, err := runEventsOn(t, nodesAt(t, addr), func(ctx context.Context, wt *T) error {
				cs, err := NewKVClients(wt, svc, "client", 3)
				if err != nil {
					return err
				}
				tc.op(ctx, cs[0])
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			assertPrefixes(t, "events", kinds(evs), tc.want)
			if tc.reqs != nil {
				assertPrefixes(t, "requests", srv.reqs, tc.reqs)
			}
		})
	}
}

func assertPrefixes(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range got {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("%s %d: %q, want prefix %q", what, i, got[i], want[i])
		}
	}
}

// TestKVClientReadyRetries: waiting for a node through Client.Setup
// retries while it answers 5xx or refuses connections, and reports only
// the success, or the giving up.
func TestKVClientReadyRetries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []answer
		refused bool
		want    []string
		reqs    int
	}{
		{name: "5xx, then ready", answers: []answer{{503, "no leader"}, {500, "starting"}, {200, "ok"}},
			want: []string{"n1/0 progress health"}, reqs: 3},
		{name: "refused until it gives up", refused: true,
			want: []string{"n1/0 error health: gave up after"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, addr := serveKV(t, tc.answers, tc.refused)
			var serr error
			evs, err := runEventsOn(t, nodesAt(t, addr), func(ctx context.Context, wt *T) error {
				cs, err := NewKVClients(wt, testService(), "client", 1)
				if err != nil {
					return err
				}
				c := cs[0]
				c.Client().SetupTimeout = 400 * time.Millisecond
				serr = c.Client().Setup(ctx, "health", func(ctx context.Context) error {
					_, err := c.Do(ctx, http.MethodGet, "/health", "", "")
					return err
				})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if (serr != nil) != tc.refused {
				t.Errorf("Setup: %v", serr)
			}
			assertPrefixes(t, "events", kinds(evs), tc.want)
			if tc.reqs > 0 && len(srv.reqs) != tc.reqs {
				t.Errorf("%d requests, want %d", len(srv.reqs), tc.reqs)
			}
		})
	}
}

// TestKVClientLedger: Sent and Acked see every write's ID; an
// indeterminate write is sent and never acknowledged.
func TestKVClientLedger(t *testing.T) {
	srv := &kvServer{answers: []answer{{200, ""}, {503, "busy"}, {200, "true"}}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	var sent, acked []string
	svc := testService()
	svc.Sent = func(id string) { sent = append(sent, id) }
	svc.Acked = func(id string) { acked = append(acked, id) }
	if _, err := runEventsOn(t, nodesAt(t, hs.Listener.Addr().String()), func(ctx context.Context, wt *T) error {
		cs, err := NewKVClients(wt, svc, "client", 1)
		if err != nil {
			return err
		}
		cs[0].Put(ctx, "k0")
		cs[0].Delete(ctx, "k0")
		cs[0].CAS(ctx, "k0")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(sent, " "), "n1/0#1 n1/0#2 n1/0#3"; got != want {
		t.Errorf("sent %s, want %s", got, want)
	}
	if got, want := strings.Join(acked, " "), "n1/0#1 n1/0#3"; got != want {
		t.Errorf("acked %s, want %s", got, want)
	}
}

// TestMixStep: each draw in [0,100) runs the operation whose share it
// falls in, in the order get, reads, put, delete, cas.
func TestMixStep(t *testing.T) {
	srv := &kvServer{answers: []answer{{200, "true"}}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	mix := Mix{Get: 30, Reads: []Read{{Consistency: "leader", Percent: 10, Progress: true}, {Consistency: "stale", Percent: 10}}, Put: 20, Delete: 5, CAS: 25}
	draws := []struct {
		r    int
		want string
	}{
		{0, "GET /kv/k0 "}, {29, "GET /kv/k0 "}, {30, "GET /kv/k0?read=leader"}, {40, "GET /kv/k0?read=stale"},
		{49, "GET /kv/k0?read=stale"}, {50, "PUT /kv/k0"}, {69, "PUT /kv/k0"}, {70, "DELETE /kv/k0"},
		{74, "DELETE /kv/k0"}, {75, "POST /cas/k0"}, {99, "POST /cas/k0"},
	}
	if _, err := runEventsOn(t, nodesAt(t, hs.Listener.Addr().String()), func(ctx context.Context, wt *T) error {
		cs, err := NewKVClients(wt, testService(), "client", 1)
		if err != nil {
			return err
		}
		for _, d := range draws {
			cs[0].step(ctx, mix, "k0", d.r)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(srv.reqs) != len(draws) {
		t.Fatalf("requests %q", srv.reqs)
	}
	for i, d := range draws {
		if !strings.HasPrefix(srv.reqs[i], d.want) {
			t.Errorf("draw %d: %q, want %q", d.r, srv.reqs[i], d.want)
		}
	}
}

// TestMixExtra: a target's own operations are drawn after the reads and
// before the writes, over the mix's Total.
func TestMixExtra(t *testing.T) {
	srv := &kvServer{answers: []answer{{200, "true"}}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	var ran []string
	extra := func(name string) ExtraOp {
		return ExtraOp{Name: name, Percent: 5, Run: func(context.Context, *KVClient) { ran = append(ran, name) }}
	}
	mix := Mix{Get: 300, Reads: []Read{{Consistency: "stale", Percent: 100}}, Extra: []ExtraOp{extra("a"), extra("b")}, Put: 200, Delete: 90, CAS: 300, Total: 1000}
	draws := []struct {
		r    int
		want string // an extra's name, or the request's prefix
	}{
		{299, "GET /kv/k0 "}, {399, "GET /kv/k0?read=stale"}, {400, "a"}, {404, "a"}, {405, "b"},
		{409, "b"}, {410, "PUT /kv/k0"}, {610, "DELETE /kv/k0"}, {700, "POST /cas/k0"}, {999, "POST /cas/k0"},
	}
	var got []string
	if _, err := runEventsOn(t, nodesAt(t, hs.Listener.Addr().String()), func(ctx context.Context, wt *T) error {
		cs, err := NewKVClients(wt, testService(), "client", 1)
		if err != nil {
			return err
		}
		for _, d := range draws {
			srv.mu.Lock()
			nreqs := len(srv.reqs)
			srv.mu.Unlock()
			nran := len(ran)
			cs[0].step(ctx, mix, "k0", d.r)
			srv.mu.Lock()
			switch {
			case len(ran) > nran:
				got = append(got, ran[nran])
			case len(srv.reqs) > nreqs:
				got = append(got, srv.reqs[nreqs])
			default:
				got = append(got, "nothing")
			}
			srv.mu.Unlock()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, d := range draws {
		if !strings.HasPrefix(got[i], d.want) {
			t.Errorf("draw %d: %q, want %q", d.r, got[i], d.want)
		}
	}
}

// TestVerify: a node that serves reports recovery after a slow start only
// when it took over a second; one that never serves is a recovery
// violation.
func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []answer
		want    []string
	}{
		{name: "serves", answers: []answer{{200, "v"}},
			want: []string{"n1/0 op get k0", "n1/0 op put k0", "n1/0 op get k1"}},
		{name: "never serves", answers: []answer{{503, "no leader"}},
			want: []string{"n1/0 error get k0", "n1/0 op get k0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(&kvServer{answers: tc.answers})
			defer hs.Close()
			evs, err := runEventsOn(t, nodesAt(t, hs.Listener.Addr().String()), func(ctx context.Context, wt *T) error {
				cs, err := NewKVClients(wt, testService(), "client", 2)
				if err != nil {
					return err
				}
				cs[0].Verify(ctx, 150*time.Millisecond)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got := kinds(evs)
			violation := "n1/0 violation node n1 served no linearizable read and write within 150ms after the load stopped; last error: 503 no leader [recovery]"
			if tc.name == "never serves" {
				if len(got) == 0 || got[len(got)-1] != violation {
					t.Errorf("events %q, want the recovery violation last", got)
				}
				got = got[:min(len(got), len(tc.want))]
			}
			assertPrefixes(t, "events", got, tc.want)
		})
	}
}

// TestCaughtUp: the members at the highest index, once all that answer
// agree or the wait is over; silent members are left out.
func TestCaughtUp(t *testing.T) {
	type st struct {
		index uint64
		ok    bool
	}
	for _, tc := range []struct {
		name string
		// polls[i] is member i's answers, one per poll (the last repeats).
		polls [][]st
		wait  time.Duration
		want  []int
		// minPolls is how many polls it must take at least.
		minPolls int
	}{
		{name: "agree at once", polls: [][]st{{{5, true}}, {{5, true}}, {{5, true}}}, wait: time.Second, want: []int{0, 1, 2}, minPolls: 1},
		{name: "one catches up", polls: [][]st{{{5, true}}, {{3, true}, {4, true}, {5, true}}, {{5, true}}}, wait: time.Second, want: []int{0, 1, 2}, minPolls: 3},
		{name: "one stays behind", polls: [][]st{{{5, true}}, {{3, true}}, {{5, true}}}, wait: 250 * time.Millisecond, want: []int{0, 2}, minPolls: 2},
		{name: "a silent member", polls: [][]st{{{0, false}}, {{7, true}}, {{7, true}}}, wait: time.Second, want: []int{1, 2}, minPolls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			polls := make([]int, len(tc.polls))
			top, err := CaughtUp(context.Background(), len(tc.polls), tc.wait, func(ctx context.Context, i int) (string, uint64, bool) {
				mu.Lock()
				defer mu.Unlock()
				a := tc.polls[i][min(polls[i], len(tc.polls[i])-1)]
				polls[i]++
				return fmt.Sprintf("state of %d", i), a.index, a.ok
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range top {
				if m.State != fmt.Sprintf("state of %d", m.Member) {
					t.Errorf("member %d has state %q", m.Member, m.State)
				}
				got = append(got, m.Member)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("members %v, want %v", got, tc.want)
			}
			if polls[0] < tc.minPolls {
				t.Errorf("%d polls, want at least %d", polls[0], tc.minPolls)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := CaughtUp(ctx, 1, time.Minute, func(context.Context, int) (int, uint64, bool) { return 0, 1, true }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
