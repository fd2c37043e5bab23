package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestAdminLogger: the errors an admin operation causes are logged at info
// while one is in progress or just ended, and at error otherwise (the
// planted cases: the same line without the operation, another error in
// it, the other operation's line); no other line changes.
func TestAdminLogger(t *testing.T) {
	stale := func(l hclog.Logger) { l.Error("peer has newer term, stopping replication", "peer", "n3") }
	snapTransfer := func(l hclog.Logger) {
		l.Error("failed to take snapshot", "error", fmt.Errorf("x: %w", raft.ErrLeadershipTransferInProgress))
	}
	snapConfig := func(l hclog.Logger) {
		l.Error("failed to take snapshot", "error", errors.New("cannot take snapshot now, wait until the configuration entry at 15 has been applied (have applied 14)"))
	}
	snapOther := func(l hclog.Logger) { l.Error("failed to take snapshot", "error", raft.ErrRaftShutdown) }
	reset := func(l hclog.Logger) {
		l.Error("failed to decode incoming command", "error", errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer"))
	}
	decodeOther := func(l hclog.Logger) {
		l.Error("failed to decode incoming command", "error", errors.New("unexpected EOF"))
	}
	other := func(l hclog.Logger) { l.Error("failed to appendEntries to", "peer", "n2") }
	named := func(l hclog.Logger) { l.Named("x").With("a", 1).Error("peer has newer term, stopping replication") }
	asLog := func(l hclog.Logger) { l.Log(hclog.Error, "peer has newer term, stopping replication") }
	for _, tc := range []struct {
		name string
		open map[string]time.Duration // op → window left (negative: ended)
		log  func(hclog.Logger)
		want string // "transfer", "membership" (at info, marked) or "" (at error)
	}{
		{"stale term in a transfer", map[string]time.Duration{opTransfer: time.Hour}, stale, opTransfer},
		{"stale term, transfer ended", map[string]time.Duration{opTransfer: -time.Millisecond}, stale, ""},
		{"stale term without an operation", nil, stale, ""},
		{"stale term in a membership change", map[string]time.Duration{opMembership: time.Hour}, stale, ""},
		{"snapshot refused by a transfer", map[string]time.Duration{opTransfer: time.Hour}, snapTransfer, opTransfer},
		{"snapshot refused by a transfer, none known", nil, snapTransfer, ""},
		{"snapshot failed otherwise in a transfer", map[string]time.Duration{opTransfer: time.Hour}, snapOther, ""},
		{"snapshot refused by a membership change", map[string]time.Duration{opMembership: time.Hour}, snapConfig, opMembership},
		{"snapshot refused by a configuration change, none known", nil, snapConfig, ""},
		{"snapshot refused by a configuration change in a transfer", map[string]time.Duration{opTransfer: time.Hour}, snapConfig, ""},
		{"connection reset in a membership change", map[string]time.Duration{opMembership: time.Hour}, reset, opMembership},
		{"connection reset without one", nil, reset, ""},
		{"connection reset in a restore", map[string]time.Duration{opRestore: time.Hour}, reset, opRestore},
		{"connection reset in a transfer", map[string]time.Duration{opTransfer: time.Hour}, reset, opTransfer},
		{"connection reset, restore ended", map[string]time.Duration{opRestore: -time.Second}, reset, ""},
		{"snapshot refused by a configuration change in a restore", map[string]time.Duration{opRestore: time.Hour}, snapConfig, ""},
		{"stale term in a restore", map[string]time.Duration{opRestore: time.Hour}, stale, ""},
		{"another decode error in a membership change", map[string]time.Duration{opMembership: time.Hour}, decodeOther, ""},
		{"another error in both", map[string]time.Duration{opTransfer: time.Hour, opMembership: time.Hour}, other, ""},
		{"through Named and With", map[string]time.Duration{opTransfer: time.Hour}, named, opTransfer},
		{"through Log", map[string]time.Duration{opTransfer: time.Hour}, asLog, opTransfer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := &adminWindows{}
			for op, d := range tc.open {
				w.open(op, d)
			}
			tc.log(adminLogger{hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info}), w})
			out := buf.String()
			switch {
			case tc.want == "" && (!strings.Contains(out, "[ERROR]") || strings.Contains(out, "logged at info")):
				t.Errorf("logged %q, want it at error, unmarked", out)
			case tc.want != "" && (!strings.Contains(out, "[INFO]") || !strings.Contains(out, fmt.Sprintf(adminMark, tc.want))):
				t.Errorf("logged %q, want it at info, marked %s", out, tc.want)
			}
		})
	}
}

// TestLogAt checks that logAt logs each level through its own method, and
// nothing for a level outside Trace..Error.
func TestLogAt(t *testing.T) {
	for _, tc := range []struct {
		level hclog.Level
		want  string
	}{
		{hclog.Trace, "[TRACE]"},
		{hclog.Debug, "[DEBUG]"},
		{hclog.Info, "[INFO]"},
		{hclog.Warn, "[WARN]"},
		{hclog.Error, "[ERROR]"},
		{hclog.Off, ""},
	} {
		var buf bytes.Buffer
		logAt(hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace}), tc.level, "m", "k", 1)
		out := buf.String()
		if tc.want == "" && out != "" || tc.want != "" && !(strings.Contains(out, tc.want) && strings.Contains(out, " m: k=1")) {
			t.Errorf("level %s: logged %q, want %q", tc.level, out, tc.want)
		}
	}
}

// TestAdminMarkListed: the target's gofault.yaml lists (checkers.
// log_downgraded) every line adminLogger marks, so the report shows what
// the node program logged at info in place of an error.
func TestAdminMarkListed(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("..", "gofault.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var marks []*regexp.Regexp
	in := false
	for _, line := range strings.Split(string(cfg), "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case trim == "log_downgraded:":
			in = true
		case in && strings.HasPrefix(trim, "- '") && strings.HasSuffix(trim, "'"):
			marks = append(marks, regexp.MustCompile(strings.ReplaceAll(trim[3:len(trim)-1], "''", "'")))
		case in && trim != "" && !strings.HasPrefix(trim, "#"):
			in = false
		}
	}
	if len(marks) == 0 {
		t.Fatal("gofault.yaml has no checkers.log_downgraded pattern")
	}
	for _, op := range []string{opTransfer, opMembership, opRestore} {
		line := "raft: failed to take snapshot" + fmt.Sprintf(adminMark, op)
		if !slices.ContainsFunc(marks, func(re *regexp.Regexp) bool { return re.MatchString(line) }) {
			t.Errorf("no log_downgraded pattern matches %q", line)
		}
	}
}
