// Package procgroup starts commands in process groups of their own, so that
// gofault can stop a command together with everything it started: the go
// command's compilers and linker, a node's helpers. On Linux the kernel also
// kills such a command when gofault dies, even by SIGKILL.
package procgroup

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// WaitDelay is how long a cancelled command's group has to exit after
// SIGINT before os/exec kills the command and stops waiting for its output.
const WaitDelay = 5 * time.Second

// Command is exec.CommandContext for a command that must not outlive its
// context: it runs in its own process group (a Ctrl-C at the terminal
// reaches gofault only, which cancels ctx), and when ctx is done the whole
// group gets SIGINT, which the go command handles by stopping its compilers
// and linker and removing its temporary dir. If the command has not exited
// WaitDelay later, os/exec SIGKILLs it. Run it with Run, which also kills
// what is left of its group.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = Attr()
	cmd.Cancel = func() error {
		return Signal(cmd.Process.Pid, syscall.SIGINT)
	}
	cmd.WaitDelay = WaitDelay
	return cmd
}

// Run runs cmd, made by Command, and once it has exited SIGKILLs whatever
// is left of its process group, so no compiler or linker outlives it. It
// gives the command a private GOTMPDIR (inside the one cmd.Env or the
// environment names, if any) and removes it afterwards: the go command
// killed by a signal leaves its go-build dir behind.
func Run(cmd *exec.Cmd) error {
	env, cleanup, err := PrivateTmp(cmd.Env)
	if err != nil {
		return fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	defer cleanup()
	cmd.Env = env
	err = cmd.Run()
	if cmd.Process != nil {
		_ = Kill(cmd.Process.Pid)
	}
	return err
}

// PrivateTmp returns env (os.Environ() if nil) with GOTMPDIR set to a new
// dir inside the GOTMPDIR env names, if any, and a function that removes
// that dir: a go command stopped by a signal leaves its go-build dir in
// GOTMPDIR. Run uses it; so does the go list that go/packages runs, which
// Command cannot start. The dir's name holds gofault's PID, and those left
// by gofault processes that are gone (killed outright) are removed.
func PrivateTmp(env []string) ([]string, func(), error) {
	if env == nil {
		env = os.Environ()
	}
	parent := cmp.Or(lookup(env, "GOTMPDIR"), os.TempDir())
	removeStale(parent)
	tmp, err := os.MkdirTemp(parent, fmt.Sprintf("%s%d-", tmpPrefix, os.Getpid()))
	if err != nil {
		return nil, nil, fmt.Errorf("private GOTMPDIR: %w", err)
	}
	return append(env[:len(env):len(env)], "GOTMPDIR="+tmp), func() { os.RemoveAll(tmp) }, nil
}

// tmpPrefix starts the name of every private GOTMPDIR, followed by the PID
// of the gofault that made it.
const tmpPrefix = "gofault-go-"

// removeStale removes the private GOTMPDIRs in parent whose gofault
// process no longer exists.
func removeStale(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, tmpPrefix+"*"))
	for _, d := range dirs {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(d), tmpPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(d)
		}
	}
}

// lookup returns the last value of name in env, as os/exec would pass it.
func lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// Signal sends sig to every process of the group led by pgid.
func Signal(pgid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}

// Kill SIGKILLs every process of the group led by pgid.
func Kill(pgid int) error {
	return Signal(pgid, syscall.SIGKILL)
}
