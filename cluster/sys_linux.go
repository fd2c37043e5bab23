package cluster

import "syscall"

// sysProcAttr puts a process in its own process group and has the kernel
// SIGKILL it if gofault dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
