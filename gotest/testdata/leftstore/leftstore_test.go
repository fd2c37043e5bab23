package leftstore

import (
	"errors"
	"io/fs"
	"sync/atomic"
	"testing"
	"time"
)

// TestOpen reports Open's error: a fault there is the test's assumption,
// and Open leaves nothing behind for the next run.
func TestOpen(t *testing.T) {
	s, err := Open(t.TempDir(), "a")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestOpenLeaky accepts a failed disk (a *fs.PathError) and nothing else:
// its first run passes with the fault, and the planted bug fails the next
// one "already open".
func TestOpenLeaky(t *testing.T) {
	s, err := OpenLeaky(t.TempDir(), "b")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		t.Logf("the disk failed: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestInit reports Init's error; the planted bug hands the next run the
// same error, though no fault struck it.
func TestInit(t *testing.T) {
	if err := Init(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

// workers counts TestLeftover's workers running: the test file's own
// state.
var workers atomic.Int32

// TestLeftover starts a worker and t.Fatal's Open's error before it stops
// it: the next run finds the worker still running and fails — the test's
// own leftover, with correct code.
func TestLeftover(t *testing.T) {
	if n := workers.Load(); n != 0 {
		t.Fatalf("%d workers of an earlier run still running", n)
	}
	stop := make(chan struct{})
	workers.Add(1)
	go func() {
		<-stop
		workers.Add(-1)
	}()
	s, err := Open(t.TempDir(), "c")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	close(stop)
	for workers.Load() != 0 {
		time.Sleep(time.Millisecond)
	}
}
