//go:build unix && !linux

package procgroup

import "syscall"

// Attr puts a process in its own process group.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
