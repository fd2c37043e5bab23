package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// AppendMsg is the leader's append/heartbeat RPC.
type AppendMsg struct {
	Leader  string  `json:"leader"`
	Epoch   int64   `json:"epoch"`
	Commit  uint64  `json:"commit"`
	Entries []Entry `json:"entries,omitempty"`
}

// AppendResp answers an AppendMsg: Last is the follower's last index.
type AppendResp struct {
	OK   bool   `json:"ok"`
	Last uint64 `json:"last"`
}

// Handler returns the node's HTTP API:
//
//	GET    /kv/{key}                   value (404 when absent)
//	PUT    /kv/{key}                   body: value
//	DELETE /kv/{key}
//	POST   /cas/{key}?expect=V         body: new value; answers true/false (expect "" = absent)
//	GET    /status                     JSON Status; 503 when the node lost its leader
//	GET    /health                     200 once serving
//
// Writes carry an X-Request-ID header, unique per client request. The
// /raft/ paths are the peer protocol.
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /kv/{key}", n.handleGet)
	mux.HandleFunc("PUT /kv/{key}", n.handleWrite("put"))
	mux.HandleFunc("DELETE /kv/{key}", n.handleWrite("delete"))
	mux.HandleFunc("POST /cas/{key}", n.handleWrite("cas"))
	mux.HandleFunc("GET /status", n.handleStatus)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { reply(w, "ok\n") })
	mux.HandleFunc("POST /raft/append", n.handleAppend)
	mux.HandleFunc("POST /raft/propose", n.handlePropose)
	mux.HandleFunc("GET /raft/readindex", n.handleReadIndex)
	return mux
}

func (n *Node) handleGet(w http.ResponseWriter, r *http.Request) {
	v, ok, err := n.Get(r.Context(), r.PathValue("key"))
	if err != nil {
		httpError(w, err)
		return
	}
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	reply(w, v)
}

func (n *Node) handleWrite(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		e := Entry{ID: r.Header.Get("X-Request-ID"), Op: op, Key: r.PathValue("key"), Value: string(body), Expect: r.URL.Query().Get("expect")}
		if e.ID == "" {
			http.Error(w, "missing X-Request-ID", http.StatusBadRequest)
			return
		}
		out, err := n.Write(r.Context(), e)
		if err != nil {
			httpError(w, err)
			return
		}
		reply(w, out)
	}
}

func (n *Node) handleStatus(w http.ResponseWriter, r *http.Request) {
	s := n.Status()
	w.Header().Set("Content-Type", "application/json")
	if !s.Healthy {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(s)
}

func (n *Node) handleAppend(w http.ResponseWriter, r *http.Request) {
	var m AppendMsg
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	if n.role == roleLeader || !n.heard(m.Epoch) {
		n.mu.Unlock()
		http.Error(w, "not following "+m.Leader, http.StatusConflict)
		return
	}
	var resp AppendResp
	if len(m.Entries) == 0 {
		n.learnCommit(m.Commit)
		resp = AppendResp{OK: true, Last: n.lastIndex()}
		n.mu.Unlock()
	} else {
		n.mu.Unlock()
		ch := make(chan AppendResp, 1)
		select {
		case n.appends <- appendReq{msg: m, reply: ch}:
		case <-r.Context().Done():
			return
		}
		select {
		case resp = <-ch:
		case <-r.Context().Done():
			return
		}
	}
	json.NewEncoder(w).Encode(resp)
}

func (n *Node) handlePropose(w http.ResponseWriter, r *http.Request) {
	var e Entry
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	leader := n.role == roleLeader
	n.mu.Unlock()
	if !leader {
		http.Error(w, "not the leader", http.StatusMisdirectedRequest)
		return
	}
	out, err := n.propose(r.Context(), e)
	if err != nil {
		httpError(w, err)
		return
	}
	reply(w, out)
}

func (n *Node) handleReadIndex(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	leader := n.role == roleLeader
	n.mu.Unlock()
	if !leader {
		http.Error(w, "not the leader", http.StatusMisdirectedRequest)
		return
	}
	idx, err := n.readIndex(r.Context())
	if err != nil {
		httpError(w, err)
		return
	}
	reply(w, strconv.FormatUint(idx, 10))
}

// reply writes body with its length declared first, so a write that fails
// part way reaches the client as a broken response, never as a short value.
func reply(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if _, err := io.WriteString(w, body); err != nil {
		return // the client sees the connection fail
	}
}

func httpError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, errNoLeader):
		code = http.StatusServiceUnavailable
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		code = http.StatusGatewayTimeout
	}
	http.Error(w, err.Error(), code)
}

// call makes one peer RPC and returns the response body of a 200.
func (n *Node) call(ctx context.Context, method, addr, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}

func (n *Node) sendAppend(ctx context.Context, addr string, m AppendMsg) (AppendResp, error) {
	var resp AppendResp
	body, err := json.Marshal(m)
	if err != nil {
		return resp, err
	}
	b, err := n.call(ctx, http.MethodPost, addr, "/raft/append", body)
	if err != nil {
		return resp, err
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return resp, fmt.Errorf("decode append response: %w", err)
	}
	return resp, nil
}

func (n *Node) sendPropose(ctx context.Context, e Entry) (string, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	b, err := n.call(ctx, http.MethodPost, n.cfg.Peers[n.cfg.Leader], "/raft/propose", body)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func (n *Node) askReadIndex(ctx context.Context) (uint64, error) {
	b, err := n.call(ctx, http.MethodGet, n.cfg.Peers[n.cfg.Leader], "/raft/readindex", nil)
	if err != nil {
		return 0, err
	}
	idx, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read index %q: %w", b, err)
	}
	return idx, nil
}
