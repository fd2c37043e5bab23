package agent

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gofault/gofault/agent/wire"
)

// fdDir lists the process's open file descriptors (Linux); where it does
// not exist, no file is checked.
var fdDir = "/proc/self/fd"

// openFiles returns the regular files the process holds open, each keyed
// by its path made the same from run to run (fileKey): Ran reports them
// with the goroutines, so that a file a fault's path opened and never
// closed is seen. Not files: sockets, pipes, the runtime's poller, /dev,
// /proc and /sys (the runtime keeps its cgroup's CPU limits open).
func openFiles() []leftGoroutine {
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return nil
	}
	var out []leftGoroutine
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err != nil || !strings.HasPrefix(target, "/") {
			continue
		}
		path := strings.TrimSuffix(target, " (deleted)")
		if strings.HasPrefix(path, "/dev/") || strings.HasPrefix(path, "/proc/") || strings.HasPrefix(path, "/sys/") {
			continue
		}
		out = append(out, leftGoroutine{key: wire.LeftFileKey(fileKey(path, os.TempDir())), detail: "[open file] " + target})
	}
	return out
}

// fileKey is path with the temp dir tmp written $TMPDIR and every run of
// digits N (t.TempDir's numbered directories, a segment's sequence
// number), so that the same file left open in two runs has one key.
func fileKey(path, tmp string) string {
	if tmp != "" && tmp != "/" {
		if rest, ok := strings.CutPrefix(path, strings.TrimSuffix(tmp, "/")+"/"); ok {
			path = "$TMPDIR/" + rest
		}
	}
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if c := path[i]; c < '0' || c > '9' {
			b.WriteByte(c)
		} else if i == 0 || path[i-1] < '0' || path[i-1] > '9' {
			b.WriteByte('N')
		}
	}
	return b.String()
}
