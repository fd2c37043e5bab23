// Package node holds one example of each pattern the Sieve pass finds, and
// negatives that it must not report.
package node

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// WAL is a log file behind a mutex.
type WAL struct {
	mu   sync.Mutex
	f    *os.File
	rw   sync.RWMutex
	meta *os.File
}

// Append writes under the mutex, released by a deferred Unlock: lock-held.
func (w *WAL) Append(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(b); err != nil { // want "lock"
		return err
	}
	return w.sync()
}

// sync is called with the mutex held: its Sync is lock-held through the
// call graph.
func (w *WAL) sync() error {
	return w.f.Sync() // want "lock"
}

// Truncate unlocks before an early return; both writes are lock-held, the
// final Sync after Unlock is not.
func (w *WAL) Truncate(b []byte) error {
	w.mu.Lock()
	if len(b) == 0 {
		_, err := w.f.Write(nil) // want "lock"
		w.mu.Unlock()
		return err
	}
	if _, err := w.f.Write(b); err != nil { // want "lock"
		w.mu.Unlock()
		return err
	}
	w.mu.Unlock()
	return w.f.Sync() // negative: after Unlock
}

// Meta reads under a read lock: lock-held.
func (w *WAL) Meta(buf []byte) (int, error) {
	w.rw.RLock()
	n, err := w.meta.Read(buf) // want "lock"
	w.rw.RUnlock()
	return n, err
}

// Maybe locks on one path only: the write after the merge is not always
// under the lock, so it is not lock-held.
func (w *WAL) Maybe(lock bool, b []byte) error {
	if lock {
		w.mu.Lock()
	}
	_, err := w.f.Write(b)
	if lock {
		w.mu.Unlock()
	}
	return err
}

// Flush writes two files, then signals waiters: barrier-pending I/O. The
// two writes share a basic block, so only the second represents it.
func Flush(wg *sync.WaitGroup, a, b *os.File, data []byte) {
	defer wg.Done()
	a.Write(data) // want "barrier"
	b.Write(data) // want "barrier"
}

// Notify writes, then closes a channel another goroutine waits on.
func Notify(done chan struct{}, f *os.File, data []byte) {
	f.Write(data) // want "barrier"
	close(done)
	f.Sync() // negative: after the barrier
}

// Dial uses a context with a timeout: timeout-protected.
func Dial(addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr) // want "timeout"
}

// Get sends a request bound to a context with a deadline.
func Get(c *http.Client, url string, d time.Duration) (*http.Response, error) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(d))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req) // want "timeout"
}

// DialBackground has no timeout: negative.
func DialBackground(addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(context.Background(), "tcp", addr)
}

// Read reads in a goroutine and waits for it against time.After.
func Read(f *os.File, buf []byte) error {
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(f, buf) // want "barrier timeout"
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(500 * time.Millisecond):
		return errors.New("read timed out")
	}
}

// slowApply is the bound of Apply's elapsed-time check.
const slowApply = 100 * time.Millisecond

// Apply writes and checks how long it took: the write is timeout-protected
// by slowApply; the Sync after the check is not.
func Apply(f *os.File, b []byte) (bool, error) {
	start := time.Now()
	_, err := f.Write(b) // want "timeout"
	slow := time.Since(start) > slowApply
	f.Sync() // negative: after the comparison
	return slow, err
}

// Ping sets a deadline on the connection, then writes and reads.
func Ping(addr string, timeout time.Duration) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte("ping")); err != nil { // want "timeout"
		return err
	}
	buf := make([]byte, 4)
	_, err = io.ReadFull(conn, buf) // want "timeout"
	return err
}

// Pong's deadline is an absolute time: the write is protected, but the
// deadline's duration cannot be captured.
func Pong(addr string, at time.Time) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	conn.SetWriteDeadline(at)
	_, err = conn.Write([]byte("pong")) // want "timeout"
	return err
}

// Watch awaits a goroutine's read against the caller's context: guarded,
// with no timeout expression of its own.
func Watch(ctx context.Context, f *os.File, buf []byte) error {
	done := make(chan error, 1)
	go func() {
		_, err := f.Read(buf) // want "barrier timeout"
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Timed awaits a goroutine's sync against a timer.
func Timed(f *os.File) error {
	done := make(chan error, 1)
	go func() { done <- f.Sync() }() // want "barrier timeout"
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errors.New("sync timed out")
	}
}

// Captured dials in a closure that captures a timed context.
func Captured(addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	dial := func() (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr) // want "timeout"
	}
	return dial()
}

// Sub measures with time.Now().Sub and compares the other way round.
func Sub(f *os.File, b []byte, limit time.Duration) bool {
	start := time.Now()
	f.Write(b) // want "timeout"
	return limit <= time.Now().Sub(start)
}
