package cluster

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/gofault/gofault/record"
)

// DefaultGrace is how long a command workload may run past its deadline
// before RunWorkload kills it.
const DefaultGrace = 2 * time.Second

// Workload is a workload run as a separate process: a Go workload built
// from a package (workload.Main), or any external program. Its exit status
// is the workload's result; every stdout line that is a JSON
// record.ClientEvent is an event, other lines are logged.
type Workload struct {
	// Args is the command line; Args[0] is the program.
	Args []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// BaseDir resolves a relative program (Args[0] with a slash), as for
	// cluster nodes; empty means the current directory. A program without
	// a slash is looked up in PATH.
	BaseDir string
	// Env adds NAME=value entries on top of the current process's
	// environment: the workload contract's (workload.Env.Environ) and the
	// config's own (workload.env).
	Env []string
	// Deadline is when the workload must have finished (the contract's
	// GOFAULT_DEADLINE); zero means none.
	Deadline time.Time
	// Stderr receives the command's stderr; nil discards it.
	Stderr io.Writer
	// OnEvent is called, from one goroutine, for each event the command
	// writes to stdout. Required to record them.
	OnEvent func(record.ClientEvent)
	// Log receives the stdout lines that are not events; nil means
	// slog.Default().
	Log *slog.Logger
	// Grace is how long the command may run past Deadline before its
	// process group is killed; DefaultGrace when zero.
	Grace time.Duration
}

// WorkloadResult is how a command workload ended.
type WorkloadResult struct {
	// ExitCode is the exit status, -1 if the process was killed by a signal.
	ExitCode int
	// TimedOut is set when the command outlived its deadline and grace and
	// was killed.
	TimedOut bool
	// Events counts the events read from stdout.
	Events int
	// Duration is the command's run time.
	Duration time.Duration
}

// OK reports whether the workload succeeded.
func (r WorkloadResult) OK() bool { return r.ExitCode == 0 && !r.TimedOut }

// RunWorkload runs the command workload w to its end. It returns an error
// only when the command could not be run or ctx was cancelled; a workload
// that fails or times out is described by the WorkloadResult. The command
// is started as nodes are (StartProcess): in a process group of its own,
// which is killed when the command ends, and on Linux killed too if gofault
// dies, so it leaves no stray processes.
func RunWorkload(ctx context.Context, w Workload) (WorkloadResult, error) {
	var res WorkloadResult
	if len(w.Args) == 0 {
		return res, errors.New("workload command: empty command line")
	}
	grace := w.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	var timeout time.Duration
	if !w.Deadline.IsZero() {
		timeout = max(time.Until(w.Deadline.Add(grace)), time.Millisecond)
	}
	log := w.Log
	if log == nil {
		log = slog.Default()
	}
	pr, pw := io.Pipe()
	events := make(chan int, 1)
	go func() { events <- readEvents(pr, w.OnEvent, log) }()
	start := time.Now()
	p, err := StartProcess(ctx, ProcSpec{
		Args:    w.Args,
		BaseDir: w.BaseDir,
		Dir:     w.Dir,
		Env:     append(os.Environ(), w.Env...),
		Stdout:  pw,
		Stderr:  w.Stderr,
		Timeout: timeout,
	})
	if err != nil {
		pw.Close()
		<-events
		return res, fmt.Errorf("workload command: %w", err)
	}
	exit := p.Wait() // stdout is all written when it returns
	pw.Close()
	res.Events = <-events
	res.Duration = time.Since(start)
	res.ExitCode = exit.Code
	switch {
	case exit.Reason == ReasonCanceled || ctx.Err() != nil:
		return res, fmt.Errorf("workload command %s: %w", w.Args[0], cmp.Or(ctx.Err(), context.Canceled))
	case exit.Reason == ReasonTimeout:
		res.TimedOut = true
	case exit.Err != nil && !errors.Is(exit.Err, exec.ErrWaitDelay):
		return res, fmt.Errorf("workload command %s: %w", w.Args[0], exit.Err)
	}
	return res, nil
}

// readEvents reads r to its end, passing event lines to onEvent and logging
// the others. It returns the number of events.
func readEvents(r io.Reader, onEvent func(record.ClientEvent), log *slog.Logger) int {
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// An over-long line is not an event: log its start, skip the rest.
			log.Info("workload output (truncated)", "line", string(line[:256]))
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				break
			}
			continue
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if ev, ok := parseEvent(line); ok {
				n++
				if onEvent != nil {
					onEvent(ev)
				}
			} else {
				log.Info("workload output", "line", string(line))
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				log.Warn("workload output: read failed", "err", err)
				_, _ = io.Copy(io.Discard, r)
			}
			return n
		}
	}
	_, _ = io.Copy(io.Discard, r)
	return n
}

// parseEvent decodes one JSON line into a client event. A line is an event
// when it is a JSON object with a known "kind" and a "time".
func parseEvent(line []byte) (record.ClientEvent, bool) {
	var ev record.ClientEvent
	if len(line) == 0 || line[0] != '{' {
		return ev, false
	}
	if err := json.Unmarshal(line, &ev); err != nil || ev.Time.IsZero() {
		return ev, false
	}
	switch ev.Kind {
	case record.EvProgress, record.EvError, record.EvPhase, record.EvHealthy, record.EvUnhealthy:
		return ev, true
	case record.EvOp:
		return ev, ev.Op != nil
	case record.EvViolation:
		return ev, ev.Checker != ""
	case record.EvDigest:
		return ev, ev.Msg != "" && ev.Digest != ""
	}
	return ev, false
}
