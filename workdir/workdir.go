// Package workdir guards a gofault work dir (builds, trials, the store)
// against two gofault commands writing to it at once: a second campaign
// would rerun the first one's trials in the same trial dirs, and a build
// would swap the binary under a running campaign.
package workdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockFile is the lock's file name inside the work dir.
const LockFile = ".gofault.lock"

// ErrBusy is wrapped by Lock's error when another process holds the lock.
var ErrBusy = errors.New("work dir in use")

// Lock takes the work dir dir for the command (e.g. "gofault run") until
// the returned release is called or the process exits: an OS file lock,
// so a process killed with -9 leaves nothing to clean up. When another
// process holds it, Lock fails at once with an error that names the
// holder's PID, command and start time, and what to do.
func Lock(dir, command string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock work dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is used by %s; wait for it to end, stop it, or give this command a work dir of its own (--set workdir=DIR)",
				ErrBusy, dir, holder(path))
		}
		return nil, fmt.Errorf("lock work dir: %w", err)
	}
	// Who holds it, for the next one that asks.
	info := fmt.Sprintf("%d\n%s\n%s\n", os.Getpid(), time.Now().Format(time.RFC3339), command)
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(info), 0)
	}
	return func() {
		f.Truncate(0)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// holder describes the process that holds the lock file at path, from what
// it wrote there.
func holder(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "another gofault process"
	}
	lines := strings.SplitN(strings.TrimSpace(string(data)), "\n", 3)
	if len(lines) < 3 {
		return "another gofault process"
	}
	pid, _ := strconv.Atoi(lines[0])
	since := lines[1]
	if t, err := time.Parse(time.RFC3339, lines[1]); err == nil {
		since = t.Local().Format("15:04:05 Jan 2")
	}
	return fmt.Sprintf("%s (PID %d, since %s)", lines[2], pid, since)
}
