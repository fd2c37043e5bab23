//go:build unix && !linux

package cluster

import "syscall"

// sysProcAttr puts a process in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
