package gofaulttest

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// Recorder is a testing.TB that records failures instead of failing the
// test: with it a test checks that Run fails a campaign it must fail.
// Everything else (TempDir, Name, Deadline, Cleanup) goes to the embedded
// TB.
//
//	rec := &gofaulttest.Recorder{TB: t}
//	rec.Do(func() { gofaulttest.Run(rec, "gofault.yaml", gofaulttest.Set("cluster.env.BUG=on")) })
//	if !rec.Failed() { t.Error("the planted bug went unnoticed") }
type Recorder struct {
	testing.TB
	mu sync.Mutex
	// Errors are the messages of Error, Errorf, Fatal and Fatalf; Logs
	// those of Log and Logf.
	Errors, Logs []string
	// FailedNow reports whether Fatal, Fatalf or FailNow was called.
	FailedNow bool
}

// Do runs f as a test body: a Fatal in f ends f (as it ends a test), not
// the caller.
func (r *Recorder) Do(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// Failed reports whether an error or a fatal error was recorded.
func (r *Recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.Errors) > 0 || r.FailedNow
}

func (r *Recorder) add(to *[]string, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*to = append(*to, msg)
}

// Error records a failure.
func (r *Recorder) Error(args ...any) { r.add(&r.Errors, fmt.Sprintln(args...)) }

// Errorf records a failure.
func (r *Recorder) Errorf(format string, args ...any) { r.add(&r.Errors, fmt.Sprintf(format, args...)) }

// Fail records a failure.
func (r *Recorder) Fail() { r.add(&r.Errors, "Fail") }

// FailNow records a fatal failure and ends the goroutine (Do's f).
func (r *Recorder) FailNow() {
	r.mu.Lock()
	r.FailedNow = true
	r.mu.Unlock()
	runtime.Goexit()
}

// Fatal records a fatal failure and ends Do's f.
func (r *Recorder) Fatal(args ...any) { r.Error(args...); r.FailNow() }

// Fatalf records a fatal failure and ends Do's f.
func (r *Recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }

// Log records a log line (and passes it on to the embedded TB).
func (r *Recorder) Log(args ...any) { r.add(&r.Logs, fmt.Sprintln(args...)); r.TB.Log(args...) }

// Logf records a log line (and passes it on to the embedded TB).
func (r *Recorder) Logf(format string, args ...any) {
	r.add(&r.Logs, fmt.Sprintf(format, args...))
	r.TB.Logf(format, args...)
}

// Helper is a no-op: the recorder's callers are not the test's.
func (r *Recorder) Helper() {}
