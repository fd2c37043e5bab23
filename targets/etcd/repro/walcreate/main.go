// Command walcreate reproduces, without gofault, the etcd WAL bug found by
// `gofault test` on etcd's wal tests (docs/gotest.md, "wal.Create replaces
// an existing WAL"; releases v3.5.35, v3.6.16 and v3.7.4, rates in
// README.md): wal.Exist returns false on any error of its ReadDir, so when
// that ReadDir fails for a moment, wal.Create on a directory that holds a
// WAL does not return os.ErrExist: it builds a new WAL in DIR.tmp, removes
// DIR and renames the new WAL into its place. The existing WAL is deleted.
//
// The transient failure is descriptor exhaustion that ends a moment later,
// as in a busy process at its limit. The program sets its soft
// RLIMIT_NOFILE to 1024 (the usual default), and in each round writes a
// WAL with metadata "first" and one entry, opens /dev/null until open
// fails with EMFILE, and calls wal.Create on the same directory while
// another goroutine closes those descriptors a few microseconds after the
// call began: Exist's open fails with EMFILE, Create's later opens
// succeed. The release moment is tuned from round to round: after a round
// whose Create returned os.ErrExist (released before Exist's open) the next
// waits longer, after one whose Create failed with EMFILE (released after
// Create's next open) it waits less. Each round then opens the WAL and
// reports whether the first WAL's metadata and entry survived.
//
//	cd targets/etcd && go run ./repro/walcreate -rounds 200
//	cd targets/etcd && go run ./repro/walcreate -control -rounds 200   # no descriptors held
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/raft/v3/raftpb"
	"go.etcd.io/etcd/server/v3/wal"
	"go.etcd.io/etcd/server/v3/wal/walpb"
)

// outcome is what one round's second wal.Create did to the first WAL.
type outcome int

const (
	replaced  outcome = iota // Create returned a new WAL; the first one is gone
	refused                  // Create returned os.ErrExist, as it should
	failed                   // Create failed with another error; the first WAL is intact
	lostOnErr                // Create failed, and the first WAL is gone too
)

func main() {
	rounds := flag.Int("rounds", 200, "rounds, each on a new WAL directory")
	control := flag.Bool("control", false, "hold no descriptors (Create must then return os.ErrExist every time)")
	verbose := flag.Bool("v", false, "print every round")
	flag.Parse()
	// Go raises the soft limit to the hard one at start; put back the usual default.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Fatal(err)
	}
	lim.Cur = min(1024, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Fatal(err)
	}
	base, err := os.MkdirTemp("", "walcreate")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(base)

	start := time.Now()
	var count [4]int
	var example string
	delay, step := 2*time.Microsecond, 250*time.Nanosecond
	for i := 1; i <= *rounds; i++ {
		dir := filepath.Join(base, fmt.Sprint(i), "wal")
		out, detail, err := round(dir, delay, !*control)
		if err != nil {
			log.Fatalf("round %d: %v", i, err)
		}
		count[out]++
		line := fmt.Sprintf("round %d (descriptors back after %v): %s", i, delay, detail)
		if *verbose {
			fmt.Println(line)
		}
		if out == replaced && example == "" {
			example = line
		}
		switch out {
		case refused:
			delay += step
		case failed:
			delay = max(0, delay-step)
		}
		if err := os.RemoveAll(filepath.Dir(dir)); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%d of %d rounds: the existing WAL was replaced (Create returned a new, empty WAL instead of os.ErrExist)\n", count[replaced], *rounds)
	fmt.Printf("Create returned os.ErrExist in %d rounds, failed with another error (the WAL intact) in %d, failed and the WAL was gone in %d\n",
		count[refused], count[failed], count[lostOnErr])
	if example != "" {
		fmt.Println("example:", example)
	}
	fmt.Printf("%v in all\n", time.Since(start).Round(time.Millisecond))
}

// round writes a WAL with metadata "first" and one entry in dir, calls
// wal.Create on dir again (with every free descriptor held until delay
// after the call began, when exhaust is set) and reads the WAL back.
func round(dir string, delay time.Duration, exhaust bool) (outcome, string, error) {
	if err := writeFirst(dir); err != nil {
		return 0, "", err
	}
	var held []int
	if exhaust {
		var err error
		if held, err = holdDescriptors(); err != nil {
			return 0, "", err
		}
	}
	// The releaser spins rather than sleeps: a timer or a channel would
	// wake it tens of microseconds late, and Create's window is a few.
	var ready, begun atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		ready.Store(true)
		for !begun.Load() {
		}
		for t := time.Now(); time.Since(t) < delay; {
		}
		for _, fd := range held {
			syscall.Close(fd)
		}
	}()
	for !ready.Load() {
	}
	begun.Store(true)
	w, createErr := wal.Create(nil, dir, []byte("second"))
	<-done
	if createErr == nil {
		w.Close()
	}
	meta, entries, readErr := readBack(dir)
	intact := readErr == nil && meta == "first" && entries == 1
	got := fmt.Sprintf("read back: metadata %q, %d entries", meta, entries)
	if readErr != nil {
		got = fmt.Sprintf("read back: %v", readErr)
	}
	switch {
	case createErr == nil:
		if intact {
			return 0, "", fmt.Errorf("create returned a WAL, yet the first one is intact")
		}
		return replaced, "Create returned a new WAL; " + got + ` (want "first", 1)`, nil
	case errors.Is(createErr, os.ErrExist) && intact:
		return refused, "Create: " + createErr.Error(), nil
	case intact:
		return failed, "Create: " + createErr.Error(), nil
	default:
		return lostOnErr, "Create: " + createErr.Error() + "; " + got, nil
	}
}

// writeFirst creates the WAL that the second Create must not touch.
func writeFirst(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	w, err := wal.Create(nil, dir, []byte("first"))
	if err != nil {
		return fmt.Errorf("create the first WAL: %w", err)
	}
	st := raftpb.HardState{Term: 1, Commit: 1}
	ents := []raftpb.Entry{{Term: 1, Index: 1, Data: []byte("entry 1")}}
	if err := w.Save(st, ents); err != nil {
		w.Close()
		return fmt.Errorf("save to the first WAL: %w", err)
	}
	return w.Close()
}

// readBack opens the WAL in dir and returns its metadata and entry count.
func readBack(dir string) (string, int, error) {
	w, err := wal.Open(nil, dir, walpb.Snapshot{})
	if err != nil {
		return "", 0, err
	}
	defer w.Close()
	meta, _, ents, err := w.ReadAll()
	return string(meta), len(ents), err
}

// holdDescriptors opens /dev/null until the process is out of descriptors
// and returns what it opened.
func holdDescriptors() ([]int, error) {
	var fds []int
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.EMFILE) {
			return fds, nil
		}
		if err != nil {
			for _, fd := range fds {
				syscall.Close(fd)
			}
			return nil, fmt.Errorf("hold descriptors: %w", err)
		}
		fds = append(fds, fd)
	}
}
