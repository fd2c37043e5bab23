package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestTransferLogger: the two errors a leadership transfer causes are
// logged at info while one is in progress or just ended, and at error
// otherwise; no other line changes.
func TestTransferLogger(t *testing.T) {
	stale := func(l hclog.Logger) { l.Error("peer has newer term, stopping replication", "peer", "n3") }
	snapTransfer := func(l hclog.Logger) {
		l.Error("failed to take snapshot", "error", fmt.Errorf("x: %w", raft.ErrLeadershipTransferInProgress))
	}
	snapOther := func(l hclog.Logger) { l.Error("failed to take snapshot", "error", raft.ErrRaftShutdown) }
	other := func(l hclog.Logger) { l.Error("failed to appendEntries to", "peer", "n2") }
	named := func(l hclog.Logger) { l.Named("x").With("a", 1).Error("peer has newer term, stopping replication") }
	asLog := func(l hclog.Logger) { l.Log(hclog.Error, "peer has newer term, stopping replication") }
	now, future := time.Now(), time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name  string
		until time.Time // zero: no transfer
		log   func(hclog.Logger)
		want  string
	}{
		{"stale term in a transfer", future, stale, "[INFO]"},
		{"stale term, transfer ended", now.Add(-time.Millisecond), stale, "[ERROR]"},
		{"stale term without a transfer", time.Time{}, stale, "[ERROR]"},
		{"snapshot refused by the transfer", future, snapTransfer, "[INFO]"},
		{"snapshot failed otherwise in a transfer", future, snapOther, "[ERROR]"},
		{"another error in a transfer", future, other, "[ERROR]"},
		{"through Named and With", future, named, "[INFO]"},
		{"through Log", future, asLog, "[INFO]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			var until atomic.Int64
			if !tc.until.IsZero() {
				until.Store(tc.until.UnixNano())
			}
			l := transferLogger{hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info}), &until}
			tc.log(l)
			out := buf.String()
			if !strings.Contains(out, tc.want) {
				t.Errorf("logged %q, want %s", out, tc.want)
			}
			if marked := strings.Contains(out, transferMark); marked != (tc.want == "[INFO]") {
				t.Errorf("logged %q: mark %v", out, marked)
			}
		})
	}
}
