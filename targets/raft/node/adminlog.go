package main

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// adminMark is appended to a line adminLogger logs at info instead of
// error.
const adminMark = " (the consequence of an admin %s, logged at info by the node program)"

// The admin operations whose consequences adminLogger knows.
const (
	opTransfer   = "transfer"
	opMembership = "membership"
	opRestore    = "restore"
)

// adminWindows holds, per admin operation, the unix-nano time until which
// one is in progress on the cluster or just ended (0: none).
type adminWindows struct {
	transfer, membership, restore atomic.Int64
}

// of returns op's window; nil for an operation it does not know.
func (w *adminWindows) of(op string) *atomic.Int64 {
	switch op {
	case opTransfer:
		return &w.transfer
	case opMembership:
		return &w.membership
	case opRestore:
		return &w.restore
	}
	return nil
}

// open marks op in progress until now + d.
func (w *adminWindows) open(op string, d time.Duration) {
	if at := w.of(op); at != nil {
		at.Store(time.Now().Add(d).UnixNano())
	}
}

// adminExcuses returns the admin operation whose consequence the error
// or warning line msg with args is, among those in progress (active), or
// "".
//
//   - A leadership transfer makes the old leader log "peer has newer
//     term, stopping replication" (its heartbeats race the new leader's
//     vote requests) and "failed to take snapshot" with
//     ErrLeadershipTransferInProgress (its periodic snapshot coincides).
//   - A membership change makes a member log "failed to take snapshot"
//     with "cannot take snapshot now, wait until the configuration entry
//     at N has been applied" (its periodic snapshot comes while the
//     change is uncommitted).
//   - A leadership transfer's election makes a member that already
//     follows the new leader log "rejecting vote request since our last
//     term is greater" (or "… last index …", both warnings): the new
//     leader's vote request, sent when it started the election, arrives
//     after the member took entries of the new term from it (seen without
//     any fault on the busy machine: 1 of 60 fault-free trials).
//   - A restore, a membership change or a transfer makes a follower log
//     "failed to decode incoming command" with "connection reset by peer":
//     the leader aborts its pipeline to the follower (a restore leaves a
//     hole in the log, a removal stops replication) and closes the
//     connection with responses unread.
//
// Each happens in some trials and not others, so the log checker, which
// learns from fault-free trials, would report it now and then.
func adminExcuses(msg string, args []any, active func(op string) bool) string {
	errText := ""
	var err error
	for i := 1; i < len(args); i += 2 {
		if args[i-1] == "error" {
			if e, ok := args[i].(error); ok {
				err, errText = e, e.Error()
			} else {
				errText = fmt.Sprint(args[i])
			}
		}
	}
	switch {
	case active(opTransfer) && msg == "peer has newer term, stopping replication",
		active(opTransfer) && msg == "failed to take snapshot" && errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return opTransfer
	case active(opTransfer) && (msg == "rejecting vote request since our last term is greater" || msg == "rejecting vote request since our last index is greater"):
		return opTransfer
	case active(opMembership) && msg == "failed to take snapshot" && strings.Contains(errText, "wait until the configuration entry at"):
		return opMembership
	case msg == "failed to decode incoming command" && strings.Contains(errText, "connection reset by peer"):
		for _, op := range []string{opRestore, opMembership, opTransfer} {
			if active(op) {
				return op
			}
		}
	}
	return ""
}

// adminLogger is a member's hclog logger: it logs at info, marked with
// adminMark, the errors and warnings adminExcuses ties to an admin operation in
// progress on the cluster (or just ended), and every other line, and these
// outside such an operation, as raft logs it.
//
// It also logs at info, marked with snapshotMark, raft's "found temporary
// snapshot" warning about a directory this member is still writing
// (writingSnapshots); about any other, a warning as raft logs it.
type adminLogger struct {
	hclog.Logger
	windows *adminWindows
	snaps   *writingSnapshots
}

func (l adminLogger) active(op string) bool {
	at := l.windows.of(op)
	return at != nil && time.Now().UnixNano() < at.Load()
}

// Error implements hclog.Logger.
func (l adminLogger) Error(msg string, args ...any) {
	l.Log(hclog.Error, msg, args...)
}

// Warn implements hclog.Logger.
func (l adminLogger) Warn(msg string, args ...any) {
	l.Log(hclog.Warn, msg, args...)
}

// Log implements hclog.Logger.
func (l adminLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Warn && msg == "found temporary snapshot" && l.snaps.writing(argString(args, "name")) {
		l.Logger.Info(msg+snapshotMark, args...)
		return
	}
	if level == hclog.Error || level == hclog.Warn {
		if op := adminExcuses(msg, args, l.active); op != "" {
			l.Logger.Info(msg+fmt.Sprintf(adminMark, op), args...)
			return
		}
	}
	logAt(l.Logger, level, msg, args...)
}

// argString returns the value of key in the key/value pairs args as a
// string ("" when absent or not a string).
func argString(args []any, key string) string {
	for i := 1; i < len(args); i += 2 {
		if args[i-1] == key {
			s, _ := args[i].(string)
			return s
		}
	}
	return ""
}

// logAt logs msg at level through the level's own method: hclog's
// Logger.Log came in go-hclog v0.12, and the hashicorp/raft releases before
// v1.3.8 that the known-bug file runs bring an older go-hclog into the
// node's build. A level below Trace or above Error (NoLevel, Off) logs
// nothing, as Log does for Off.
func logAt(l hclog.Logger, level hclog.Level, msg string, args ...any) {
	switch level {
	case hclog.Trace:
		l.Trace(msg, args...)
	case hclog.Debug:
		l.Debug(msg, args...)
	case hclog.Info:
		l.Info(msg, args...)
	case hclog.Warn:
		l.Warn(msg, args...)
	case hclog.Error:
		l.Error(msg, args...)
	}
}

// With implements hclog.Logger.
func (l adminLogger) With(args ...any) hclog.Logger {
	return adminLogger{l.Logger.With(args...), l.windows, l.snaps}
}

// Named implements hclog.Logger.
func (l adminLogger) Named(name string) hclog.Logger {
	return adminLogger{l.Logger.Named(name), l.windows, l.snaps}
}

// ResetNamed implements hclog.Logger.
func (l adminLogger) ResetNamed(name string) hclog.Logger {
	return adminLogger{l.Logger.ResetNamed(name), l.windows, l.snaps}
}
