package controller

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestRemoveStaleSockets(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name, pid string) string {
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "ctl.sock"), nil, 0o600)
		if pid != "" {
			os.WriteFile(filepath.Join(d, "pid"), []byte(pid), 0o644)
		}
		return d
	}
	// A PID that is surely dead: a child that already exited.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := mk("gofault-dead", strconv.Itoa(cmd.Process.Pid))
	live := mk("gofault-live", strconv.Itoa(os.Getpid()))
	old := mk("gofault-old", "") // no PID file, a socket nobody answers
	other := filepath.Join(tmp, "gofault-other")
	os.MkdirAll(other, 0o755) // no socket: not ours to judge
	removeStaleSockets(tmp)
	for d, want := range map[string]bool{dead: false, live: true, old: false, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}
