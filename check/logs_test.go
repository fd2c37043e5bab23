package check

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestParseLogLine(t *testing.T) {
	tests := []struct {
		raw      string
		ok       bool
		level    string
		template string
	}{
		{`{"level":"warn","ts":"2026-11-21T05:00:00.200Z","caller":"rafthttp/peer.go:267","msg":"dropped internal Raft message since sending buffer is full (overloaded network)","message-type":"MsgHeartbeat","local-member-id":"8e9e05c52164694d"}`,
			true, LevelWarn, "warn rafthttp/peer.go dropped internal Raft message since sending buffer is full (overloaded network)"},
		{`{"level":"error","caller":"etcdserver/server.go:1400","msg":"failed to apply 17 entries at index 0x1f from 127.0.0.1:2380 to /tmp/d/member/wal"}`,
			true, LevelError, "error etcdserver/server.go failed to apply <n> entries at index <hex> from <addr> to <path>"},
		{`{"level":"info","msg":"ready to serve"}`, true, LevelInfo, "info  ready to serve"},
		{`{"msg":"no level"}`, false, "", ""},
		{`panic: assignment to entry in nil map`, true, LevelPanic, "panic  assignment to entry in nil map"},
		{`fatal error: concurrent map writes`, true, LevelFatal, "fatal  concurrent map writes"},
		{`2026/11/21 05:00:01 WARNING: grpc: addrConn.createTransport failed to connect to {Addr: "127.0.0.1:2379"}`,
			true, LevelWarn, "warn  WARNING: grpc: addrConn.createTransport failed to connect to {Addr: <q>}"},
		{`time=2026-11-21T05:00:01Z level=error msg="lost leader" term=42 id=deadbeef01`, true, LevelError, "error  time= level=error msg=<q> term=<n> id=<hex>"},
		{`[12345] 2026/11/21 05:00:01.000000 [INF] 127.0.0.1:6222 - rid:9 - Router connection closed: Read Error`,
			true, LevelInfo, "info  <addr> [INF] <addr> - rid:<n> - Router connection closed: Read Error"},
		{`[12345] 2026/11/21 05:00:01.000000 [WRN] JetStream cluster stream 'A > s' has NO quorum, stalled`,
			true, LevelWarn, "warn  <addr> [WRN] JetStream cluster stream <q> has NO quorum, stalled"},
		{`[12345] 2026/11/21 05:00:01.000000 [ERR] 127.0.0.1:4222 - cid:5 - Error reading from client: EOF`,
			true, LevelError, "error  <addr> [ERR] <addr> - cid:<n> - Error reading from client: EOF"},
		{`time=2026-11-21T05:00:01Z level=info msg="retrying after error" err="connection refused"`,
			true, LevelInfo, "info  time= level=info msg=<q> err=<q>"},
		{`goroutine 12 [running]:`, false, "", ""},
		{`	/root/go/src/x.go:12 +0x1d`, false, "", ""},
		{`errors are fine here but no level word: terror`, false, "", ""},
		// klog/glog: the letter is the level, not the words of the message.
		{`I1206 05:12:00.123456   12345 volume_server.go:88] error reading heartbeat from master, will retry`,
			true, LevelInfo, "info volume_server.go error reading heartbeat from master, will retry"},
		{`E1206 05:12:00.123456   12345 weed/server/master_grpc_server.go:61] failed to connect to 127.0.0.1:19333`,
			true, LevelError, "error master_grpc_server.go failed to connect to <addr>"},
		{`W1206 05:12:00.000001 7 raft_server.go:120] leader changed`, true, LevelWarn, "warn raft_server.go leader changed"},
		// seaweedfs's glog fork: no thread ID, no bracket; still info
		// whatever the words (lines of a seaweedfs master, 2026-12-06).
		{`I1206 10:34:43.237806 masterclient.go:817 connect to 127.0.0.1:27972: rpc error: code = Unavailable desc = connection error`,
			true, LevelInfo, "info masterclient.go connect to <addr>: rpc error: code = Unavailable desc = connection error"},
		{`I1206 10:34:24.239874 common.go:136 error writing JSON status /cluster/status 200: http: request method or response status code does not allow body`,
			true, LevelInfo, "info common.go error writing JSON status <path> <n>: http: request method or response status code does not allow body"},
		{`E1206 10:32:34.979026 weed/server/raft_server.go:253 failed to save state`, true, LevelError, "error raft_server.go failed to save state"},
		// zap's console encoder: level and caller in their columns.
		{"2026-12-06T05:12:00.123Z\tWARN\tetcdserver/server.go:88\tslow fdatasync\t{\"took\": \"1.2s\"}",
			true, LevelWarn, "warn etcdserver/server.go slow fdatasync"},
		{"2026-12-06T05:12:00.123Z\tINFO\traft/node.go:12\tan error was retried", true, LevelInfo, "info raft/node.go an error was retried"},
		// slog's JSON handler (level in capitals, "time", "source", "err").
		{`{"time":"2026-12-06T05:12:00.123Z","level":"ERROR","source":{"function":"main.run","file":"/src/app/store/store.go","line":42},"msg":"flush failed","err":"input/output error"}`,
			true, LevelError, "error store/store.go flush failed"},
		{`{"time":"2026-12-06T05:12:00Z","level":"INFO","msg":"an error in the words only"}`, true, LevelInfo, "info  an error in the words only"},
		// slog's text handler and logrus's text formatter: level=.
		{`time=2026-12-06T05:12:00.000Z level=WARN msg="lagging follower" node=n2`, true, LevelWarn, "warn  time= level=WARN msg=<q> node=n<n>"},
		{`time="2026-12-06T05:12:00Z" level=info msg="error budget ok"`, true, LevelInfo, "info  time=<q> level=info msg=<q>"},
		// logrus's JSON formatter.
		{`{"level":"warning","msg":"retrying","time":"2026-12-06T05:12:00Z"}`, true, LevelWarn, "warn  retrying"},
	}
	for _, tc := range tests {
		l, ok := ParseLogLine(tc.raw)
		if ok != tc.ok || l.Level != tc.level || (ok && l.Template != tc.template) {
			t.Errorf("ParseLogLine(%q) = %v %q %q, want %v %q %q", tc.raw, ok, l.Level, l.Template, tc.ok, tc.level, tc.template)
		}
	}
}

func TestNormalizeIsStableAcrossTrials(t *testing.T) {
	pairs := [][2]string{
		{`lost TCP streaming connection with remote peer 8e9e05c52164694d at 127.0.0.1:40021 after 1.5s`, `lost TCP streaming connection with remote peer 1c3d5e7f9a0b2c4d at 127.0.0.1:51337 after 12ms`},
		{`open /tmp/gofault/trial-3/n1/member/snap/db: input/output error`, `open /var/tmp/x/trial-99/n2/member/snap/db: input/output error`},
		{`request "key:\"a\" " took 2026-11-21T05:00:00Z`, `request "key:\"bb\" " took 2025-01-01T00:00:00.123+02:00`},
		{`member 550e8400-e29b-41d4-a716-446655440000 at http://127.0.0.1:2380`, `member 6ba7b810-9dad-11d1-80b4-00c04fd430c8 at https://localhost:12380/x`},
		{`RAFT [fjFyEjc1 - _meta_] Falling behind in health check, commit 8 != applied 7`, `RAFT [BXScrY9i - _meta_] Falling behind in health check, commit 9 != applied 8`},
		{`Filestore [S-R3F-pJgP3MAB] Critical write error`, `Filestore [S-R3F-X37BOGPx] Critical write error`},
		{`Failed to install snapshot for '$G > S2 > c-n2' [C-R3F-mwe1k837]: store is closed`, `Failed to install snapshot for '$G > S2 > c-n1' [C-R3F-V4wp6mTa]: store is closed`},
		{`RAFT [BXScrY9i - S-R3F-mEptDXar] Error subscribing to forwarded proposals`, `RAFT [BXScrY9i - S-R3F-UFNkjnzn] Error subscribing to forwarded proposals`},
	}
	for _, p := range pairs {
		if a, b := normalize(p[0]), normalize(p[1]); a != b {
			t.Errorf("templates differ:\n%q\n%q", a, b)
		}
	}
	for _, w := range []string{"JetStream", "S3", "sha256", "deadbeef42", "utf8mb4", "ipv4addr", "node12ab", "LeaderTransfer", "getHTTPResponseCode", "McDonald", "iOS", "GiB", "macOS", "OpenTelemetry", "WebSocket", "maxAckPending", "addrConn"} {
		if got := normalize("x " + w + " y"); strings.Contains(got, "<id>") {
			t.Errorf("normalize(%q) = %q: not a generated ID", w, got)
		}
	}
	for _, p := range pairs {
		if n := normalize(p[0]); normalize(n) != n {
			t.Errorf("normalize is not idempotent on %q: %q", n, normalize(n))
		}
	}
	if normalize("failed to commit") == normalize("failed to apply") {
		t.Error("different messages share a template")
	}
}

