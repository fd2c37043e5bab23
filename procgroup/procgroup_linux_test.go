package procgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childGroup returns the process group of a child of this process that
// leads its own group, or 0.
func childGroup() int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		if ppid == os.Getpid() && pgrp == pid {
			return pid
		}
	}
	return 0
}

// groupMembers returns the names (comm) of the live, non-zombie processes
// of process group pgid.
func groupMembers(pgid int) []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		open, end := strings.IndexByte(s, '('), strings.LastIndex(s, ")")
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid && f[0] != "Z" && f[0] != "X" {
			names = append(names, s[open+1:end])
		}
	}
	return names
}

// TestCommandCancelKillsGroup starts a build that takes a while (the
// standard library's net/http with -a and an empty build cache), cancels it
// once the compiler runs, and checks that nothing of the go command's group
// survives and that it left no go-build dir behind.
func TestCommandCancelKillsGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds net/http from scratch")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	tmp, cache := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := Command(ctx, "go", "build", "-a", "-o", os.DevNull, "net/http")
	cmd.Env = append(os.Environ(), "GOTMPDIR="+tmp, "GOCACHE="+cache, "GOFLAGS=")
	done := make(chan error, 1)
	go func() { done <- Run(cmd) }()
	pgid := 0
	for end := time.Now().Add(10 * time.Second); pgid == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("go command did not start")
		}
		pgid = childGroup()
	}

	deadline := time.Now().Add(60 * time.Second)
	for !hasCompiler(groupMembers(pgid)) {
		select {
		case err := <-done:
			t.Fatalf("build ended before a compiler was seen: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no compiler started within 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("group %d before cancel: %v", pgid, groupMembers(pgid))
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("cancelled build succeeded")
		}
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) && !errors.Is(err, context.Canceled) {
			t.Logf("wait: %v", err)
		}
	case <-time.After(2 * WaitDelay):
		t.Fatal("cancelled build did not end")
	}
	// The go command has exited: its compilers and linker must be gone
	// without waiting on Run's final SIGKILL.
	var left []string
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if left = groupMembers(pgid); len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		_ = Kill(pgid)
		t.Fatalf("processes of the cancelled build's group survived: %v", left)
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("cancelled build left %s in GOTMPDIR", e.Name())
	}
}

// hasCompiler reports whether names holds the compiler, the assembler or
// the linker.
func hasCompiler(names []string) bool {
	for _, n := range names {
		if n == "compile" || n == "asm" || n == "link" {
			return true
		}
	}
	return false
}

func TestPrivateTmp(t *testing.T) {
	parent := t.TempDir()
	// A dir left by a gofault that is gone, one of a live process, and
	// something else.
	dead := filepath.Join(parent, tmpPrefix+"2147483646-1")
	live := filepath.Join(parent, fmt.Sprintf("%s%d-1", tmpPrefix, os.Getppid()))
	other := filepath.Join(parent, "go-build1")
	for _, d := range []string{dead, live, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env, cleanup, err := PrivateTmp([]string{"GOTMPDIR=" + parent, "HOME=/h"})
	if err != nil {
		t.Fatal(err)
	}
	tmp := lookup(env, "GOTMPDIR")
	if filepath.Dir(tmp) != parent || !strings.HasPrefix(filepath.Base(tmp), fmt.Sprintf("%s%d-", tmpPrefix, os.Getpid())) {
		t.Errorf("GOTMPDIR %q, want a dir of this process in %s", tmp, parent)
	}
	if lookup(env, "HOME") != "/h" {
		t.Errorf("env lost HOME: %q", env)
	}
	for _, tc := range []struct {
		dir  string
		want bool
	}{{dead, false}, {live, true}, {other, true}, {tmp, true}} {
		if _, err := os.Stat(tc.dir); (err == nil) != tc.want {
			t.Errorf("%s: exists %v, want %v", tc.dir, err == nil, tc.want)
		}
	}
	cleanup()
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cleanup left %s: %v", tmp, err)
	}
}

// TestMain runs the helper of TestPdeathsig when asked to.
func TestMain(m *testing.M) {
	if os.Getenv("PROCGROUP_HELPER") == "1" {
		cmd := Command(context.Background(), "sleep", "60")
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPdeathsig kills with SIGKILL a process that started a command with
// Command and checks that the command dies too.
func TestPdeathsig(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), "PROCGROUP_HELPER=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil {
		_ = helper.Process.Kill()
		t.Fatalf("helper: %v", err)
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if len(groupMembers(pid)) == 0 {
			return
		}
		if time.Now().After(end) {
			_ = Kill(pid)
			t.Fatalf("command %d outlived the process that started it by 5s", pid)
		}
	}
}
