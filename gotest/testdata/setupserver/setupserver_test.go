package setupserver

import (
	"testing"
	"time"
)

// startServer is the tests' setup helper: it starts a server and waits
// for it, and panics when it is not ready in time, as nats-server's
// RunServer does.
func startServer(t *testing.T) *Server {
	s := Start(t.TempDir())
	select {
	case <-s.Ready():
	case <-time.After(2 * time.Second):
		panic("server failed to be ready after 2s")
	}
	return s
}

// TestPutGet stores a record and reads it back.
func TestPutGet(t *testing.T) {
	s := startServer(t)
	if err := s.Put("k", "v"); err != nil {
		t.Fatal(err)
	}
	v, err := s.Get("k")
	if err != nil {
		t.Fatal(err)
	}
	if v != "v" {
		t.Fatalf("Get = %q after Put, want %q", v, "v")
	}
}