func TestPlainTime(t *testing.T) {
	utc := time.Date(2026, 11, 21, 5, 0, 1, 250_000_000, time.UTC)
	local := time.Date(2026, 11, 21, 5, 0, 1, 250_000_000, time.Local)
	for raw, want := range map[string]time.Time{
		`2026-11-21T05:00:01.250Z [WARN]  raft: rejecting vote request since our last term is greater`:         utc,
		`2026-11-21T07:00:01.250+02:00 [ERROR] x`:                                                              utc,
		`time=2026-11-21T05:00:01.25Z level=error msg="lost leader"`:                                           utc,
		`[12345] 2026/11/21 05:00:01.250000 [WRN] stalled`:                                                     local,
		`2026/11/21 05:00:01.25 WARNING: grpc`:                                                                 local,
		`WARN something happened somewhere at 2026-11-21T05:00:01Z, far into the line, is not the line's time`: {},
		`WARN no time`: {},
	} {
		l, ok := ParseLogLine(raw)
		if !ok || !l.Time.Equal(want) {
			t.Errorf("ParseLogLine(%q).Time = %v (ok %v), want %v", raw, l.Time, ok, want)
		}
	}
}

func TestLog(t *testing.T) {
	baseLines := []string{
		`{"ts":"2026-11-21T05:00:01Z","level":"info","caller":"embed/etcd.go:100","msg":"serving client traffic","address":"127.0.0.1:2379"}`,
		`{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"rafthttp/probing_status.go:68","msg":"prober detected unhealthy status","remote-peer-id":"8e9e05c52164694d"}`,
	}
	newErr := `{"ts":"2026-11-21T05:00:01Z","level":"error","caller":"mvcc/kvstore.go:300","msg":"failed to restore index from 17 keys","error":"bad revision"}`
	tests := []struct {
		name   string
		lines  []string
		mod    func(*trialB)
		noBase bool
		ignore []string
		want   verdictWant
	}{
		{"same templates, other values", []string{
			`{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"rafthttp/probing_status.go:68","msg":"prober detected unhealthy status","remote-peer-id":"1c3d5e7f9a0b2c4d"}`,
			`{"ts":"2026-11-21T05:00:01Z","level":"info","caller":"x/new.go:1","msg":"an info line is never judged"}`,
		}, nil, false, nil, verdictWant{}},
		{"no baseline", []string{newErr}, nil, true, nil, verdictWant{unknown: true, symptom: "no fault-free baseline to judge logs against"}},
		{"new error", []string{newErr, `{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"x/y.go:2","msg":"a new warning"}`}, nil, false, nil,
			verdictWant{failed: true, symptom: "new error log at mvcc/kvstore.go: failed to restore index from <n> keys", nodes: []string{"n1"}, ev: "new warn on n1"}},
		{"new panic line", []string{"panic: boom 42"}, nil, false, nil, verdictWant{failed: true, symptom: "new panic log: boom <n>"}},
		{"ignored by pattern", []string{newErr}, nil, false, []string{`restore index`},
			verdictWant{symptom: "informational: new error log at mvcc/kvstore.go: failed to restore index from <n> keys", ev: "log-ignore (matches restore index)"}},
		{"echo of injected EIO", []string{`{"ts":"2026-11-21T05:00:01Z","level":"error","caller":"wal/wal.go:800","msg":"failed to write","error":"write /d/wal: input/output error"}`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO" })
			}, false, nil,
			verdictWant{symptom: "informational: new error log at wal/wal.go: failed to write", ev: "informational, echo-error (echoes the injected error \"input/output error\""}},
		{"a resource the injected ENOSPC exhausted, in the target's words", []string{`2026-11-21T05:00:01.000Z [ERR] JetStream out of resources, will be DISABLED`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "ENOSPC" })
			}, false, nil,
			verdictWant{symptom: "informational: new error log: [ERR] JetStream out of resources, will be DISABLED", ev: "resource-exhausted (ENOSPC ran a resource out"}},
		{"a subsystem the ENOSPC turned off, reported off", []string{`2026-11-21T05:00:01.000Z [WRN] Healthcheck failed: "JetStream not enabled (10076)"`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "ENOSPC" })
			}, false, nil,
			verdictWant{symptom: "informational: new warn log: [WRN] Healthcheck failed: <q>", ev: "resource-exhausted (ENOSPC ran a resource out"}},
		{"the same line after an EIO is new", []string{`2026-11-21T05:00:01.000Z [WRN] Healthcheck failed: "JetStream not enabled (10076)"`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO" })
			}, false, nil,
			verdictWant{failed: true, symptom: "new warn log: [WRN] Healthcheck failed: <q>", nodes: []string{"n1"}}},
		{"an election after an error injected into the leader", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: rejecting pre-vote request since we have a leader: from=127.0.0.1:16579 leader=127.0.0.1:31543 leader-id=n1`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO"; in.Role = "Leader" })
			}, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: rejecting pre-vote request since we have a leader: from=<addr> leader=<addr> leader-id=n<n>", ev: "leader-error"}},
		{"an election after an error injected into a follower is new", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: rejecting pre-vote request since we have a leader: from=127.0.0.1:16579 leader=127.0.0.1:31543 leader-id=n1`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO"; in.Role = "Follower" })
			}, false, nil,
			verdictWant{failed: true, symptom: "new warn log: [WARN] raft: rejecting pre-vote request since we have a leader: from=<addr> leader=<addr> leader-id=n<n>", nodes: []string{"n1"}}},
		{"out of resources after an EIO is new", []string{`2026-11-21T05:00:01.000Z [ERR] JetStream out of resources, will be DISABLED`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO" })
			}, false, nil,
			verdictWant{failed: true, symptom: "new error log: [ERR] JetStream out of resources, will be DISABLED", nodes: []string{"n1"}}},
		{"logged at the fault site", []string{`{"ts":"2026-11-21T05:00:01Z","level":"error","caller":"etcdserver/raft.go:200","msg":"failed to send out heartbeats"}`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) {
					in.Error = "ECONNRESET"
					in.Stack = []record.Frame{{Func: "net.(*conn).Write", File: "/usr/local/go/src/net/net.go"}, {Func: "x", File: "/w/etcd/server/etcdserver/raft.go"}}
				})
			}, false, nil, verdictWant{symptom: "informational: new error log at etcdserver/raft.go: failed to send out heartbeats", ev: "fault-site (logged at the fault site etcdserver/raft.go"}},
		{"peers of a killed node", []string{`{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"rafthttp/stream.go:421","msg":"lost TCP streaming connection with remote peer"}`},
			func(b *trialB) { b.inject(10, "n2", catalog.KindCrash, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log at rafthttp/stream.go: lost TCP streaming connection with remote peer"}},
		{"error field of a killed peer", []string{`{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"etcdserver/cluster_util.go:160","msg":"failed to get version","error":"Get \"http://127.0.0.1:42025/version\": dial tcp 127.0.0.1:42025: connect: connection refused"}`},
			func(b *trialB) { b.node("n2", func(n *record.Node) { n.Killed = true }) }, false, nil,
			verdictWant{symptom: "informational: new warn log at etcdserver/cluster_util.go: failed to get version"}},
		{"same line without a kill is new", []string{`{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"rafthttp/stream.go:421","msg":"lost TCP streaming connection with remote peer"}`},
			nil, false, nil, verdictWant{failed: true, symptom: "new warn log at rafthttp/stream.go: lost TCP streaming connection with remote peer"}},
		{"health probe failing under a delay", []string{`{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"etcdhttp/health.go:120","msg":"/health error","output":"{\"health\":\"false\",\"reason\":\"RANGE ERROR:context canceled\"}","status-code":503}`,
			`{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"etcdserver/server.go:1243","msg":"Failed to check current member's leadership","error":"etcdserver: leader changed"}`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = 3 * time.Second })
			}, false, nil, verdictWant{symptom: "informational: new warn log at etcdhttp/health.go: <path> error", ev: "leader changed"}},
		{"peer of a connection broken by an injected network error", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to pipeline appendEntries: peer="{Voter n2 127.0.0.1:24015}" error="write tcp 127.0.0.1:59588->127.0.0.1:24015: use of closed network connection"`},
			func(b *trialB) {
				b.inject(10, "n2", catalog.KindError, func(in *record.Injection) { in.Error = "syscall.EPIPE" })
			}, false, nil, verdictWant{symptom: "informational: new error log: [ERROR] raft: failed to pipeline appendEntries: peer=<q> error=<q>", ev: "connection-words"}},
		{"peer of a connection whose write timed out (an injected deadline)", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to pipeline appendEntries: peer="{Voter n2 127.0.0.1:27493}" error="write tcp 127.0.0.1:60240->127.0.0.1:27493: use of closed network connection"`},
			func(b *trialB) {
				b.inject(10, "n2", catalog.KindError, func(in *record.Injection) { in.Error = "deadline" })
			}, false, nil, verdictWant{symptom: "informational: new error log: [ERROR] raft: failed to pipeline appendEntries: peer=<q> error=<q>", ev: "connection-words"}},
		{"a restarted follower skipping a commit index older than its snapshot", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: skipping application of old log: index=389`},
			func(b *trialB) { b.inject(10, "n2", catalog.KindCrash, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: skipping application of old log: index=<n>", ev: "connection-words"}},
		{"the same skip without a fault is new", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: skipping application of old log: index=389`},
			nil, false, nil, verdictWant{failed: true, symptom: "new warn log: [WARN] raft: skipping application of old log: index=<n>"}},
		{"leader catching up a member that a delay left behind", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to get log: index=55 error="log not found"`,
			`2026-11-21T05:00:01.000Z [ERROR] raft: failed to flush response: error="write tcp 127.0.0.1:29018->127.0.0.1:48622: write: broken pipe"`},
			func(b *trialB) {
				b.inject(10, "n2", catalog.KindDelay, func(in *record.Injection) { in.Delay = 3 * time.Second })
			}, false, nil, verdictWant{symptom: "informational: new error log: [ERROR] raft: failed to flush response: error=<q>", ev: "connection-words"}},
		{"a killed leader back as a follower drops its uncommitted entries", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: clearing log suffix: from=11 to=11`},
			func(b *trialB) { b.inject(10, "n1", catalog.KindCrash, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: clearing log suffix: from=<n> to=<n>", ev: "connection-words"}},
		{"a leader back after a power loss refusing the new leader's append until their logs agree", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: previous log term mis-match: ours=2 remote=3`},
			func(b *trialB) { b.inject(10, "n1", catalog.KindPowerLossAfter, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: previous log term mis-match: ours=<n> remote=<n>", ev: "connection-words"}},
		{"the same refusal without a fault is new", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: previous log term mis-match: ours=2 remote=3`},
			nil, false, nil, verdictWant{failed: true, symptom: "new warn log: [WARN] raft: previous log term mis-match: ours=<n> remote=<n>"}},
		{"a member shut down for a restart, its transport closed under a read", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to decode incoming command: error="transport shutdown"`},
			func(b *trialB) { b.inject(10, "n1", catalog.KindReboot, nil) }, false, nil,
			verdictWant{symptom: "informational: new error log: [ERROR] raft: failed to decode incoming command: error=<q>", ev: "connection-words"}},
		{"the same line without a fault is new", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to decode incoming command: error="transport shutdown"`},
			nil, false, nil, verdictWant{failed: true, symptom: "new error log: [ERROR] raft: failed to decode incoming command: error=<q>"}},
		{"a member back after a power loss granting a candidate's retried vote request", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: duplicate requestVote from: candidate=127.0.0.1:19595`},
			func(b *trialB) { b.inject(10, "n1", catalog.KindPowerLossAfter, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: duplicate requestVote from: candidate=<addr>", ev: "connection-words"}},
		{"the same grant without a fault is new", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: duplicate requestVote from: candidate=127.0.0.1:19595`},
			nil, false, nil, verdictWant{failed: true, symptom: "new warn log: [WARN] raft: duplicate requestVote from: candidate=<addr>"}},
		{"a leader failing to reach a killed follower", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: failed to contact: server-id=n2 time=1.2s`},
			func(b *trialB) { b.inject(10, "n2", catalog.KindCrash, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: failed to contact: server-id=n<n> time=<n>", ev: "connection-words"}},
		{"echo of a dependency's sentinel", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to append to logs: error="tx closed"`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "ErrTxClosed" })
			}, false, nil, verdictWant{symptom: "informational: new error log: [ERROR] raft: failed to append to logs: error=<q>", ev: "echo-error (echoes the injected error \"tx closed\""}},
		{"the same lines without a fault are new", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to get log: index=55 error="log not found"`},
			nil, false, nil, verdictWant{failed: true, symptom: "new error log: [ERROR] raft: failed to get log: index=<n> error=<q>"}},
		{"slow machine", []string{`{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"etcdserver/util.go:166","msg":"apply request took too long","took":"250ms"}`},
			nil, false, nil, verdictWant{symptom: "informational: new warn log at etcdserver/util.go: apply request took too long"}},
		{"start-up and shutdown are not judged", []string{
			`{"level":"warn","ts":"2026-11-21T04:59:59.5Z","caller":"rafthttp/peer.go:1","msg":"peer not up yet"}`,
			`{"level":"warn","ts":"2026-11-21T05:00:06.5Z","caller":"embed/etcd.go:1","msg":"skipped leadership transfer"}`,
			`{"level":"warn","ts":1795237203.5,"caller":"x/y.go:1","msg":"during the workload"}`,
		}, nil, false, nil, verdictWant{failed: true, symptom: "new warn log at x/y.go: during the workload"}},
		{"after an early injection is judged", []string{
			`{"level":"warn","ts":"2026-11-21T04:59:59.5Z","caller":"rafthttp/peer.go:1","msg":"peer not up yet"}`,
		}, func(b *trialB) { b.inject(-1000, "n1", catalog.KindError, nil) }, false, nil,
			verdictWant{failed: true, symptom: "new warn log at rafthttp/peer.go: peer not up yet"}},
		{"latency report", []string{`{"ts":"2026-11-21T05:00:01Z","level":"warn","caller":"v3rpc/interceptor.go:197","msg":"request stats","start time":"2026-11-21T05:20:56.404403Z","time spent":"1.078742738s","remote":"127.0.0.1:57374"}`},
			nil, false, nil, verdictWant{symptom: "informational: new warn log at v3rpc/interceptor.go: request stats"}},
		{"real error beside an echo", []string{`{"ts":"2026-11-21T05:00:01Z","level":"error","caller":"wal/wal.go:800","msg":"failed to write","error":"EIO"}`, newErr},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "syscall.EIO" })
			}, false, nil,
			verdictWant{failed: true, symptom: "new error log at mvcc/kvstore.go: failed to restore index from <n> keys", ev: "informational"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := newTrial("n1")
			base.log("n1", baseLines...)
			var bl record.LogBaseline
			if err := Learn(&bl, &base.tr, base.logs, LogAuto); err != nil {
				t.Fatal(err)
			}
			if bl.Trials != 1 || len(bl.Templates) != 1 {
				t.Fatalf("baseline %+v", bl)
			}
			b := healthy()
			b.log("n1", tc.lines...)
			if tc.mod != nil {
				tc.mod(b)
			}
			in := b.input(Input{Baseline: &bl, LogIgnore: tc.ignore})
			if tc.noBase {
				in.Baseline = nil
			}
			checkVerdict(t, runOne(t, NameLog, in), tc.want)
		})
	}
}

// TestLogNetSite: any error injected at a network site (Input.NetSites)
// breaks its connection, an EOF on a route's read as much as an EPIPE; the
// same EOF at a site not known as network is judged on its words alone.
func TestLogNetSite(t *testing.T) {
	const site = "server.(*client).readLoop:(io.Reader).Read#0"
	line := `[30702] 2026/11/21 05:00:01.000000 [WRN] Healthcheck failed: "JetStream is not current with the meta leader"`
	for _, tc := range []struct {
		name string
		net  map[string]bool
		want verdictWant
	}{
		{"a network site", map[string]bool{site: true},
			verdictWant{symptom: "informational: new warn log: <addr> [WRN] Healthcheck failed: <q>", ev: "connection-words (error EOF into n3 at +10ms, on peer n1, by time)"}},
		{"no network sites known", nil, verdictWant{failed: true, symptom: "new warn log: <addr> [WRN] Healthcheck failed: <q>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := newTrial("n1")
			base.log("n1", `[1] 2026/11/21 04:59:59.000000 [INF] Server is ready`)
			var bl record.LogBaseline
			if err := Learn(&bl, &base.tr, base.logs, LogAuto); err != nil {
				t.Fatal(err)
			}
			b := healthy()
			b.log("n1", line)
			b.inject(10, "n3", catalog.KindError, func(in *record.Injection) { in.Error = "EOF"; in.SiteID = site })
			checkVerdict(t, runOne(t, NameLog, b.input(Input{Baseline: &bl, NetSites: tc.net})), tc.want)
		})
	}
}

func TestErrorTexts(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"EIO", []string{"input/output error", "EIO"}},
		{"syscall.ECONNRESET", []string{"connection reset by peer", "ECONNRESET"}},
		{"io.ErrUnexpectedEOF", []string{"unexpected EOF", "ErrUnexpectedEOF"}},
		{"EOF", []string{"EOF", "EOF"}},
		{"ErrFoo", []string{"ErrFoo"}},
		{"ErrTxClosed", []string{"tx closed", "ErrTxClosed"}},
		{"bolt.ErrDatabaseNotOpen", []string{"database not open", "ErrDatabaseNotOpen"}},
		{"ErrDBNotOpen", []string{"db not open", "ErrDBNotOpen"}},
		{"EIO#2", []string{"input/output error", "EIO"}},
		// etcd NewServer's fileutil.TouchDirAll: "mkdir : input/output error".
		{"EIO(mkdir)", []string{"input/output error", "EIO"}},
		{"syscall.ENOSPC(write)", []string{"no space left on device", "ENOSPC"}},
		{`"running with systemd/journal but other '…"`, []string{"running with systemd/journal but other '"}},
		{`"expected IP in URL for binding (%s)"`, []string{"expected IP in URL for binding ("}},
		{`"%w: x"`, nil},
		{"", nil},
	}
	for _, tc := range tests {
		got := errorTexts(tc.in)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("errorTexts(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// stamp gives a log line the time ms after t0: a "ts" field for a JSON
// line, a leading RFC 3339 time (hclog's) for a plain one.
func stamp(ms int, line string) string {
	ts := at(ms).UTC().Format("2006-01-02T15:04:05.000Z")
	if rest, ok := strings.CutPrefix(line, "{"); ok {
		return `{"ts":"` + ts + `",` + rest
	}
	return ts + " " + line
}

// TestLogScope: each rule dismisses a line only on the member the fault
// hit (the connection and partition words: on its peers too) and only in
// the fault's window — from its start to its end plus the recovery bound —
// and the verdict names the rule of every dismissed line. The planted
// cases are bugs the old trial-wide rules hid.
func TestLogScope(t *testing.T) {
	const (
		lost    = `[ERROR] raft: connection to the leader closed: replication stream lost`
		waiting = `[WARN]  raft: retrying the apply, still waiting for the leader`
		eio     = `[ERROR] store: failed to compact: input/output error`
		noSpace = `[ERR] JetStream out of resources, will be DISABLED`
	)
	// n2 is killed at 10 ms and back at 1010 ms; with a 1 s bound its
	// window ends at 2010 ms.
	crashN2 := func(b *trialB) {
		b.inject(10, "n2", catalog.KindCrash, nil)
		b.node("n2", func(n *record.Node) { n.Killed, n.Restarts, n.Restarted = true, 1, []time.Time{at(1010)} })
	}
	delayN1 := func(b *trialB) {
		b.inject(10, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = time.Second })
	}
	errN1 := func(name string) func(*trialB) {
		return func(b *trialB) {
			b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = name })
		}
	}
	// errN1At injects EIO on n1 at d after the trial's start, finer than
	// a millisecond.
	errN1At := func(d time.Duration) func(*trialB) {
		return func(b *trialB) {
			b.inject(0, "n1", catalog.KindError, func(in *record.Injection) { in.Error, in.Time = "EIO", in.Time.Add(d) })
		}
	}
	corruptN1 := func(b *trialB) { b.inject(10, "n1", catalog.KindCorrupt, nil) }
	tornN2 := func(b *trialB) {
		b.inject(10, "n2", catalog.KindTorn, nil)
		b.node("n2", func(n *record.Node) { n.Killed, n.Restarts, n.Restarted = true, 1, []time.Time{at(1010)} })
	}
	noSub := `[WRN] RAFT [BXScrY9i - S-R3F-mEptDXar] Error subscribing to forwarded proposals: system account not setup`
	rebootN2 := func(b *trialB) {
		b.inject(10, "n2", catalog.KindReboot, nil)
		b.node("n2", func(n *record.Node) { n.Restarts, n.Restarted = 1, []time.Time{at(1010)} })
	}
	tests := []struct {
		name string
		logs map[string][]string
		mod  func(*trialB)
		// rule is the rule expected to dismiss the one line, "" when it
		// must be reported.
		rule, node, why string
	}{
		{"a connection word on an unhit node long after a kill is reported (planted)",
			map[string][]string{"n1": {stamp(4000, lost)}}, crashN2, "", "n1", ""},
		{"the same line on the killed node in its window",
			map[string][]string{"n2": {stamp(1500, lost)}}, crashN2, RuleConnectionWords, "n2", "crash of n2 at +10ms, on n2"},
		{"the same line on a peer in the window, by time",
			map[string][]string{"n1": {stamp(1500, lost)}}, crashN2, RuleConnectionWords, "n1", "on peer n1, by time"},
		{"a peer's line naming the killed member",
			map[string][]string{"n3": {stamp(1500, `[WARN]  raft: failed to contact: server-id=n2 time=1.2s`)}}, crashN2, RuleConnectionWords, "n3", "on peer n3, naming n2"},
		{"the same line on the killed node after its window is reported",
			map[string][]string{"n2": {stamp(2500, lost)}}, crashN2, "", "n2", ""},
		{"a node that never came back: its peers' lines to the trial's end",
			map[string][]string{"n1": {stamp(4000, lost)}},
			func(b *trialB) {
				b.inject(10, "n2", catalog.KindCrash, nil)
				b.node("n2", func(n *record.Node) { n.Killed, n.RestartErr = true, "exited" })
			}, RuleConnectionWords, "n1", "on peer n1, by time"},
		{"a delay's words on the delayed node in its window",
			map[string][]string{"n1": {stamp(1500, waiting)}}, delayN1, RuleDelayWords, "n1", "delay of n1 at +10ms, on n1"},
		{"a delay's words outside its window are reported",
			map[string][]string{"n1": {stamp(4000, waiting)}}, delayN1, "", "n1", ""},
		{"a delay's words on a member it did not hit are reported",
			map[string][]string{"n2": {stamp(1500, `[WARN]  raft: retrying the apply`)}}, delayN1, "", "n2", ""},
		{"a millisecond stamp in the fault's own millisecond: the error echoed right after it (raft's log at .714, the fault at .714543932)",
			map[string][]string{"n1": {stamp(10, eio)}}, errN1At(10*time.Millisecond + 543932), RuleEchoError, "n1", `"input/output error"`},
		{"a millisecond stamp before the fault's millisecond is reported (planted)",
			map[string][]string{"n1": {stamp(9, eio)}}, errN1At(10*time.Millisecond + 543932), "", "n1", ""},
		{"the injected error echoed by the node it hit",
			map[string][]string{"n1": {stamp(500, eio)}}, errN1("EIO"), RuleEchoError, "n1", `"input/output error"`},
		{"the injected disk error's text on a peer in its window: a reply passed it on (NATS's stream leader to its followers)",
			map[string][]string{"n2": {stamp(500, `[WRN] JetStream cluster catchup for stream 'S1' failed: input/output error`)}}, errN1("EIO"), RuleEchoError, "n2", `on peer n2 (it can only have the text from n1)`},
		{"the injected error's bare name on a peer is reported (only the system's text travels in a reply)",
			map[string][]string{"n2": {stamp(500, `[WARN] store: EIO retry budget used`)}}, errN1("EIO"), "", "n2", ""},
		{"the injected error's text on a peer long after it is reported (planted)",
			map[string][]string{"n2": {stamp(4000, eio)}}, errN1("EIO"), "", "n2", ""},
		{"the injected error's text long after it is reported",
			map[string][]string{"n1": {stamp(4000, eio)}}, errN1("EIO"), "", "n1", ""},
		{"an exhausted resource on the node, to the trial's end",
			map[string][]string{"n1": {stamp(5000, noSpace)}}, errN1("ENOSPC"), RuleResourceExhausted, "n1", "ENOSPC ran a resource out"},
		{"a full disk's server hands its leadership over (nats-server, session-19 hunt trial 1-44)",
			map[string][]string{"n1": {stamp(600, `[WRN] JetStream initiating meta leader transfer`)}}, errN1("ENOSPC"), RuleResourceExhausted, "n1", "ENOSPC ran a resource out"},
		{"a leadership transfer on another member after an ENOSPC is reported (planted)",
			map[string][]string{"n2": {stamp(600, `[WRN] JetStream initiating meta leader transfer`)}}, errN1("ENOSPC"), "", "n2", ""},
		{"a leadership transfer after an EIO is reported (planted)",
			map[string][]string{"n1": {stamp(4000, `[WRN] JetStream initiating meta leader transfer`)}}, errN1("EIO"), "", "n1", ""},
		{"an exhausted resource on another member is reported",
			map[string][]string{"n2": {stamp(500, noSpace)}}, errN1("ENOSPC"), "", "n2", ""},
		{"a line without a time is placed by the line before it",
			map[string][]string{"n2": {stamp(1500, `[INF] restarted`), `[ERROR] connection to the leader closed`}}, crashN2, RuleConnectionWords, "n2", "on n2"},
		{"a line that cannot be placed lies in no window",
			map[string][]string{"n2": {`[ERROR] connection to the leader closed`}}, crashN2, "", "n2", ""},
		{"a partition's election words on a peer",
			map[string][]string{"n3": {stamp(1500, `[WARN]  raft: lost quorum, stepping down`)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindPartition, func(in *record.Injection) { in.Delay = time.Second })
			}, RuleConnectionWords, "n3", "partition of n1"},
		{"a partition's vote on a peer in its window",
			map[string][]string{"n3": {stamp(1500, `[WARN]  raft: vote granted in term 7`)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindPartition, func(in *record.Injection) { in.Delay = time.Second })
			}, RulePartitionWords, "n3", "partition of n1 at +10ms, on peer n3, by time"},
		{"an election after an error injected into the leader, on a peer",
			map[string][]string{"n2": {stamp(500, `[WARN]  raft: vote granted in term 7`)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO"; in.Role = "Leader" })
			}, RuleLeaderError, "n2", "a new election"},
		{"an election long after the leader's error is reported",
			map[string][]string{"n2": {stamp(4000, `[WARN]  raft: vote granted in term 7`)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO"; in.Role = "Leader" })
			}, "", "n2", ""},
		{"a line at the fault site on the hit node",
			map[string][]string{"n1": {stamp(500, `{"level":"error","caller":"wal/wal.go:80","msg":"apply failed"}`)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) {
					in.Error = "EIO"
					in.Stack = []record.Frame{{Func: "x", File: "/w/server/wal/wal.go"}}
				})
			}, RuleFaultSite, "n1", "wal/wal.go"},
		{"the same caller on another member is reported",
			map[string][]string{"n2": {stamp(500, `{"level":"error","caller":"wal/wal.go:80","msg":"apply failed"}`)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) {
					in.Error = "EIO"
					in.Stack = []record.Frame{{Func: "x", File: "/w/server/wal/wal.go"}}
				})
			}, "", "n2", ""},
		{"a disconnect hits both members it cut apart",
			map[string][]string{"n3": {stamp(500, waiting)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindDisconnect, func(in *record.Injection) { in.Delay = time.Second; in.Peer = "n3" })
			}, RuleDelayWords, "n3", "disconnect of n1 at +10ms from n3, on n3"},
		{"a split hits the other side too",
			map[string][]string{"n3": {stamp(500, waiting)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindSplit, func(in *record.Injection) { in.Delay = time.Second; in.Peer = "n2" })
			}, RuleDelayWords, "n3", "split of n1 from n2,n3 at +10ms, on n3"},
		{"a one-way cut hits the member it could not reach",
			map[string][]string{"n3": {stamp(500, waiting)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindOneWay, func(in *record.Injection) { in.Delay = time.Second; in.Peer = "n3" })
			}, RuleDelayWords, "n3", "oneway of n1 at +10ms to n3, one way (n1 could not reach n3; n3 still reached n1), on n3"},
		{"an election after the partition's window is reported",
			map[string][]string{"n3": {stamp(4000, `[WARN]  raft: vote granted in term 7`)}},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindPartition, func(in *record.Injection) { in.Delay = time.Second })
			}, "", "n3", ""},
		{"a torn write kills like a crash: the lost peer on a member in the window",
			map[string][]string{"n1": {stamp(1500, lost)}}, tornN2, RuleConnectionWords, "n1", "torn of n2 at +10ms, on peer n1, by time"},
		{"a checksum error on the torn member after its restart: it found the torn record",
			map[string][]string{"n2": {stamp(1500, `[ERROR] store: block checksum mismatch`)}}, tornN2, RuleCorruptionWords, "n2", "torn of n2 at +10ms, on n2"},
		{"a checksum error on another member after a torn write is reported (planted)",
			map[string][]string{"n3": {stamp(1500, `[ERROR] store: block checksum mismatch`)}}, tornN2, "", "n3", ""},
		{"a checksum error on the member whose read was corrupted, in the window",
			map[string][]string{"n1": {stamp(500, `[ERROR] store: block checksum mismatch`)}}, corruptN1, RuleCorruptionWords, "n1", "corrupt of n1 at +10ms, on n1"},
		{"a checksum error on another member is reported (planted)",
			map[string][]string{"n2": {stamp(500, `[ERROR] store: block checksum mismatch`)}}, corruptN1, "", "n2", ""},
		{"a checksum error after a delay, not a corruption, is reported (planted)",
			map[string][]string{"n1": {stamp(500, `[ERROR] store: block checksum mismatch`)}}, delayN1, "", "n1", ""},
		{"a checksum error on the corrupted member after the window is reported",
			map[string][]string{"n1": {stamp(4000, `[ERROR] store: block checksum mismatch`)}}, corruptN1, "", "n1", ""},
		{"a disk error in the target's own words on the node it hit (nats-server, trial 1-290)",
			map[string][]string{"n1": {stamp(500, `[ERR] Error creating filestore WAL: storage directory not readable`)}}, errN1("EIO"), RuleStorageWords, "n1", "error EIO into n1"},
		{"a failed write's inconsistency on the node it hit (trial 1-297)",
			map[string][]string{"n1": {stamp(500, `[WRN] Filestore [C-R3F-X37BOGPx] Stream state encountered internal inconsistency on write`)}}, errN1("ENOSPC"), RuleStorageWords, "n1", "error ENOSPC into n1"},
		{"the same words on a peer are reported (planted)",
			map[string][]string{"n2": {stamp(500, `[ERR] Error creating filestore WAL: storage directory not readable`)}}, errN1("EIO"), "", "n2", ""},
		{"the same words after the fault's window are reported (planted)",
			map[string][]string{"n1": {stamp(4000, `[ERR] Error creating filestore WAL: storage directory not readable`)}}, errN1("EIO"), "", "n1", ""},
		{"the same words after a network error are reported (planted)",
			map[string][]string{"n1": {stamp(500, `[ERR] Error creating filestore WAL: storage directory not readable`)}}, errN1("ECONNRESET"), "", "n1", ""},
		{"a rebooted member's own clean shutdown (nats-server, session-19 hunt trial 1-66)",
			map[string][]string{"n2": {stamp(500, noSub)}}, rebootN2, RuleOwnShutdown, "n2", "logged while n2 shut down cleanly: reboot of n2 at +10ms, restarted 1s later"},
		{"the same line on a peer during the reboot is reported (planted)",
			map[string][]string{"n1": {stamp(500, noSub)}}, rebootN2, "", "n1", ""},
		{"the same line from the rebooted member's new process is reported (planted)",
			map[string][]string{"n2": {stamp(1500, noSub)}}, rebootN2, "", "n2", ""},
		{"the same line after a crash, which runs no shutdown, is reported (planted)",
			map[string][]string{"n2": {stamp(500, noSub)}}, crashN2, "", "n2", ""},
		{"a loop that took long, anywhere (nats-server's read loop after a 2 s pause, session-19 hunt trials 2-69, 2-119)",
			map[string][]string{"n2": {stamp(5000, `[WRN] 127.0.0.1:13961 - rid:63 - Readloop processing time: 2.000781471s`)}}, nil, RuleMachine, "n2", "slow or overloaded"},
		{"a slow machine anywhere, any time",
			map[string][]string{"n3": {stamp(5000, `[WARN]  raft: disk write took too long`)}}, nil, RuleMachine, "n3", "slow or overloaded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bl := heartbeatBaseline(t)
			b := healthy()
			for _, n := range b.tr.Nodes {
				b.log(n.Name, tc.logs[n.Name]...)
			}
			if tc.mod != nil {
				tc.mod(b)
			}
			v := runOne(t, NameLog, b.input(Input{Baseline: bl, RecoveryBound: time.Second}))
			evidence := strings.Join(v.Evidence, "\n")
			if tc.rule == "" {
				if !v.Failed || !reflect.DeepEqual(v.Nodes, []string{tc.node}) || len(v.Dismissed) != 0 {
					t.Fatalf("failed=%v nodes=%v dismissed=%+v, want the line reported on %s\n%s", v.Failed, v.Nodes, v.Dismissed, tc.node, evidence)
				}
				return
			}
			if v.Failed || len(v.Dismissed) != 1 {
				t.Fatalf("failed=%v dismissed=%+v, want one line dismissed by %s\n%s", v.Failed, v.Dismissed, tc.rule, evidence)
			}
			d := v.Dismissed[0]
			if d.Rule != tc.rule || d.Node != tc.node || d.Count != 1 || d.Example == "" || d.Template == "" || !strings.Contains(d.Why, tc.why) {
				t.Errorf("dismissed %+v, want rule %s on %s why ~%q", d, tc.rule, tc.node, tc.why)
			}
		})
	}
}

// TestLogDismissedCounts: dismissals are grouped by rule, node and
// template, with their count and first line; a template dismissed on one
// node and reported on another is reported.
func TestLogDismissedCounts(t *testing.T) {
	base := newTrial("n1")
	base.log("n1", stamp(0, `[INF] up`))
	var bl record.LogBaseline
	if err := Learn(&bl, &base.tr, base.logs, LogAuto); err != nil {
		t.Fatal(err)
	}
	b := healthy()
	b.inject(10, "n2", catalog.KindCrash, nil)
	b.node("n2", func(n *record.Node) { n.Killed, n.Restarts, n.Restarted = true, 1, []time.Time{at(1010)} })
	b.log("n1", stamp(1200, `[ERROR] peer 1 connection closed`), stamp(1300, `[ERROR] peer 2 connection closed`))
	b.log("n2", stamp(1200, `[ERROR] peer 3 connection closed`))
	b.log("n3", stamp(5000, `[ERROR] peer 4 connection closed`))
	v := runOne(t, NameLog, b.input(Input{Baseline: &bl, RecoveryBound: time.Second}))
	if !v.Failed || !reflect.DeepEqual(v.Nodes, []string{"n3"}) {
		t.Fatalf("failed=%v nodes=%v, want the line on n3 reported", v.Failed, v.Nodes)
	}
	want := []record.Dismissal{
		{Rule: RuleConnectionWords, Node: "n1", Template: "error  [ERROR] peer <n> connection closed", Count: 2,
			Example: stamp(1200, `[ERROR] peer 1 connection closed`), Why: "crash of n2 at +10ms, on peer n1, by time"},
		{Rule: RuleConnectionWords, Node: "n2", Template: "error  [ERROR] peer <n> connection closed", Count: 1,
			Example: stamp(1200, `[ERROR] peer 3 connection closed`), Why: "crash of n2 at +10ms, on n2"},
	}
	if !reflect.DeepEqual(v.Dismissed, want) {
		t.Errorf("dismissed\n%+v\nwant\n%+v", v.Dismissed, want)
	}
}

// TestLogLasting: a reported template whose lines go on after every
// fault's window closed is Lasting (the generic-consequence rule never
// takes it for a passing reaction to a fault); one logged only inside a
// window, or in a trial whose window never closes, is not.
func TestLogLasting(t *testing.T) {
	const leak = `[ERROR] apply: request table holds 3 entries beyond the applied index`
	// n2 is killed at 10 ms and back at 1010 ms; with a 1 s bound every
	// window has closed at 2010 ms.
	crashN2 := func(b *trialB) {
		b.inject(10, "n2", catalog.KindCrash, nil)
		b.node("n2", func(n *record.Node) { n.Killed, n.Restarts, n.Restarted = true, 1, []time.Time{at(1010)} })
	}
	tests := []struct {
		name    string
		lines   []string
		mod     func(*trialB)
		lasting bool
	}{
		{"reported again after every window closed", []string{stamp(1500, leak), stamp(2500, leak), stamp(3500, leak)}, crashN2, true},
		{"first logged after every window closed", []string{stamp(4000, leak)}, crashN2, true},
		{"reported only inside the window", []string{stamp(1500, leak)}, crashN2, false},
		{"a window that never closes", []string{stamp(4000, leak)}, func(b *trialB) {
			b.inject(10, "n2", catalog.KindCrash, nil)
			b.node("n2", func(n *record.Node) { n.Killed, n.RestartErr = true, "exited" })
		}, false},
		{"no fault", []string{stamp(4000, leak)}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bl := heartbeatBaseline(t)
			b := healthy()
			b.log("n1", tc.lines...) // n1, the leader
			if tc.mod != nil {
				tc.mod(b)
			}
			v := runOne(t, NameLog, b.input(Input{Baseline: bl, RecoveryBound: time.Second}))
			if !v.Failed {
				t.Fatalf("not reported: %v", v.Evidence)
			}
			if got := len(v.Lasting) == 1 && v.Lasting[0] == v.Symptom; got != tc.lasting {
				t.Errorf("lasting %q (symptom %q), want lasting %v\n%s", v.Lasting, v.Symptom, tc.lasting, strings.Join(v.Evidence, "\n"))
			}
		})
	}
}

// TestLogBeforeFaults: a reported template whose every line came before
// the trial's first fault is BeforeFaults (no fault caused it) and still
// reported; one with a line after the fault, or in a trial without
// faults, is not.
func TestLogBeforeFaults(t *testing.T) {
	const mismatch = `[WARN] apply: last sequence mismatch`
	crashN2At := func(ms int) func(*trialB) {
		return func(b *trialB) {
			b.inject(ms, "n2", catalog.KindCrash, nil)
			b.node("n2", func(n *record.Node) { n.Killed, n.Restarts, n.Restarted = true, 1, []time.Time{at(ms + 1000)} })
		}
	}
	tests := []struct {
		name   string
		lines  []string
		mod    func(*trialB)
		before bool
	}{
		{"every line before the fault", []string{stamp(100, mismatch), stamp(300, mismatch)}, crashN2At(2000), true},
		{"one line after it", []string{stamp(100, mismatch), stamp(2500, mismatch)}, crashN2At(2000), false},
		{"only after it", []string{stamp(2500, mismatch)}, crashN2At(2000), false},
		{"no fault", []string{stamp(100, mismatch)}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := healthy()
			b.log("n1", tc.lines...)
			if tc.mod != nil {
				tc.mod(b)
			}
			v := runOne(t, NameLog, b.input(Input{Baseline: heartbeatBaseline(t), RecoveryBound: time.Second}))
			if !v.Failed {
				t.Fatalf("not reported: %v", v.Evidence)
			}
			if got := len(v.BeforeFaults) == 1 && v.BeforeFaults[0] == v.Symptom; got != tc.before {
				t.Errorf("before faults %q (symptom %q), want %v\n%s", v.BeforeFaults, v.Symptom, tc.before, strings.Join(v.Evidence, "\n"))
			}
			if said := strings.Contains(strings.Join(v.Evidence, "\n"), "every line before the first fault"); said != tc.before {
				t.Errorf("evidence says it: %v, want %v\n%s", said, tc.before, strings.Join(v.Evidence, "\n"))
			}
		})
	}
}

// heartbeatBaseline is a baseline of one fault-free trial whose only
// warning is a heartbeat timeout, for the scoping tests.
func heartbeatBaseline(t *testing.T) *record.LogBaseline {
	t.Helper()
	base := newTrial("n1")
	base.log("n1", stamp(0, `[WARN]  raft: heartbeat timeout reached`))
	var bl record.LogBaseline
	if err := Learn(&bl, &base.tr, base.logs, LogAuto); err != nil {
		t.Fatal(err)
	}
	return &bl
}

// TestLogDowngraded: a line the target's program logged at info with a
// log_downgraded mark is listed (rule downgraded) and never reported; a
// marked line at error is still judged as any error; an info line without
// the mark, or marked outside the judged window, is not listed; a line with
// the mark does not make the verdict informational by itself.
func TestLogDowngraded(t *testing.T) {
	base := newTrial("n1")
	base.log("n1", stamp(0, `[INFO] up`))
	var bl record.LogBaseline
	if err := Learn(&bl, &base.tr, base.logs, LogAuto); err != nil {
		t.Fatal(err)
	}
	mark := `\(the consequence of an admin \w+, logged at info by the node program\)`
	marked := stamp(1200, `[INFO]  raft: failed to take snapshot (the consequence of an admin transfer, logged at info by the node program): error="leadership transfer in progress"`)
	tests := []struct {
		name      string
		log       []string
		marks     []string
		failed    bool
		dismissed []record.Dismissal
	}{
		{"listed", []string{marked, stamp(1300, `[INFO]  raft: failed to take snapshot (the consequence of an admin transfer, logged at info by the node program): error="leadership transfer in progress"`)}, []string{mark}, false,
			[]record.Dismissal{{Rule: RuleDowngraded, Node: "n1", Template: mustTemplate(t, marked), Count: 2, Example: marked,
				Why: `its program's mark "(the consequence of an admin transfer, logged at info by the node program)"`}}},
		{"no pattern", []string{marked}, nil, false, nil},
		{"info without the mark", []string{stamp(1200, `[INFO]  raft: failed to take snapshot: error="leadership transfer in progress"`)}, []string{mark}, false, nil},
		{"error with the mark is judged", []string{stamp(1200, `[ERROR] raft: failed to take snapshot (the consequence of an admin transfer, logged at info by the node program)`)}, []string{mark}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := healthy()
			b.log("n1", tc.log...)
			v := runOne(t, NameLog, b.input(Input{Baseline: &bl, RecoveryBound: time.Second, LogDowngraded: tc.marks}))
			if v.Failed != tc.failed {
				t.Errorf("failed = %v, want %v (%s)", v.Failed, tc.failed, v.Symptom)
			}
			if !tc.failed && v.Symptom != "" {
				t.Errorf("symptom %q, want none", v.Symptom)
			}
			if !reflect.DeepEqual(v.Dismissed, tc.dismissed) {
				t.Errorf("dismissed\n%+v\nwant\n%+v", v.Dismissed, tc.dismissed)
			}
		})
	}
	v := runOne(t, NameLog, &Input{Trial: &healthy().tr, Baseline: &bl, LogDowngraded: []string{"("}})
	if !v.Unknown {
		t.Errorf("a bad pattern: verdict %+v, want unknown", v)
	}
}

