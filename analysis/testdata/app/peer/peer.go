// Package peer talks to other nodes over TCP.
package peer

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"example.com/app/store"
)

// ErrClosed is returned after Close.
var ErrClosed = fmt.Errorf("peer: %w", store.ErrNotFound)

// Send dials addr, writes msg and reads a 4-byte ack.
func Send(addr string, msg []byte) ([]byte, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	ack := make([]byte, 4)
	if _, err := io.ReadFull(c, ack); err != nil {
		return nil, err
	}
	return ack, nil
}

// Serve answers each line of each connection with its length.
func Serve(ln net.Listener, s *store.Store) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go handle(c, s)
	}
}

func handle(c net.Conn, s *store.Store) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if err := s.Put(line, []byte(line)); err != nil {
			return
		}
		if _, err := fmt.Fprintf(c, "%d\n", len(line)); err != nil {
			return
		}
	}
}

// Parse reads a header from a string: a strings.Reader cannot fail with
// an I/O error.
func Parse(s string) ([]byte, error) {
	b := make([]byte, 2)
	if _, err := io.ReadFull(strings.NewReader(s), b); err != nil {
		return nil, err
	}
	return b, nil
}

// Fetch only propagates: no site at calls of Fetch.
func Fetch(s *store.Store, key string) ([]byte, error) {
	return s.Lookup(key)
}

// Handler stores the request body under the path and echoes it.
func Handler(s *store.Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.Put(r.URL.Path, body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if _, err := w.Write(body); err != nil {
			return
		}
	}
}
