package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// procState is the state letter of process pid in /proc (R, S, T, …).
func procState(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return f[0]
}

// waitState waits up to 5 s for process pid to be in one of states.
func waitState(t *testing.T, pid int, states string) string {
	t.Helper()
	var st string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if st = procState(t, pid); strings.Contains(states, st) {
			return st
		}
	}
	t.Fatalf("process %d in state %s, want one of %q", pid, st, states)
	return ""
}

// TestPauseResume: a paused process is stopped (state T) with its PID,
// goes on after Resume, and a paused process still ends on Stop's signal
// within its grace, not by the SIGKILL after it.
func TestPauseResume(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := StartProcess(context.Background(), ProcSpec{Args: []string{bin, "serve", "127.0.0.1:0"}, Dir: dir, Env: append(os.Environ(), helperEnv+"=1"), Log: filepath.Join(dir, "p.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	waitFile(t, filepath.Join(dir, "env"))
	pid := p.PID()
	if !p.Pause() {
		t.Fatal("Pause: process ended")
	}
	waitState(t, pid, "T")
	if !p.Resume() {
		t.Fatal("Resume: process ended")
	}
	waitState(t, pid, "RS")
	if p.PID() != pid {
		t.Fatalf("PID %d after the pause, want %d", p.PID(), pid)
	}
	p.Pause()
	waitState(t, pid, "T")
	e := p.Stop(15, 30*time.Second) // SIGTERM; SIGKILL only after 30 s
	if e.Signal == "SIGKILL" || e.Reason != ReasonStopped {
		t.Errorf("a paused process stopped as %+v, want its own exit on SIGTERM", e)
	}
	if p.Pause() || p.Resume() {
		t.Error("Pause or Resume of an ended process reported it running")
	}
}
