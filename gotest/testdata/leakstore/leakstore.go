// Package leakstore is a tiny server for gofault test's leak check, with
// two planted bugs whose only harm is a goroutine left running or a file
// left open, and correct code beside them: Start stops its loop when its
// write fails, as it should; StartLeaky returns the error and leaves its
// loop running for the life of the process; OpenLogLeaky returns the
// error of its header's write and leaves the file open. Start and
// StartLeaky start the package's janitor once, which runs for the life of
// the process by design (a goroutine every fault-free run leaves too, so
// no leak).
package leakstore

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

var janitorOnce sync.Once

// janitor starts the package's janitor, once a process.
func janitor() {
	janitorOnce.Do(func() {
		go func() {
			for {
				time.Sleep(time.Hour)
			}
		}()
	})
}

// Server runs a loop until it is stopped.
type Server struct {
	stop, done chan struct{}
}

func newServer() *Server { return &Server{stop: make(chan struct{}), done: make(chan struct{})} }

func (s *Server) loop() {
	defer close(s.done)
	<-s.stop
}

// Stop stops the server's loop and waits for it.
func (s *Server) Stop() {
	close(s.stop)
	<-s.done
}

// Start starts a server whose marker file is in dir; when the marker's
// write fails it stops the loop and returns the error.
func Start(dir string) (*Server, error) {
	janitor()
	s := newServer()
	go s.loop()
	if err := os.WriteFile(filepath.Join(dir, "start"), nil, 0o644); err != nil {
		s.Stop()
		return nil, fmt.Errorf("start: %w", err)
	}
	return s, nil
}

// StartLeaky is Start with the planted bug: when the marker's write fails
// it returns the error and leaves the loop running.
func StartLeaky(dir string) (*Server, error) {
	janitor()
	s := newServer()
	go s.loop()
	if err := os.WriteFile(filepath.Join(dir, "start"), nil, 0o644); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	return s, nil
}

// OpenLogLeaky opens the log in dir and writes its header. The planted
// bug: when the header's write fails it returns the error and leaves the
// file open.
func OpenLogLeaky(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "log-1"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	if _, err := f.Write([]byte("header\n")); err != nil {
		return nil, fmt.Errorf("log header: %w", err)
	}
	return f, nil
}
