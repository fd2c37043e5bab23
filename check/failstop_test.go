package check

import (
	"strings"
	"testing"
	"time"
)

// TestFailStop: a process's last words that quote the injected error —
// etcd's zap fatal and panic lines, as JSON and as zaptest's console
// lines behind t.Log's prefix, a Go panic value — are a fail-stop; a
// nil dereference after the error (planted), an assertion, a fatal
// quoting another error and a fatal logged before the injection are not.
func TestFailStop(t *testing.T) {
	inj := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	const zaptestFatal = "=== RUN   TestBackendBatchIntervalCommit\n" +
		"    logger.go:146: 2026-12-07T04:00:00.100Z\tINFO\topened backend db\t{\"path\": \"/tmp/x/db\"}\n" +
		"    logger.go:146: 2026-12-07T04:00:01.250Z\tFATAL\tfailed to commit tx\t{\"error\": \"input/output error\"}\n"
	const zaptestPanic = "=== RUN   TestBackendClose\n" +
		"    logger.go:146: 2026-12-07T04:00:01.250Z\tPANIC\tfailed to open database\t{\"path\": \"/tmp/x/db\", \"error\": \"open /tmp/x/db: too many open files\"}\n" +
		"panic: failed to open database\n\ngoroutine 7 [running]:\ngo.uber.org/zap/zapcore.CheckWriteAction.OnWrite(0x2, 0xc000)\n" +
		"go.etcd.io/etcd/server/v3/storage/backend.newBackend({0x0})\n\t/x/backend.go:190 +0x8b\n"
	const nilDeref = "=== RUN   TestSave\n    logger.go:146: 2026-12-07T04:00:01.250Z\tWARN\tsave failed\t{\"error\": \"input/output error\"}\n" +
		"panic: runtime error: invalid memory address or nil pointer dereference [recovered]\n\tpanic: runtime error: invalid memory address or nil pointer dereference\n" +
		"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x5b3f1a]\n\ngoroutine 7 [running]:\ngo.etcd.io/etcd/server/v3/storage/wal.(*WAL).Close(0x0)\n"
	for _, tc := range []struct {
		name   string
		output string
		errs   []string
		want   string // "" not a fail-stop; else in the line
	}{
		{"zaptest console fatal quoting the injected EIO (etcd's backend commit)", zaptestFatal, []string{"EIO"}, "failed to commit tx"},
		{"zaptest console panic, then zap's Go panic with its message alone", zaptestPanic, []string{"EMFILE"}, "too many open files"},
		{"zap JSON fatal (etcd's server log)", `{"level":"fatal","ts":"2026-12-07T04:00:02.123Z","caller":"backend/batch_tx.go:250","msg":"failed to commit tx","error":"input/output error"}` + "\n", []string{"syscall.EIO"}, "failed to commit tx"},
		{"a Go panic whose value quotes it (hashicorp/raft's restore)", "panic: failed to restore snapshot: read : input/output error\n\ngoroutine 1 [running]:\n", []string{"EIO"}, "failed to restore snapshot"},
		{"a nil dereference after the error (planted)", nilDeref, []string{"EIO"}, ""},
		{"an assertion", "panic: unexpected index 3\n\ngoroutine 1 [running]:\n", []string{"EIO"}, ""},
		{"a fatal quoting another error", strings.Replace(zaptestFatal, "input/output error", "database not open", 1), []string{"EIO"}, ""},
		{"a fatal in the millisecond of the injection (zap writes milliseconds)", strings.Replace(zaptestFatal, "04:00:01.250Z", "04:00:00.000Z", 1), []string{"EIO"}, "failed to commit tx"},
		{"a fatal the millisecond before", strings.Replace(zaptestFatal, "04:00:01.250Z", "03:59:59.999Z", 1), []string{"EIO"}, ""},
		{"a fatal logged before the injection", strings.Replace(zaptestFatal, "04:00:01.250Z", "03:59:59.250Z", 1), []string{"EIO"}, ""},
		{"no last words", "=== RUN   TestA\n    a_test.go:3: input/output error\n", []string{"EIO"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, ok := FailStop(tc.output, tc.errs, inj.Add(400*time.Microsecond))
			if ok != (tc.want != "") || !strings.Contains(line, tc.want) {
				t.Errorf("FailStop = %q, %v; want %v with %q", line, ok, tc.want != "", tc.want)
			}
		})
	}
}
