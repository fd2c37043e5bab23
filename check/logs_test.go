package check

import (
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
	}
	for _, p := range pairs {
		if a, b := normalize(p[0]), normalize(p[1]); a != b {
			t.Errorf("templates differ:\n%q\n%q", a, b)
		}
	}
	for _, w := range []string{"JetStream", "S3", "sha256", "deadbeef42"} {
		if got := normalize("x " + w + " y"); strings.Contains(got, "<id>") {
			t.Errorf("normalize(%q) = %q: not a generated ID", w, got)
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
		`{"level":"info","caller":"embed/etcd.go:100","msg":"serving client traffic","address":"127.0.0.1:2379"}`,
		`{"level":"warn","caller":"rafthttp/probing_status.go:68","msg":"prober detected unhealthy status","remote-peer-id":"8e9e05c52164694d"}`,
	}
	newErr := `{"level":"error","caller":"mvcc/kvstore.go:300","msg":"failed to restore index from 17 keys","error":"bad revision"}`
	tests := []struct {
		name   string
		lines  []string
		mod    func(*trialB)
		noBase bool
		ignore []string
		want   verdictWant
	}{
		{"same templates, other values", []string{
			`{"level":"warn","caller":"rafthttp/probing_status.go:68","msg":"prober detected unhealthy status","remote-peer-id":"1c3d5e7f9a0b2c4d"}`,
			`{"level":"info","caller":"x/new.go:1","msg":"an info line is never judged"}`,
		}, nil, false, nil, verdictWant{}},
		{"no baseline", []string{newErr}, nil, true, nil, verdictWant{unknown: true, symptom: "no fault-free baseline to judge logs against"}},
		{"new error", []string{newErr, `{"level":"warn","caller":"x/y.go:2","msg":"a new warning"}`}, nil, false, nil,
			verdictWant{failed: true, symptom: "new error log at mvcc/kvstore.go: failed to restore index from <n> keys", nodes: []string{"n1"}, ev: "new warn on n1"}},
		{"new panic line", []string{"panic: boom 42"}, nil, false, nil, verdictWant{failed: true, symptom: "new panic log: boom <n>"}},
		{"ignored by pattern", []string{newErr}, nil, false, []string{`restore index`}, verdictWant{}},
		{"echo of injected EIO", []string{`{"level":"error","caller":"wal/wal.go:800","msg":"failed to write","error":"write /d/wal: input/output error"}`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO" })
			}, false, nil,
			verdictWant{symptom: "informational: new error log at wal/wal.go: failed to write", ev: "informational, echoes the injected error input/output error"}},
		{"a resource the injected ENOSPC exhausted, in the target's words", []string{`[ERR] JetStream out of resources, will be DISABLED`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "ENOSPC" })
			}, false, nil,
			verdictWant{symptom: "informational: new error log: [ERR] JetStream out of resources, will be DISABLED", ev: "follows from the injected ENOSPC (a resource ran out)"}},
		{"a subsystem the ENOSPC turned off, reported off", []string{`[WRN] Healthcheck failed: "JetStream not enabled (10076)"`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "ENOSPC" })
			}, false, nil,
			verdictWant{symptom: "informational: new warn log: [WRN] Healthcheck failed: <q>", ev: "follows from the injected ENOSPC (a resource ran out)"}},
		{"the same line after an EIO is new", []string{`[WRN] Healthcheck failed: "JetStream not enabled (10076)"`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO" })
			}, false, nil,
			verdictWant{failed: true, symptom: "new warn log: [WRN] Healthcheck failed: <q>", nodes: []string{"n1"}}},
		{"an election after an error injected into the leader", []string{`[WARN]  raft: rejecting pre-vote request since we have a leader: from=127.0.0.1:16579 leader=127.0.0.1:31543 leader-id=n1`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO"; in.Role = "Leader" })
			}, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: rejecting pre-vote request since we have a leader: from=<addr> leader=<addr> leader-id=n<n>", ev: "follows from the error injected into the leader (a new election)"}},
		{"an election after an error injected into a follower is new", []string{`[WARN]  raft: rejecting pre-vote request since we have a leader: from=127.0.0.1:16579 leader=127.0.0.1:31543 leader-id=n1`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO"; in.Role = "Follower" })
			}, false, nil,
			verdictWant{failed: true, symptom: "new warn log: [WARN] raft: rejecting pre-vote request since we have a leader: from=<addr> leader=<addr> leader-id=n<n>", nodes: []string{"n1"}}},
		{"out of resources after an EIO is new", []string{`[ERR] JetStream out of resources, will be DISABLED`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "EIO" })
			}, false, nil,
			verdictWant{failed: true, symptom: "new error log: [ERR] JetStream out of resources, will be DISABLED", nodes: []string{"n1"}}},
		{"logged at the fault site", []string{`{"level":"error","caller":"etcdserver/raft.go:200","msg":"failed to send out heartbeats"}`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) {
					in.Error = "ECONNRESET"
					in.Stack = []record.Frame{{Func: "net.(*conn).Write", File: "/usr/local/go/src/net/net.go"}, {Func: "x", File: "/w/etcd/server/etcdserver/raft.go"}}
				})
			}, false, nil, verdictWant{symptom: "informational: new error log at etcdserver/raft.go: failed to send out heartbeats", ev: "logged at the fault site"}},
		{"peers of a killed node", []string{`{"level":"warn","caller":"rafthttp/stream.go:421","msg":"lost TCP streaming connection with remote peer"}`},
			func(b *trialB) { b.inject(10, "n2", catalog.KindCrash, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log at rafthttp/stream.go: lost TCP streaming connection with remote peer"}},
		{"error field of a killed peer", []string{`{"level":"warn","caller":"etcdserver/cluster_util.go:160","msg":"failed to get version","error":"Get \"http://127.0.0.1:42025/version\": dial tcp 127.0.0.1:42025: connect: connection refused"}`},
			func(b *trialB) { b.node("n2", func(n *record.Node) { n.Killed = true }) }, false, nil,
			verdictWant{symptom: "informational: new warn log at etcdserver/cluster_util.go: failed to get version"}},
		{"same line without a kill is new", []string{`{"level":"warn","caller":"rafthttp/stream.go:421","msg":"lost TCP streaming connection with remote peer"}`},
			nil, false, nil, verdictWant{failed: true, symptom: "new warn log at rafthttp/stream.go: lost TCP streaming connection with remote peer"}},
		{"health probe failing under a delay", []string{`{"level":"warn","caller":"etcdhttp/health.go:120","msg":"/health error","output":"{\"health\":\"false\",\"reason\":\"RANGE ERROR:context canceled\"}","status-code":503}`,
			`{"level":"warn","caller":"etcdserver/server.go:1243","msg":"Failed to check current member's leadership","error":"etcdserver: leader changed"}`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = 3 * time.Second })
			}, false, nil, verdictWant{symptom: "informational: new warn log at etcdhttp/health.go: <path> error", ev: "leader changed"}},
		{"peer of a connection broken by an injected network error", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to pipeline appendEntries: peer="{Voter n2 127.0.0.1:24015}" error="write tcp 127.0.0.1:59588->127.0.0.1:24015: use of closed network connection"`},
			func(b *trialB) {
				b.inject(10, "n2", catalog.KindError, func(in *record.Injection) { in.Error = "syscall.EPIPE" })
			}, false, nil, verdictWant{symptom: "informational: new error log: [ERROR] raft: failed to pipeline appendEntries: peer=<q> error=<q>", ev: "follows from the broken connection"}},
		{"peer of a connection whose write timed out (an injected deadline)", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to pipeline appendEntries: peer="{Voter n2 127.0.0.1:27493}" error="write tcp 127.0.0.1:60240->127.0.0.1:27493: use of closed network connection"`},
			func(b *trialB) {
				b.inject(10, "n2", catalog.KindError, func(in *record.Injection) { in.Error = "deadline" })
			}, false, nil, verdictWant{symptom: "informational: new error log: [ERROR] raft: failed to pipeline appendEntries: peer=<q> error=<q>", ev: "follows from the broken connection"}},
		{"a restarted follower skipping a commit index older than its snapshot", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: skipping application of old log: index=389`},
			func(b *trialB) { b.inject(10, "n2", catalog.KindCrash, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: skipping application of old log: index=<n>", ev: "follows from the killed node"}},
		{"the same skip without a fault is new", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: skipping application of old log: index=389`},
			nil, false, nil, verdictWant{failed: true, symptom: "new warn log: [WARN] raft: skipping application of old log: index=<n>"}},
		{"leader catching up a member that a delay left behind", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to get log: index=55 error="log not found"`,
			`2026-11-21T05:00:01.000Z [ERROR] raft: failed to flush response: error="write tcp 127.0.0.1:29018->127.0.0.1:48622: write: broken pipe"`},
			func(b *trialB) {
				b.inject(10, "n2", catalog.KindDelay, func(in *record.Injection) { in.Delay = 3 * time.Second })
			}, false, nil, verdictWant{symptom: "informational: new error log: [ERROR] raft: failed to flush response: error=<q>", ev: "follows from the broken connection"}},
		{"a killed leader back as a follower drops its uncommitted entries", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: clearing log suffix: from=11 to=11`},
			func(b *trialB) { b.inject(10, "n1", catalog.KindCrash, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: clearing log suffix: from=<n> to=<n>", ev: "follows from the killed node"}},
		{"a leader failing to reach a killed follower", []string{`2026-11-21T05:00:01.000Z [WARN]  raft: failed to contact: server-id=n2 time=1.2s`},
			func(b *trialB) { b.inject(10, "n2", catalog.KindCrash, nil) }, false, nil,
			verdictWant{symptom: "informational: new warn log: [WARN] raft: failed to contact: server-id=n<n> time=<n>", ev: "follows from the killed node"}},
		{"echo of a dependency's sentinel", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to append to logs: error="tx closed"`},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "ErrTxClosed" })
			}, false, nil, verdictWant{symptom: "informational: new error log: [ERROR] raft: failed to append to logs: error=<q>", ev: "echoes the injected error tx closed"}},
		{"the same lines without a fault are new", []string{`2026-11-21T05:00:01.000Z [ERROR] raft: failed to get log: index=55 error="log not found"`},
			nil, false, nil, verdictWant{failed: true, symptom: "new error log: [ERROR] raft: failed to get log: index=<n> error=<q>"}},
		{"slow machine", []string{`{"level":"warn","caller":"etcdserver/util.go:166","msg":"apply request took too long","took":"250ms"}`},
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
		{"latency report", []string{`{"level":"warn","caller":"v3rpc/interceptor.go:197","msg":"request stats","start time":"2026-11-21T05:20:56.404403Z","time spent":"1.078742738s","remote":"127.0.0.1:57374"}`},
			nil, false, nil, verdictWant{symptom: "informational: new warn log at v3rpc/interceptor.go: request stats"}},
		{"real error beside an echo", []string{`{"level":"error","caller":"wal/wal.go:800","msg":"failed to write","error":"EIO"}`, newErr},
			func(b *trialB) {
				b.inject(10, "n1", catalog.KindError, func(in *record.Injection) { in.Error = "syscall.EIO" })
			}, false, nil,
			verdictWant{failed: true, symptom: "new error log at mvcc/kvstore.go: failed to restore index from <n> keys", ev: "informational"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := newTrial("n1")
			base.tr.Nodes[0].Log = writeLog(t, baseLines...)
			var bl Baseline
			if err := bl.Learn(&base.tr); err != nil {
				t.Fatal(err)
			}
			if bl.Trials != 1 || len(bl.Templates) != 1 {
				t.Fatalf("baseline %+v", bl)
			}
			b := healthy()
			b.tr.Nodes[0].Log = writeLog(t, tc.lines...)
			if tc.mod != nil {
				tc.mod(b)
			}
			in := &Input{Trial: &b.tr, Baseline: &bl, LogIgnore: tc.ignore}
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
			verdictWant{symptom: "informational: new warn log: <addr> [WRN] Healthcheck failed: <q>", ev: "follows from the broken connection"}},
		{"no network sites known", nil, verdictWant{failed: true, symptom: "new warn log: <addr> [WRN] Healthcheck failed: <q>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := newTrial("n1")
			base.tr.Nodes[0].Log = writeLog(t, `[1] 2026/11/21 04:59:59.000000 [INF] Server is ready`)
			var bl Baseline
			if err := bl.Learn(&base.tr); err != nil {
				t.Fatal(err)
			}
			b := healthy()
			b.tr.Nodes[0].Log = writeLog(t, line)
			b.inject(10, "n3", catalog.KindError, func(in *record.Injection) { in.Error = "EOF"; in.SiteID = site })
			checkVerdict(t, runOne(t, NameLog, &Input{Trial: &b.tr, Baseline: &bl, NetSites: tc.net}), tc.want)
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
