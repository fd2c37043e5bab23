package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofault/gofault/procgroup"
)

// Reasons a process ended, in Exit.Reason.
const (
	ReasonSelf     = ""         // it ended on its own
	ReasonStopped  = "stopped"  // Stop: signal, grace, then SIGKILL
	ReasonKilled   = "killed"   // Kill: SIGKILL at once (a crash fault)
	ReasonCanceled = "canceled" // its context was cancelled (Ctrl-C)
	ReasonTimeout  = "timeout"  // ProcSpec.Timeout passed
)

// ProcSpec describes a process to start: a node or a workload.
type ProcSpec struct {
	// Args is the command line; Args[0] is the program, looked up in PATH
	// when it has no slash, made absolute against BaseDir when relative.
	Args []string
	// BaseDir resolves a relative Args[0]; default the current directory.
	BaseDir string
	// Dir is the working directory; default the current directory.
	Dir string
	// Env is the complete environment; nil means os.Environ().
	Env []string
	// Log is the file that receives stdout and stderr (appended to; its
	// directory is created). Empty discards them, unless Stdout is set.
	Log string
	// Stdout, if set, also receives the process's stdout (e.g. a workload's
	// JSON events). Writes happen on one goroutine, in order, and are all
	// done when the process's Done channel is closed.
	Stdout io.Writer
	// Stderr, if set and Log is empty, receives the process's stderr.
	Stderr io.Writer
	// StderrToStdout sends stderr where stdout goes, through the Stdout
	// pipe when Stdout is set: one pipe keeps the order in which the
	// process wrote its lines to the two (a test's -test.v lines and a
	// panic), which two writers into Log do not.
	StderrToStdout bool
	// Timeout, if positive, kills the process that long after start.
	Timeout time.Duration
}

// Exit is how a process ended.
type Exit struct {
	PID int
	// Code is the exit status, or -1 when a signal ended the process.
	Code int
	// Signal names the signal that ended the process, e.g. "SIGKILL".
	Signal string
	Time   time.Time
	// Reason is ReasonSelf or why gofault ended it.
	Reason string
	// Err is a wait error other than a non-zero exit, if any.
	Err error
}

// Process is a started process in its own process group. Its methods are
// safe for concurrent use.
type Process struct {
	pid  int
	cmd  *exec.Cmd
	done chan struct{}
	exit Exit // written before done is closed

	mu     sync.Mutex
	reason string // why gofault is ending it; first one wins
}

// StartProcess starts a process in its own process group (on Linux it also
// dies if gofault dies), with stdout and stderr going to spec.Log. The
// process group is SIGKILLed when ctx is cancelled or spec.Timeout passes;
// whenever the process ends, what is left of its group is killed too, so no
// child outlives it.
func StartProcess(ctx context.Context, spec ProcSpec) (*Process, error) {
	if len(spec.Args) == 0 {
		return nil, errors.New("start process: empty command")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Args[0], err)
	}
	prog, err := resolve(spec.Args[0], spec.BaseDir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, spec.Args[1:]...)
	cmd.Args[0] = spec.Args[0]
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.SysProcAttr = procgroup.Attr()

	var logf *os.File
	if spec.Log != "" {
		if err := os.MkdirAll(filepath.Dir(spec.Log), 0o755); err != nil {
			return nil, fmt.Errorf("start %s: %w", spec.Args[0], err)
		}
		logf, err = os.OpenFile(spec.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", spec.Args[0], err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
	} else if spec.Stderr != nil {
		cmd.Stderr = spec.Stderr
		// A writer that is not a file is copied by os/exec, and Wait waits
		// for the copy: bound that wait, in case a child holds the pipe.
		cmd.WaitDelay = 2 * time.Second
	}
	// Extra stdout goes through our own pipe so that Wait returns when the
	// process itself exits, not when the last child closes the pipe.
	var pr, pw *os.File
	if spec.Stdout != nil {
		pr, pw, err = os.Pipe()
		if err != nil {
			closeFile(logf)
			return nil, fmt.Errorf("start %s: %w", spec.Args[0], err)
		}
		cmd.Stdout = pw
		if spec.StderrToStdout {
			cmd.Stderr = pw
		}
	}
	if err := cmd.Start(); err != nil {
		closeFile(logf, pr, pw)
		return nil, fmt.Errorf("start %s: %w", spec.Args[0], err)
	}
	closeFile(pw)
	p := &Process{pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}

	copied := make(chan struct{})
	if pr != nil {
		var w io.Writer = spec.Stdout
		if logf != nil {
			w = io.MultiWriter(logf, spec.Stdout)
		}
		go func() {
			defer close(copied)
			io.Copy(w, pr) // ends at EOF: the group is killed when the process ends
		}()
	} else {
		close(copied)
	}

	go func() {
		werr := cmd.Wait()
		now := time.Now()
		// Kill what is left of the group (children of the process).
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		if pr != nil {
			select {
			case <-copied:
			case <-time.After(2 * time.Second): // a child left the group and holds the pipe
				pr.Close()
				<-copied
			}
			pr.Close()
		}
		closeFile(logf)
		p.mu.Lock()
		p.exit = exitOf(p.pid, cmd.ProcessState, werr, now, p.reason)
		p.mu.Unlock()
		close(p.done)
	}()

	go func() {
		var timeout <-chan time.Time
		if spec.Timeout > 0 {
			t := time.NewTimer(spec.Timeout)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-ctx.Done():
			p.kill(ReasonCanceled)
		case <-timeout:
			p.kill(ReasonTimeout)
		case <-p.done:
		}
	}()
	return p, nil
}