func mustTemplate(t *testing.T, raw string) string {
	t.Helper()
	l, ok := ParseLogLine(raw)
	if !ok {
		t.Fatalf("ParseLogLine(%q): not a log line", raw)
	}
	return l.Template
}

// TestParseLogLineTimes: the time of each ecosystem's line, so the rules'
// windows can place it.
func TestParseLogLineTimes(t *testing.T) {
	year := time.Now().Year()
	for raw, want := range map[string]time.Time{
		`I1206 05:12:00.123456   12345 volume_server.go:88] started`:               time.Date(year, 12, 6, 5, 12, 0, 123456000, time.Local),
		`I1206 10:32:34.979026 raft_server.go:253 current cluster leader: `:        time.Date(year, 12, 6, 10, 32, 34, 979026000, time.Local),
		"2026-12-06T05:12:00.123Z\tWARN\tetcdserver/server.go:88\tslow fdatasync":  time.Date(2026, 12, 6, 5, 12, 0, 123000000, time.UTC),
		`{"time":"2026-12-06T05:12:00.123Z","level":"ERROR","msg":"flush failed"}`: time.Date(2026, 12, 6, 5, 12, 0, 123000000, time.UTC),
		`{"level":"warning","msg":"retrying","time":"2026-12-06T05:12:00Z"}`:       time.Date(2026, 12, 6, 5, 12, 0, 0, time.UTC),
		`time=2026-12-06T05:12:00.500Z level=WARN msg="lagging follower"`:          time.Date(2026, 12, 6, 5, 12, 0, 500000000, time.UTC),
	} {
		l, ok := ParseLogLine(raw)
		if !ok || !l.Time.Equal(want) {
			t.Errorf("ParseLogLine(%q).Time = %v (ok %v), want %v", raw, l.Time, ok, want)
		}
	}
}

