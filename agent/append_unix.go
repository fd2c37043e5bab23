//go:build linux || darwin || freebsd

package agent

import (
	"os"
	"syscall"
)

// appending reports whether f was opened with O_APPEND, whose writes go to
// the file's end whatever its offset. It reads the flags through the raw
// descriptor without changing its mode (Fd would make it blocking).
func appending(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	flags := 0
	if err := rc.Control(func(fd uintptr) {
		if r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0); e == 0 {
			flags = int(r)
		}
	}); err != nil {
		return false
	}
	return flags&syscall.O_APPEND != 0
}
