package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gofault/gofault/examples/minikv/transport"
)

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
// peers' messages arrive at transport.Path (package transport).
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /kv/{key}", n.handleGet)
	mux.HandleFunc("PUT /kv/{key}", n.handleWrite("put"))
	mux.HandleFunc("DELETE /kv/{key}", n.handleWrite("delete"))
	mux.HandleFunc("POST /cas/{key}", n.handleWrite("cas"))
	mux.HandleFunc("GET /status", n.handleStatus)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { reply(w, "ok\n") })
	mux.Handle("POST "+transport.Path, n.tr)
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
