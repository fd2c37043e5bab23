package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// dumpOf is a runtime.Stack dump: the caller, then recs.
func dumpOf(recs ...string) string {
	return strings.Join(append([]string{"goroutine 1 [running]:\nmain.main()\n\t/src/main.go:3 +0x1\n"}, recs...), "\n")
}

const (
	leakRec = "goroutine 18 [chan send, 2 minutes]:\nexample.com/x.(*S).loop(0xc000010000)\n\t/src/x.go:12 +0x2c\ncreated by example.com/x.Start in goroutine 7\n\t/src/x.go:11 +0x5c\n"
	// A goroutine parked in the runtime: its top outside the runtime is sync's.
	lockRec   = "goroutine 19 [sync.Mutex.Lock]:\ninternal/sync.runtime_SemacquireMutex(0x1, 0x0, 0x1)\n\t/go/src/runtime/sema.go:95 +0x25\nsync.(*Mutex).Lock(...)\n\t/go/src/sync/mutex.go:46\nexample.com/x.(*S).flush(0xc000010000)\n\t/src/x.go:40 +0x2c\ncreated by example.com/x.Start in goroutine 7\n\t/src/x.go:12 +0x5c\n"
	testRec   = "goroutine 20 [chan receive]:\nexample.com/x.helper()\n\t/src/x.go:50 +0x2c\ncreated by example.com/x.TestLeak in goroutine 7\n\t/src/x_test.go:11 +0x5c\n"
	signalRec = "goroutine 21 [syscall]:\nos/signal.signal_recv()\n\t/go/src/runtime/sigqueue.go:152 +0x29\nos/signal.loop()\n\t/go/src/os/signal/signal_unix.go:23 +0x13\ncreated by os/signal.Notify.func1.1 in goroutine 1\n\t/go/src/os/signal/signal.go:151 +0x1f\n"
)

func TestLeftOf(t *testing.T) {
	agentRec := "goroutine 22 [IO wait]:\n" + agentPackage + ".(*conn).read()\n\t/a/conn.go:1 +0x1\ncreated by " + agentPackage + ".connect in goroutine 1\n\t/a/conn.go:2 +0x1\n"
	for _, tt := range []struct {
		name string
		recs []string
		want []string // keys
	}{
		{"none", nil, nil},
		{"a loop left", []string{leakRec}, []string{wire.LeftKey("example.com/x.(*S).loop", "example.com/x.Start")}},
		{"a lock waited on", []string{lockRec}, []string{wire.LeftKey("example.com/x.(*S).flush", "example.com/x.Start")}},
		{"the test's, the runtime's, the agent's", []string{testRec, signalRec, agentRec}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := keys(leftOf([]byte(dumpOf(tt.recs...))))
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("keys = %q, want %q", got, tt.want)
			}
		})
	}
	g := leftOf([]byte(dumpOf(leakRec)))
	if want := "[chan send] example.com/x.(*S).loop at /src/x.go:12; created by example.com/x.Start at /src/x.go:11"; len(g) != 1 || g[0].detail != want {
		t.Errorf("detail = %+v, want %q", g, want)
	}
}

func TestSettleLeft(t *testing.T) {
	loopKey := wire.LeftKey("example.com/x.(*S).loop", "example.com/x.Start")
	var slept time.Duration
	sleep := func(d time.Duration) { slept += d }
	polls := 0
	// endsAfter returns a dump with the loop, and the lock waiter for the
	// first n polls.
	endsAfter := func(n int) func() []byte {
		return func() []byte {
			polls++
			if polls <= n {
				return []byte(dumpOf(leakRec, lockRec))
			}
			return []byte(dumpOf(leakRec))
		}
	}
	for _, tc := range []struct {
		name     string
		dump     func() []byte
		base     map[string]bool
		want     int // goroutines left
		min, max time.Duration
	}{
		{"one ends after two polls, one stays", endsAfter(2), nil, 1, leftStable, time.Second},
		{"nothing left: no wait", func() []byte { return []byte(dumpOf()) }, nil, 0, 0, 0},
		{"a set that never settles ends at the bound", func() []byte {
			polls++
			if polls%2 == 0 {
				return []byte(dumpOf(leakRec))
			}
			return []byte(dumpOf(lockRec))
		}, nil, 1, leftSettle, leftSettle + 100*time.Millisecond},
		{"a goroutine the baseline lacks is waited for until it ends", endsAfter(15), map[string]bool{loopKey: true}, 1, time.Second, leftSettleNew},
		{"one the baseline lacks that stays: waited for up to the longer bound", endsAfter(1 << 30), map[string]bool{loopKey: true}, 2, leftSettleNew, leftSettleNew + 100*time.Millisecond},
		{"all in the baseline: the stable rule", endsAfter(1 << 30), map[string]bool{loopKey: true, wire.LeftKey("example.com/x.(*S).flush", "example.com/x.Start"): true}, 2, leftStable, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slept, polls = 0, 0
			got := settleLeft(tc.dump, tc.base, sleep)
			if len(got) != tc.want {
				t.Errorf("left %d goroutines (%+v), want %d", len(got), got, tc.want)
			}
			if slept < tc.min || slept > tc.max {
				t.Errorf("waited %v, want between %v and %v", slept, tc.min, tc.max)
			}
		})
	}
}

