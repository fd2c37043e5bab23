// Package setupserver is a test fixture of gofault test's setup rule
// (test.setup): a server whose start-up runs in a goroutine of its own,
// as nats-server's does, started by a helper of the test file that
// panics when the server is not ready in time (nats-server's RunServer).
// A fault in that start-up is setup, not the code under test; Put's
// write carries a planted bug (its error is swallowed) that the rule
// must not hide.
package setupserver

import (
	"os"
	"path/filepath"
)

// Server keeps records as files of its dir.
type Server struct {
	dir   string
	ready chan struct{}
}

// Start starts a server on dir. Its start-up (writing its identity file)
// runs in a goroutine: a server that cannot write it refuses to start and
// is never ready.
func Start(dir string) *Server {
	s := &Server{dir: dir, ready: make(chan struct{})}
	go func() {
		if err := os.WriteFile(filepath.Join(dir, "server.id"), []byte("n1"), 0o644); err != nil {
			return
		}
		close(s.ready)
	}()
	return s
}

// Ready is closed once the server has started.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Put stores val under key. The planted bug: the write's error is
// dropped, and Put says it stored the record.
func (s *Server) Put(key, val string) error {
	_ = os.WriteFile(filepath.Join(s.dir, key), []byte(val), 0o644)
	return nil
}

// Get returns the record under key.
func (s *Server) Get(key string) (string, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, key))
	return string(b), err
}
