package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// killStray SIGKILLs every process but this one whose environment holds
// the entry mark ("GOFAULT_CLUSTER=<token>"): what a cluster's nodes
// started and left behind in sessions of their own (a daemonising node, a
// helper started with setsid), which killing the nodes' process groups
// misses. It reaps those that were reparented to gofault (a child
// subreaper, see BecomeSubreaper) and returns their PIDs.
func killStray(mark string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(mark)
	self := os.Getpid()
	var killed []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !hasEntry(env, want) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	for _, pid := range killed {
		reap(pid)
	}
	return killed
}

// hasEntry reports whether the NUL-separated environment env holds entry.
func hasEntry(env, entry []byte) bool {
	for len(env) > 0 {
		kv, rest, _ := bytes.Cut(env, []byte{0})
		if bytes.Equal(kv, entry) {
			return true
		}
		env = rest
	}
	return false
}

// reap waits, briefly, for a killed process that is gofault's child (a
// reparented orphan), so it leaves no zombie; others are not ours to wait.
func reap(pid int) {
	for range 50 {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if err != nil || got == pid { // ECHILD: not our child
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BecomeSubreaper makes gofault a child subreaper (PR_SET_CHILD_SUBREAPER):
// the orphans of the processes it starts (a node's daemonised helper)
// become its children instead of init's, so they stay visible to it.
func BecomeSubreaper() error {
	const prSetChildSubreaper = 36
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