func TestLeftLines(t *testing.T) {
	g := leftOf([]byte(dumpOf(leakRec, strings.Replace(leakRec, "goroutine 18", "goroutine 30", 1))))
	got := leftLines(g)
	want := wire.LeftPrefix + wire.LeftKey("example.com/x.(*S).loop", "example.com/x.Start") + "\t2× [chan send] example.com/x.(*S).loop at /src/x.go:12; created by example.com/x.Start at /src/x.go:11\n" +
		wire.LeftDonePrefix + "2 left\n"
	if got != want {
		t.Errorf("lines =\n%s\nwant\n%s", got, want)
	}
	if got := leftLines(nil); got != wire.LeftDonePrefix+"0 left\n" {
		t.Errorf("no goroutine: %q", got)
	}
	// Too many kinds: none listed, and no line saying it checked.
	var many []leftGoroutine
	for i := 0; i <= maxLeftLines; i++ {
		many = append(many, leftGoroutine{key: fmt.Sprint(i), detail: "d"})
	}
	if got := leftLines(many); strings.Contains(got, wire.LeftPrefix) || strings.Contains(got, wire.LeftDonePrefix) {
		t.Errorf("too many kinds listed or checked: %q", got)
	}
}

// TestLeftOfRuntime reads the real runtime's dump: a goroutine this test
// starts (in a _test.go file) is the test's own, and a goroutine started
// by a function of a non-test file would be the code's.
func TestLeftOfRuntime(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { <-stop; close(done) }()
	defer func() { close(stop); <-done }()
	for _, g := range leftOf(allStacks()) {
		if strings.Contains(g.key, "TestLeftOfRuntime") {
			t.Errorf("the test's own goroutine taken for the code's: %+v", g)
		}
	}
}

func TestStdFrame(t *testing.T) {
	for fn, want := range map[string]bool{
		"sync.(*Mutex).Lock(...)":                true,
		"net/http.(*persistConn).readLoop(0x1)":  true,
		"example.com/x.(*S).loop(0x1)":           false,
		"go.etcd.io/etcd/server/v3/wal.Create()": false,
		"main.main()":                            false,
	} {
		if got := stdFrame(fn); got != want {
			t.Errorf("stdFrame(%q) = %v, want %v", fn, got, want)
		}
	}
}

func TestFileKey(t *testing.T) {
	for _, tc := range []struct{ path, tmp, want string }{
		{"/tmp/gofault-1/TestOpen123/001/0000000000000001-0000000000000002.wal", "/tmp/gofault-1", "$TMPDIR/TestOpenN/N/N-N.wal"},
		{"/tmp/gofault-1/x", "/tmp/gofault-1/", "$TMPDIR/x"},
		{"/var/lib/app/state", "/tmp/gofault-1", "/var/lib/app/state"},
		{"/tmp/gofault-12/x", "/tmp/gofault-1", "/tmp/gofault-N/x"},
	} {
		if got := fileKey(tc.path, tc.tmp); got != tc.want {
			t.Errorf("fileKey(%q, %q) = %q, want %q", tc.path, tc.tmp, got, tc.want)
		}
	}
}

// TestOpenFiles: a file the process holds open is listed, keyed by its
// path under $TMPDIR; once closed it is not.
func TestOpenFiles(t *testing.T) {
	if _, err := os.Stat(fdDir); err != nil {
		t.Skip("no /proc/self/fd here")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "seg-7.wal"))
	if err != nil {
		t.Fatal(err)
	}
	want := wire.LeftFileKey("$TMPDIR/TestOpenFilesN/N/seg-N.wal")
	has := func() bool {
		for _, g := range openFiles() {
			if g.key == want {
				return true
			}
		}
		return false
	}
	if !has() {
		t.Errorf("open file %s not listed as %q: %+v", f.Name(), want, openFiles())
	}
	f.Close()
	if has() {
		t.Errorf("closed file %s still listed", f.Name())
	}
}