// natsLine is a nats-server log line at ms after the trial's start.
func natsLine(ms int, level, msg string) string {
	return "[100] " + at(ms).UTC().Format("2006/01/02 15:04:05.000000") + " [" + level + "] " + msg
}

// TestLogEchoAftermath: after a line echoing the injected error names an
// object (nats-server's quoted '$G > S2'), the lines naming that object,
// or one inside it, in the fault's window are its aftermath, on the echo's
// node and on its peers (the real lines of the session-19 NATS hunt,
// trials 1-45, 1-57, 1-166); another object, a look-alike name, a line
// after the window, or no echo at all are reported (planted).
func TestLogEchoAftermath(t *testing.T) {
	echoS2 := natsLine(500, "WRN", `Stream create failed for '$G > S2': Error creating msg block file: open /d/n1/jetstream/$G/streams/S2/msgs/1.blk: input/output error (10077)`)
	echoC := natsLine(500, "WRN", `Consumer create failed for '$G > S1 > c-n1': error creating store for consumer: rename /d/n2/meta.inf.tmp /d/n2/meta.inf: input/output error`)
	rejected := func(ms int, object string) string {
		return natsLine(ms, "WRN", "Stream assignment for '"+object+"' rejected by assigned member: error creating store for stream (10049)")
	}
	eioN := func(node string) func(*trialB) {
		return func(b *trialB) {
			b.inject(10, node, catalog.KindError, func(in *record.Injection) { in.Error = "EIO" })
		}
	}
	tests := []struct {
		name string
		logs map[string][]string
		mod  func(*trialB)
		// reported is the node whose line is reported, "" when the line
		// is the aftermath; why is part of the aftermath's reason.
		reported, why string
	}{
		{"the stream the echo named, on its node",
			map[string][]string{"n1": {echoS2, rejected(520, "$G > S2")}}, eioN("n1"), "", `names "$G > S2", which n1's line tied to the injected error named: error EIO into n1 at +10ms, on n1`},
		{"a consumer inside the stream, on its node",
			map[string][]string{"n1": {echoS2, natsLine(600, "WRN", `Consumer create failed, could not locate stream '$G > S2 > c-n3'`)}}, eioN("n1"), "", `names "$G > S2 > c-n3"`},
		{"the consumer the echo named, on the meta leader (a peer), named",
			map[string][]string{"n2": {echoC}, "n1": {natsLine(520, "WRN", `Consumer assignment for '$G > S1 > c-n1' rejected by assigned member: error creating store for consumer (10012)`)}}, eioN("n2"), "", "on peer n1"},
		{"a full disk in the target's words ('not writable') names the stream too (trial 1-47)",
			map[string][]string{"n2": {natsLine(500, "WRN", `Stream create failed for '$G > OBJ_OBJ': storage directory is not writable (10077)`), natsLine(700, "WRN", `JetStream failed to lookup running stream while removing stream '$G > OBJ_OBJ' from this server`)}},
			func(b *trialB) {
				b.inject(10, "n2", catalog.KindError, func(in *record.Injection) { in.Error = "ENOSPC" })
			}, "", `names "$G > OBJ_OBJ"`},
		{"a disk error in the target's words ('not readable') names the stream too (trial 1-290)",
			map[string][]string{"n3": {natsLine(500, "WRN", `Stream create failed for '$G > S1': storage directory not readable`), natsLine(700, "WRN", `JetStream failed to lookup running stream while removing stream '$G > S1' from this server`)}},
			eioN("n3"), "", `names "$G > S1"`},
		{"another stream is reported (planted)",
			map[string][]string{"n1": {echoS2, rejected(520, "$G > S1")}}, eioN("n1"), "n1", ""},
		{"a look-alike name is reported (planted)",
			map[string][]string{"n1": {echoS2, rejected(520, "$G > S20")}}, eioN("n1"), "n1", ""},
		{"the same stream after the fault's window is reported (planted)",
			map[string][]string{"n1": {echoS2, rejected(4000, "$G > S2")}}, eioN("n1"), "n1", ""},
		{"the same stream with no echo is reported (planted: the error went to another member and no line echoed it here)",
			map[string][]string{"n1": {rejected(520, "$G > S2")}}, eioN("n2"), "n1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := healthy()
			for _, n := range b.tr.Nodes {
				b.log(n.Name, tc.logs[n.Name]...)
			}
			tc.mod(b)
			v := runOne(t, NameLog, b.input(Input{Baseline: heartbeatBaseline(t), RecoveryBound: time.Second}))
			evidence := strings.Join(v.Evidence, "\n")
			var after []record.Dismissal
			for _, d := range v.Dismissed {
				if d.Rule == RuleEchoAftermath {
					after = append(after, d)
				}
			}
			if tc.reported != "" {
				if !v.Failed || !reflect.DeepEqual(v.Nodes, []string{tc.reported}) || len(after) != 0 {
					t.Fatalf("failed=%v nodes=%v aftermath=%+v, want the line reported on %s\n%s", v.Failed, v.Nodes, after, tc.reported, evidence)
				}
				return
			}
			if v.Failed || len(after) != 1 || !strings.Contains(after[0].Why, tc.why) {
				t.Fatalf("failed=%v aftermath=%+v, want one line dismissed as the aftermath, why ~%q\n%s", v.Failed, after, tc.why, evidence)
			}
		})
	}
}

