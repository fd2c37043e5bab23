//go:build linux

package durable

import (
	"os"
	"strconv"
	"strings"
)

// positions returns, for each inode under dir (a path with symlinks
// resolved, as /proc shows it) that process proc ("self" or a PID) has
// open, the largest file offset of its descriptors on it: where a
// sequential writer (a log appending into preallocated space) has written
// up to. It reads /proc/PROC/fd and /proc/PROC/fdinfo; what it cannot read
// is left out.
func positions(proc, dir string) map[uint64]int64 {
	des, err := os.ReadDir("/proc/" + proc + "/fd")
	if err != nil {
		return nil
	}
	prefix := dir + string(os.PathSeparator)
	var pos map[uint64]int64
	for _, de := range des {
		fd := "/proc/" + proc + "/fd/" + de.Name()
		target, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(target, prefix) {
			continue
		}
		info, err := os.Stat(fd)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		ino, ok := inode(info)
		if !ok {
			continue
		}
		data, err := os.ReadFile("/proc/" + proc + "/fdinfo/" + de.Name())
		if err != nil {
			continue
		}
		p, ok := fdinfoPos(string(data))
		if !ok {
			continue
		}
		if pos == nil {
			pos = map[uint64]int64{}
		}
		if old, seen := pos[ino]; !seen || p > old {
			pos[ino] = p
		}
	}
	return pos
}

// fdinfoPos parses the "pos:" line of a /proc/PID/fdinfo/FD file.
func fdinfoPos(info string) (int64, bool) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, "pos:"); ok {
			p, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return p, err == nil
		}
	}
	return 0, false
}
