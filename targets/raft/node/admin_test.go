package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// testMember is one member of an in-memory cluster, served over HTTP.
type testMember struct {
	*server
	url string
	// down makes its HTTP API answer 503 to everything.
	down *atomic.Bool
}

// newTestCluster starts n members on in-memory stores and transports,
// with short timeouts, each with its HTTP API on a loopback port, and
// waits for a leader.
func newTestCluster(t *testing.T, n int) []*testMember {
	t.Helper()
	var lns []net.Listener
	var peers []peer
	var trans []*raft.InmemTransport
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		addr, tr := raft.NewInmemTransport("")
		trans = append(trans, tr)
		peers = append(peers, peer{raft.ServerID(fmt.Sprintf("n%d", i+1)), addr, ln.Addr().String()})
	}
	for _, a := range trans {
		for _, b := range trans {
			a.Connect(b.LocalAddr(), b)
		}
	}
	var ms []*testMember
	var conf raft.Configuration
	for _, p := range peers {
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: p.id, Address: p.raftAddr})
	}
	for i, p := range peers {
		cfg := raft.DefaultConfig()
		cfg.LocalID = p.id
		cfg.Logger = hclog.NewNullLogger()
		cfg.HeartbeatTimeout = 100 * time.Millisecond
		cfg.ElectionTimeout = 100 * time.Millisecond
		cfg.LeaderLeaseTimeout = 50 * time.Millisecond
		cfg.CommitTimeout = 5 * time.Millisecond
		cfg.ShutdownOnRemove = false
		store := raft.NewInmemStore()
		f := newFSM()
		r, err := raft.NewRaft(cfg, f, store, store, raft.NewInmemSnapshotStore(), trans[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := r.BootstrapCluster(conf).Error(); err != nil {
			t.Fatal(err)
		}
		s := &server{id: p.id, raft: r, fsm: f, peers: peers, http: &http.Client{Timeout: forwardTimeout}}
		down := new(atomic.Bool)
		h := s.handler()
		hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if down.Load() {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		}))
		hs.Listener.Close()
		hs.Listener = lns[i]
		hs.Start()
		ms = append(ms, &testMember{s, hs.URL, down})
		t.Cleanup(func() {
			hs.Close()
			r.Shutdown().Error()
		})
	}
	waitLeader(t, ms, "")
	return ms
}

// waitLeader waits until a member other than not leads and every member
// knows it, and returns it.
func waitLeader(t *testing.T, ms []*testMember, not raft.ServerID) *testMember {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, m := range ms {
			if m.raft.State() != raft.Leader || m.id == not {
				continue
			}
			known := true
			for _, o := range ms {
				if _, id := leaderWithID(o.raft); id != m.id {
					known = false
				}
			}
			if known {
				return m
			}
		}
	}
	t.Fatal("no leader")
	return nil
}

func post(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Request-ID", "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func put(t *testing.T, url, key, id string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, url+"/kv/"+key, strings.NewReader(id))
	req.Header.Set("X-Request-ID", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("put %s: %s", key, resp.Status)
	}
}

