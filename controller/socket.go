package controller

// The controller's unix socket lives in a short dir of its own under the
// temp dir; a dir whose owner died is removed by the next gofault.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SocketPath returns a short path for the controller's socket: unix socket
// paths are limited to about 100 bytes, and work dirs can be deep. The
// socket's dir holds the owner's PID, so a later gofault removes the dirs
// of owners that died without cleaning up (kill -9).
func SocketPath() (string, error) {
	removeStaleSockets(os.TempDir())
	dir, err := os.MkdirTemp("", socketDirPrefix)
	if err != nil {
		return "", fmt.Errorf("controller socket dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("controller socket dir: %w", err)
	}
	return filepath.Join(dir, "ctl.sock"), nil
}

// RemoveSocketDir removes the dir of a socket from SocketPath, once its
// controller is closed.
func RemoveSocketDir(sock string) error {
	return os.RemoveAll(filepath.Dir(sock))
}

// socketDirPrefix names the controller socket dirs under the temp dir.
const socketDirPrefix = "gofault-"

// removeStaleSockets removes the controller socket dirs under tmp whose
// owner is dead: its recorded PID is gone, or it recorded none and its
// socket answers nobody.
func removeStaleSockets(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, socketDirPrefix+"*"))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "ctl.sock")); err != nil {
			continue // not a socket dir, or one being set up
		}
		if data, err := os.ReadFile(filepath.Join(d, "pid")); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
				continue
			}
		} else if c, err := net.DialTimeout("unix", filepath.Join(d, "ctl.sock"), 100*time.Millisecond); err == nil {
			c.Close()
			continue
		}
		os.RemoveAll(d)
	}
}