// TestQuotedNames: the names a message quotes, not messages or paths.
func TestQuotedNames(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want []string
	}{
		{`Stream create failed for '$G > S2': Error creating msg block file`, []string{"$G > S2"}},
		{`Not granting vote for "S-R3F-UgHwMmbc", could not persist term and vote`, []string{"S-R3F-UgHwMmbc"}},
		{`Healthcheck failed: "JetStream stream '$G > S1' is not current: node write error"`, []string{"$G > S1"}},
		{`open "/d/n1/1.blk": input/output error`, nil},
		{`failed to write`, nil},
		{`can't reach 'c-n2', won't retry`, []string{"c-n2"}},
	} {
		if got := quotedNames(tc.msg); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("quotedNames(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}

// TestLogKnownTemplateOfAnEarlierNormalize: a baseline stored by an
// earlier gofault, whose template kept a generated ID that normalize now
// replaces, still knows the line (a resumed or re-judged campaign).
func TestLogKnownTemplateOfAnEarlierNormalize(t *testing.T) {
	line := natsLine(500, "WRN", `RAFT [BXScrY9i - S-R3F-mEptDXar] Error subscribing to forwarded proposals: system account not setup`)
	l, ok := ParseLogLine(line)
	if !ok {
		t.Fatal("not parsed")
	}
	old := strings.Replace(l.Template, "S-R<n>F-<id>", "S-R<n>F-mEptDXar", 1)
	if old == l.Template {
		t.Fatalf("template %q has no ID to take back", l.Template)
	}
	b := healthy()
	b.log("n1", line)
	v := runOne(t, NameLog, b.input(Input{Baseline: &record.LogBaseline{Trials: 1, Templates: map[string]int{old: 1}}}))
	if v.Failed {
		t.Fatalf("reported a line its baseline knew by an older template: %v", v.Evidence)
	}
}