// TestAdmin calls every admin endpoint on a three-member in-memory
// cluster, through a follower (forwarded to the leader) or on the leader,
// and checks the answer and what the cluster did.
func TestAdmin(t *testing.T) {
	ms := newTestCluster(t, 3)
	leader := waitLeader(t, ms, "")
	var follower *testMember
	for _, m := range ms {
		if m != leader {
			follower = m
			break
		}
	}
	put(t, follower.url, "a", "w1")
	put(t, follower.url, "b", "w2")
	for _, tc := range []struct {
		name  string
		via   func() *testMember
		path  func() string
		code  int
		check func(t *testing.T, body string)
	}{
		{name: "barrier", via: func() *testMember { return follower }, path: func() string { return "/admin/barrier" }, code: 200,
			check: func(t *testing.T, body string) {
				var rep barrierReply
				if json.Unmarshal([]byte(body), &rep) != nil || rep.Writes["w1"] != 1 || rep.Writes["w2"] != 1 {
					t.Errorf("barrier: %s", body)
				}
			}},
		{name: "snapshot on a follower", via: func() *testMember { return follower }, path: func() string { return "/admin/snapshot" }, code: 200,
			check: func(t *testing.T, body string) {
				var rep snapshotReply
				if json.Unmarshal([]byte(body), &rep) != nil || rep.Index == 0 || rep.State.Index == 0 || rep.State.Digest == "" {
					t.Errorf("snapshot: %s", body)
				}
			}},
		{name: "restore", via: func() *testMember { return follower }, path: func() string { return "/admin/restore" }, code: 200,
			check: func(t *testing.T, body string) {
				var rep restoreReply
				if json.Unmarshal([]byte(body), &rep) != nil || rep.RestoresAfter != rep.RestoresBefore+1 ||
					rep.After.Digest != rep.Snapshot.Digest || rep.Snapshot.Digest != rep.Before.Digest || rep.After.Index != rep.Before.Index {
					t.Errorf("restore: %s", body)
				}
				// The followers install the restored snapshot: same state.
				time.Sleep(200 * time.Millisecond)
				for _, m := range ms {
					if st := m.fsm.status(false); st.Digest != rep.After.Digest {
						t.Errorf("%s after the restore: %+v, want %s", m.id, st, rep.After.Digest)
					}
				}
			}},
		{name: "membership cycle of a follower", via: func() *testMember { return follower }, path: func() string { return "/admin/membership/" + string(follower.id) }, code: 200,
			check: func(t *testing.T, body string) {
				var rep membershipReply
				if json.Unmarshal([]byte(body), &rep) != nil || !rep.Removed || !rep.Added || !slices.Equal(rep.Voters, []string{"n1", "n2", "n3"}) {
					t.Errorf("membership: %s", body)
				}
			}},
		{name: "membership cycle while the other follower is behind", via: func() *testMember { return leader },
			path: func() string {
				// The other follower's HTTP API stops answering: it cannot
				// show it is caught up.
				for _, m := range ms {
					if m != leader && m != follower {
						m.down.Store(true)
					}
				}
				return "/admin/membership/" + string(follower.id)
			}, code: 409,
			check: func(t *testing.T, body string) {
				for _, m := range ms {
					m.down.Store(false)
				}
				if !strings.Contains(body, "answered 503") {
					t.Errorf("answer %q", body)
				}
				if vs, _ := leader.voters(); len(vs) != 3 {
					t.Errorf("voters %v after a refused cycle", vs)
				}
			}},
		{name: "membership cycle of the leader", via: func() *testMember { return follower }, path: func() string { return "/admin/membership/" + string(leader.id) }, code: 409},
		{name: "membership of no member", via: func() *testMember { return leader }, path: func() string { return "/admin/membership/n9" }, code: 404},
		{name: "add a voter that is one", via: func() *testMember { return leader }, path: func() string { return "/admin/voter/" + string(follower.id) }, code: 200,
			check: func(t *testing.T, body string) {
				var rep membershipReply
				if json.Unmarshal([]byte(body), &rep) != nil || rep.Removed || !rep.Added || len(rep.Voters) != 3 {
					t.Errorf("voter: %s", body)
				}
			}},
		{name: "transfer", via: func() *testMember { return follower }, path: func() string { return "/admin/transfer" }, code: 200,
			check: func(t *testing.T, body string) {
				var rep transferReply
				if json.Unmarshal([]byte(body), &rep) != nil || rep.From != string(leader.id) || rep.RoleAfter == "Leader" {
					t.Errorf("transfer: %s", body)
				}
				if n := waitLeader(t, ms, leader.id); currentTerm(n.raft) <= rep.TermBefore {
					t.Errorf("new leader %s in term %d, transfer from term %d", n.id, currentTerm(n.raft), rep.TermBefore)
				}
				// No acknowledged write lost.
				for _, m := range ms {
					if v, _ := m.fsm.get("a"); v != "w1" {
						t.Errorf("%s: a = %q after the transfer", m.id, v)
					}
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, tc.via().url+tc.path())
			if code != tc.code {
				t.Fatalf("%s: %d %s, want %d", tc.path(), code, body, tc.code)
			}
			if tc.check != nil {
				tc.check(t, body)
			}
		})
	}
}

// TestAdminLoopbackOnly: an admin call from another address is refused,
// and a key-value request from it is not.
func TestAdminLoopbackOnly(t *testing.T) {
	s := &server{fsm: newFSM()}
	h := s.handler()
	for _, tc := range []struct {
		method, path, remote string
		code                 int
	}{
		{http.MethodPost, "/admin/snapshot", "10.1.2.3:4567", http.StatusForbidden},
		{http.MethodPost, "/admin/transfer", "[2001:db8::1]:80", http.StatusForbidden},
		{http.MethodPost, "/admin/restore", "bogus", http.StatusForbidden},
		{http.MethodGet, "/kv/a?read=stale", "10.1.2.3:4567", http.StatusNotFound},
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		req.RemoteAddr = tc.remote
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.code {
			t.Errorf("%s %s from %s: %d, want %d", tc.method, tc.path, tc.remote, rec.Code, tc.code)
		}
	}
}
