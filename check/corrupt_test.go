package check

import (
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// TestCrashDetectedCorruption: a member that stops saying its data is
// corrupt after a corrupt fault on it detected the corruption (fine); the
// same exit after another fault, on another member, before the fault, or
// a runtime panic on the altered bytes, is a crash (the planted cases the
// rule must not hide).
func TestCrashDetectedCorruption(t *testing.T) {
	const refusal = `time=2026-11-21T05:00:02.200Z level=ERROR msg="minikv stopped" err="load snapshot: snapshot checksum mismatch: want 1a2b got 99ff"`
	corrupt := func(in *record.Injection) { in.Error = "pick 0x2: bit 1 of byte 40 of a 900-byte read flipped" }
	tests := []struct {
		name string
		b    func(t *testing.T) *trialB
		want verdictWant
	}{
		{"checksum refusal after a corrupt on the member", func(*testing.T) *trialB {
			return healthy().log("n2", `time=2026-11-21T05:00:00.000Z level=INFO msg=serving`, refusal).inject(2000, "n2", catalog.KindCorrupt, corrupt).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2200) })
		}, verdictWant{symptom: "informational: node stopped on a corruption it detected", ev: "bit 1 of byte 40"}},
		{"zap fatal naming the corruption", func(*testing.T) *trialB {
			return healthy().log("n2", `{"level":"fatal","msg":"failed to read WAL","error":"walpb: crc mismatch"}`).inject(2000, "n2", catalog.KindCorrupt, corrupt).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2200) })
		}, verdictWant{symptom: "informational: node stopped on a corruption it detected", ev: "crc mismatch"}},
		{"runtime panic on the corrupted bytes", func(*testing.T) *trialB {
			return healthy().log("n2", goPanic).inject(2000, "n2", catalog.KindCorrupt, corrupt).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 2, at(2200) })
		}, verdictWant{failed: true, symptom: "node panicked: runtime error: invalid memory address or nil pointer dereference in go.etcd.io/etcd/server/v3/etcdserver.(*EtcdServer).applyAll", nodes: []string{"n2"}}},
		{"refusal on another member than the corrupted one", func(*testing.T) *trialB {
			return healthy().log("n2", refusal).inject(2000, "n1", catalog.KindCorrupt, corrupt).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2200) })
		}, verdictWant{failed: true, symptom: "node exited with status 1", nodes: []string{"n2"}}},
		{"refusal after a delay, not a corruption", func(*testing.T) *trialB {
			return healthy().log("n2", refusal).inject(2000, "n2", catalog.KindDelay, nil).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2200) })
		}, verdictWant{failed: true, symptom: "node exited with status 1", nodes: []string{"n2"}}},
		{"refusal before the corrupt fault", func(*testing.T) *trialB {
			return healthy().log("n2", refusal).inject(2500, "n2", catalog.KindCorrupt, corrupt).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2200) })
		}, verdictWant{failed: true, symptom: "node exited with status 1", nodes: []string{"n2"}}},
		{"exit after a corrupt without a word of corruption", func(*testing.T) *trialB {
			return healthy().log("n2", `time=2026-11-21T05:00:02.200Z level=ERROR msg="minikv stopped" err="decode snapshot: invalid character"`).inject(2000, "n2", catalog.KindCorrupt, corrupt).
				node("n2", func(n *record.Node) { n.Exited, n.ExitCode, n.ExitTime = true, 1, at(2200) })
		}, verdictWant{failed: true, symptom: "node exited with status 1", nodes: []string{"n2"}}},
		{"a torn write the member cannot restart from", func(*testing.T) *trialB {
			return healthy().log("n2", "=== gofault: restart 1 of node n2 ===", `{"level":"fatal","msg":"failed to open WAL","error":"wal: crc mismatch"}`).inject(100, "n2", catalog.KindTorn, nil).node("n2", func(n *record.Node) {
				n.Exited, n.ExitCode, n.ExitTime, n.Restarts = true, 1, at(1200), 1
				n.RestartErr = "restart n2: exited before it was ready (exit status 1)"
			})
		}, verdictWant{failed: true, symptom: "node did not come back after a crash fault", nodes: []string{"n2"}, ev: "wal: crc mismatch"}},
		{"a rot the restart reads back and refuses (corruption at rest, detected)", func(*testing.T) *trialB {
			return healthy().log("n2", "=== gofault: restart 1 of node n2 ===", `{"level":"fatal","msg":"failed to open WAL","error":"wal: crc mismatch"}`).inject(100, "n2", catalog.KindRot, nil).node("n2", func(n *record.Node) {
				n.Exited, n.ExitCode, n.ExitTime, n.Restarts = true, 1, at(1200), 1
				n.RestartErr = "restart n2: exited before it was ready (exit status 1)"
			})
		}, verdictWant{symptom: "informational: node stopped on a corruption it detected", ev: "wal: crc mismatch"}},
		{"a rot's restart that panics is still a crash (planted)", func(*testing.T) *trialB {
			return healthy().log("n2", "=== gofault: restart 1 of node n2 ===", goPanic).inject(100, "n2", catalog.KindRot, nil).node("n2", func(n *record.Node) {
				n.Exited, n.ExitCode, n.ExitTime, n.Restarts = true, 2, at(1200), 1
				n.RestartErr = "restart n2: exited before it was ready (exit status 2)"
			})
		}, verdictWant{failed: true, symptom: "node did not come back after a crash fault", nodes: []string{"n2"}}},
		{"a torn write's kill", func(*testing.T) *trialB {
			return healthy().inject(100, "n2", catalog.KindTorn, nil).node("n2", func(n *record.Node) {
				n.Exited, n.Signal, n.ExitCode, n.ExitTime = true, "SIGKILL", -1, at(110)
			})
		}, verdictWant{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b(t)
			checkVerdict(t, runOne(t, NameCrash, b.input(Input{})), tc.want)
		})
	}
}
