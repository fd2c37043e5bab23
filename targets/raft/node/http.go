package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

const (
	// applyTimeout bounds raft.Apply, VerifyLeader and Barrier.
	applyTimeout = 1500 * time.Millisecond
	// forwardTimeout bounds a request forwarded to the leader.
	forwardTimeout = 1800 * time.Millisecond
	// forwardedHeader marks a forwarded request: it is not forwarded again.
	forwardedHeader = "X-Forwarded-By"
)

// The read consistencies of GET /kv/{key}?read=.
const (
	readStale        = "stale"        // the local state, any member
	readLeader       = "leader"       // the leader's state after VerifyLeader
	readLinearizable = "linearizable" // the leader's state after a Barrier
)

// handler is the HTTP API:
//
//	GET    /health            200 once the member knows a leader
//	GET    /status            JSON: role, leader, indexes, state digest (?writes=1: write counts)
//	GET    /kv/{key}?read=R   the value (404 absent); R stale, leader or linearizable (default)
//	PUT    /kv/{key}          body: the value
//	DELETE /kv/{key}
//	POST   /cas/{key}?expect=V  body: the new value; answers "true" or "false" (expect "" = absent)
//	POST   /admin/…           the admin calls (admin.go), loopback clients only
//
// Writes and leader or linearizable reads are forwarded to the leader; 503
// means the member could not serve (no leader, leadership lost, timeout).
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /status", s.status)
	mux.HandleFunc("GET /kv/{key}", s.get)
	mux.HandleFunc("PUT /kv/{key}", s.write("put"))
	mux.HandleFunc("DELETE /kv/{key}", s.write("delete"))
	mux.HandleFunc("POST /cas/{key}", s.write("cas"))
	s.adminRoutes(mux)
	return mux
}

func (s *server) health(w http.ResponseWriter, _ *http.Request) {
	if _, id := leaderWithID(s.raft); id == "" {
		http.Error(w, "no leader", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// statusReply is GET /status's answer.
type statusReply struct {
	Role    string `json:"role"` // Leader, Follower, Candidate, Shutdown
	Leader  string `json:"leader"`
	Term    uint64 `json:"term"`
	Applied uint64 `json:"applied"` // raft's applied index
	Commit  uint64 `json:"commit"`
	// Voters are the voters of the member's latest configuration, sorted
	// (absent when raft cannot say).
	Voters []string `json:"voters,omitempty"`
	fsmStatus
}

func (s *server) status(w http.ResponseWriter, r *http.Request) {
	_, leader := leaderWithID(s.raft)
	st := statusReply{
		Role:      s.raft.State().String(),
		Leader:    string(leader),
		Term:      currentTerm(s.raft),
		Applied:   s.raft.AppliedIndex(),
		Commit:    commitIndex(s.raft),
		fsmStatus: s.fsm.status(r.URL.Query().Get("writes") != ""),
	}
	st.Voters, _ = s.voters()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(st)
}

func (s *server) get(w http.ResponseWriter, r *http.Request) {
	read := r.URL.Query().Get("read")
	if read == "" {
		read = readLinearizable
	}
	switch read {
	case readStale:
	case readLeader, readLinearizable:
		if !s.leading() {
			s.forward(w, r, nil)
			return
		}
		defer s.writes.RUnlock()
		var err error
		if read == readLeader {
			err = s.raft.VerifyLeader().Error()
		} else {
			err = s.raft.Barrier(applyTimeout).Error()
		}
		if err != nil {
			http.Error(w, read+" read: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	default:
		http.Error(w, "read must be stale, leader or linearizable", http.StatusBadRequest)
		return
	}
	v, ok := s.fsm.get(r.PathValue("key"))
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	io.WriteString(w, v)
}

// write applies a put, delete or cas through the leader.
func (s *server) write(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !s.leading() {
			s.forward(w, r, body)
			return
		}
		defer s.writes.RUnlock()
		c := command{Op: op, Key: r.PathValue("key"), Value: string(body), Expect: r.URL.Query().Get("expect"), ID: r.Header.Get("X-Request-ID")}
		data, err := json.Marshal(c)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		f := s.raft.Apply(data, applyTimeout)
		if err := f.Error(); err != nil {
			http.Error(w, op+": "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		switch resp := f.Response().(type) {
		case error:
			http.Error(w, op+": "+resp.Error(), http.StatusInternalServerError)
		case bool:
			fmt.Fprint(w, resp)
		default:
			io.WriteString(w, "ok")
		}
	}
}

// leading takes s.writes shared and reports whether the member is (still)
// the leader; when it is not, it releases s.writes again. A write or read
// that waited out a restore or a leadership transfer goes to the new
// leader.
func (s *server) leading() bool {
	s.writes.RLock()
	if s.raft.State() == raft.Leader {
		return true
	}
	s.writes.RUnlock()
	return false
}

// forward sends the request to the leader's HTTP API and copies its answer
// back. A request that was already forwarded is not forwarded again.
func (s *server) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Header.Get(forwardedHeader) != "" {
		http.Error(w, "not the leader", http.StatusServiceUnavailable)
		return
	}
	_, id := leaderWithID(s.raft)
	addr := ""
	for _, p := range s.peers {
		if p.id == id {
			addr = p.httpAddr
		}
	}
	if addr == "" {
		http.Error(w, "no leader", http.StatusServiceUnavailable)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+addr+r.URL.RequestURI(), strings.NewReader(string(body)))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header.Set("X-Request-ID", r.Header.Get("X-Request-ID"))
	req.Header.Set(forwardedHeader, string(id))
	resp, err := s.http.Do(req)
	if err != nil {
		var code = http.StatusServiceUnavailable
		if errors.Is(err, r.Context().Err()) {
			code = http.StatusGatewayTimeout
		}
		http.Error(w, "forward to leader: "+err.Error(), code)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}
