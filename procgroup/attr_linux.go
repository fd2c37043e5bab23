package procgroup

import "syscall"

// Attr puts a process in its own process group and has the kernel SIGKILL
// it if gofault dies.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