func resolve(prog, base string) (string, error) {
	if !strings.Contains(prog, "/") {
		path, err := exec.LookPath(prog)
		if err != nil {
			return "", fmt.Errorf("start %s: %w", prog, err)
		}
		return path, nil
	}
	if !filepath.IsAbs(prog) && base != "" {
		prog = filepath.Join(base, prog)
	}
	abs, err := filepath.Abs(prog)
	if err != nil {
		return "", fmt.Errorf("start %s: %w", prog, err)
	}
	return abs, nil
}

func closeFile(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

func exitOf(pid int, ps *os.ProcessState, werr error, t time.Time, reason string) Exit {
	e := Exit{PID: pid, Time: t, Reason: reason, Code: -1}
	if ps == nil {
		e.Err = werr
		return e
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		e.Err = werr
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = SignalName(ws.Signal())
		return e
	}
	e.Code = ps.ExitCode()
	return e
}

// PID returns the process ID, which is also its process group ID.
func (p *Process) PID() int { return p.pid }

// Done is closed when the process has ended and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to end and returns how it ended.
func (p *Process) Wait() Exit {
	<-p.done
	return p.exit
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill SIGKILLs the process group at once and waits for the process.
func (p *Process) Kill() Exit {
	p.kill(ReasonKilled)
	return p.Wait()
}

// Stop sends sig to the process group, waits up to grace for the process
// to end, then SIGKILLs the group, and returns how it ended. Stopping an
// ended process just returns its Exit.
func (p *Process) Stop(sig syscall.Signal, grace time.Duration) Exit {
	return p.stop(ReasonStopped, sig, grace)
}

// stop is Stop recording reason.
func (p *Process) stop(reason string, sig syscall.Signal, grace time.Duration) Exit {
	if !p.signal(reason, sig) {
		return p.Wait()
	}
	// A paused process (Pause) takes its signal only once it goes on.
	p.Resume()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.kill(ReasonStopped)
	}
	return p.Wait()
}

func (p *Process) kill(reason string) { p.signal(reason, syscall.SIGKILL) }

// Pause stops the whole process group (SIGSTOP) until Resume; it reports
// false if the process had already ended. The process keeps its PID,
// sockets and memory.
func (p *Process) Pause() bool { return p.cont(syscall.SIGSTOP) }

// Resume lets a paused process group go on (SIGCONT); it reports false if
// the process had already ended.
func (p *Process) Resume() bool { return p.cont(syscall.SIGCONT) }

// cont sends SIGSTOP or SIGCONT to the group, recording no reason.
func (p *Process) cont(sig syscall.Signal) bool { return p.signal("", sig) }

// signal records reason (if none yet, and one is given) and signals the
// group; it reports false if the process had already ended.
func (p *Process) signal(reason string, sig syscall.Signal) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return false
	default:
	}
	if p.reason == "" {
		p.reason = reason
	}
	// ESRCH: everything in the group has already exited.
	_ = syscall.Kill(-p.pid, sig)
	return true
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGHUP: "SIGHUP",
	syscall.SIGILL: "SIGILL", syscall.SIGINT: "SIGINT", syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGTERM: "SIGTERM", syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGALRM: "SIGALRM",
}

// SignalName returns the conventional name of sig, e.g. "SIGKILL".
func SignalName(sig syscall.Signal) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
