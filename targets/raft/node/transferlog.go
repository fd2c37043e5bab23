package main

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// transferMark is appended to a line transferLogger logs at info instead
// of error.
const transferMark = " (during a leadership transfer, logged at info by the node program)"

// transferLogger is a member's hclog logger. A leadership transfer (POST
// /admin/transfer) makes hashicorp/raft log two errors on the old leader
// that are the transfer's own consequence, and only sometimes (a race
// between its heartbeats and the new leader's vote requests, and its
// periodic snapshot): "peer has newer term, stopping replication" and
// "failed to take snapshot" with ErrLeadershipTransferInProgress. While
// the member hands its leadership over, and for a grace after, it logs
// those at info, marked with transferMark, so the log checker, which
// learns from fault-free trials, neither reports them nor learns them as
// normal for a trial without a transfer. Every other line, and these
// outside a transfer, is logged as raft logs it.
type transferLogger struct {
	hclog.Logger
	// until is the unix-nano time until which a transfer excuses the
	// lines (0: none).
	until *atomic.Int64
}

// transferExcuses reports whether an error line msg with args is a
// leadership transfer's consequence; inTransfer says whether one is in
// progress or just ended.
func transferExcuses(msg string, args []any, inTransfer bool) bool {
	if !inTransfer {
		return false
	}
	switch msg {
	case "peer has newer term, stopping replication":
		return true
	case "failed to take snapshot":
		for i := 1; i < len(args); i += 2 {
			if err, ok := args[i].(error); ok && errors.Is(err, raft.ErrLeadershipTransferInProgress) {
				return true
			}
		}
	}
	return false
}

func (l transferLogger) inTransfer() bool { return time.Now().UnixNano() < l.until.Load() }

// Error implements hclog.Logger.
func (l transferLogger) Error(msg string, args ...any) {
	l.Log(hclog.Error, msg, args...)
}

// Log implements hclog.Logger.
func (l transferLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Error && transferExcuses(msg, args, l.inTransfer()) {
		l.Logger.Info(msg+transferMark, args...)
		return
	}
	l.Logger.Log(level, msg, args...)
}

// With implements hclog.Logger.
func (l transferLogger) With(args ...any) hclog.Logger {
	return transferLogger{l.Logger.With(args...), l.until}
}

// Named implements hclog.Logger.
func (l transferLogger) Named(name string) hclog.Logger {
	return transferLogger{l.Logger.Named(name), l.until}
}

// ResetNamed implements hclog.Logger.
func (l transferLogger) ResetNamed(name string) hclog.Logger {
	return transferLogger{l.Logger.ResetNamed(name), l.until}
}
