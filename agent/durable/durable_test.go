package durable

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, p, s string, flag int) {
	t.Helper()
	f, err := os.OpenFile(p, flag|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPowerLoss: an unsynced write is gone, a synced one kept, an unsynced
// rename undone (with the file it replaced back), an unsynced new file
// removed.
func TestPowerLoss(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	if err := os.MkdirAll(filepath.Join(dir, "wal"), 0o755); err != nil {
		t.Fatal(err)
	}
	im, err := NewImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "wal", "0001.log")
	write(t, log, "synced;", os.O_APPEND)
	write(t, filepath.Join(dir, "state"), "old", os.O_TRUNC)
	if err := im.Synced(); err != nil { // the log's fsync
		t.Fatal(err)
	}
	write(t, log, "unsynced;", os.O_APPEND)
	write(t, filepath.Join(dir, "state.tmp"), "new", os.O_TRUNC)
	if err := os.Rename(filepath.Join(dir, "state.tmp"), filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "fresh"), "x", os.O_TRUNC)

	st, err := RollBack(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, log); got != "synced;" {
		t.Errorf("log = %q, want the synced write only", got)
	}
	if got := read(t, filepath.Join(dir, "state")); got != "old" {
		t.Errorf("state = %q, want the file the unsynced rename replaced", got)
	}
	for _, n := range []string{"state.tmp", "fresh"} {
		if got := read(t, filepath.Join(dir, n)); got != "<none>" {
			t.Errorf("%s = %q, want no file (created after the last sync)", n, got)
		}
	}
	if st.Truncated != 1 || st.Restored != 1 || st.Removed != 1 {
		t.Errorf("stats = %+v, want 1 truncated, 1 restored, 1 removed", st)
	}

	// A second process of the node: what it finds is durable, and a synced
	// rename stays.
	im, err = NewImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "state.tmp"), "newer", os.O_TRUNC)
	if err := os.Rename(filepath.Join(dir, "state.tmp"), filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	if err := im.Synced(); err != nil { // the directory's fsync
		t.Fatal(err)
	}
	write(t, log, "more;", os.O_APPEND)
	if _, err := RollBack(dir, nil); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "state")); got != "newer" {
		t.Errorf("state = %q, want the synced rename kept", got)
	}
	if got := read(t, log); got != "synced;" {
		t.Errorf("log = %q, want the synced write only", got)
	}
}

// TestPreallocatedLog: a log that appends into preallocated space (etcd's
// WAL) loses what it wrote after its last sync, inside the file's size:
// those bytes read back as zeros, the synced ones stay, and bytes another
// descriptor wrote at offsets none moved over (pwrite) are kept.
func TestPreallocatedLog(t *testing.T) {
	if !canReadProc() {
		t.Skip("no /proc/self/fdinfo: appends inside the synced size are kept")
	}
	dir := filepath.Join(t.TempDir(), "n1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "0001.wal")
	f, err := os.OpenFile(log, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(64); err != nil { // preallocated
		t.Fatal(err)
	}
	im, err := NewImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("rec1;rec2;"); err != nil {
		t.Fatal(err)
	}
	if err := im.Synced(); err != nil { // the log's fdatasync
		t.Fatal(err)
	}
	if _, err := f.WriteString("rec3;"); err != nil { // acknowledged never
		t.Fatal(err)
	}
	if err := RecordCrash(os.Getpid(), dir); err != nil {
		t.Fatal(err)
	}
	st, err := RollBack(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "rec1;rec2;" + string(make([]byte, 54))
	if got := read(t, log); got != want {
		t.Errorf("log = %q, want the synced records and zeros", got)
	}
	if st.Zeroed != 1 || st.ZeroedBytes != 5 || st.Truncated != 0 {
		t.Errorf("stats = %+v, want 1 file with 5 bytes zeroed, none truncated", st)
	}

	// A crash without a write since the sync zeroes nothing.
	if err := im.Synced(); err != nil {
		t.Fatal(err)
	}
	if err := RecordCrash(os.Getpid(), dir); err != nil {
		t.Fatal(err)
	}
	if st, err := RollBack(dir, nil); err != nil || st.Zeroed != 0 {
		t.Errorf("RollBack after a clean sync = %+v, %v; want nothing zeroed", st, err)
	}
}

// TestReaderKeepsSyncedData: a descriptor that reads through synced data
// after the image (a recovery scan) moves its offset too, but it wrote
// nothing: the rollback must not zero what it read.
func TestReaderKeepsSyncedData(t *testing.T) {
	if !canReadProc() {
		t.Skip("no /proc/self/fdinfo")
	}
	dir := filepath.Join(t.TempDir(), "n1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "0001.wal")
	synced := "rec1;rec2;rec3;"
	write(t, log, synced, os.O_TRUNC)
	f, err := os.OpenFile(log, os.O_RDWR, 0) // open before the image, at offset 0
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := NewImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := im.Synced(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(f); err != nil { // the scan moves the offset to the end
		t.Fatal(err)
	}
	if err := RecordCrash(os.Getpid(), dir); err != nil {
		t.Fatal(err)
	}
	st, err := RollBack(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, log); got != synced || st.Zeroed != 0 {
		t.Errorf("log = %q, stats %+v; want the synced records kept", got, st)
	}
}

// canReadProc says whether this system has /proc/self/fdinfo.
func canReadProc() bool {
	_, err := os.Stat("/proc/self/fdinfo")
	return err == nil
}

// TestScope: files out of scope are left as they are.
func TestScope(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	os.MkdirAll(filepath.Join(dir, "wal"), 0o755)
	im, err := NewImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	_ = im
	write(t, filepath.Join(dir, "wal", "a"), "x", os.O_TRUNC)
	write(t, filepath.Join(dir, "db"), "y", os.O_TRUNC)
	if _, err := RollBack(dir, Scope{"wal"}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "wal", "a")); got != "<none>" {
		t.Errorf("wal/a = %q, want removed", got)
	}
	if got := read(t, filepath.Join(dir, "db")); got != "y" {
		t.Errorf("db = %q, want untouched (out of scope)", got)
	}
}

// TestNoManifest: a data dir no agent recorded is left alone.
func TestNoManifest(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "f"), "x", os.O_TRUNC)
	if st, err := RollBack(dir, nil); err != nil || st != (Stats{}) {
		t.Fatalf("RollBack = %+v, %v", st, err)
	}
	if read(t, filepath.Join(dir, "f")) != "x" {
		t.Error("file changed")
	}
}

// BenchmarkSynced measures one recording of a data dir of 12 files in 3
// directories (an etcd member's dir holds about that many).
func BenchmarkSynced(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "n1")
	for d := 0; d < 3; d++ {
		sub := filepath.Join(dir, fmt.Sprint("d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 4; f++ {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprint("f", f)), make([]byte, 4096), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	im, err := NewImage(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := im.Synced(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFailedRecordingDropsImage: once a recording fails, RollBack changes
// nothing (a stale image could undo what later syncs made durable).
func TestFailedRecordingDropsImage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	im, err := NewImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "log"), "synced", os.O_TRUNC)
	// The next recording cannot write its manifest.
	if err := os.Mkdir(filepath.Join(im.shadow, manifestName+".tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := im.Synced(); err == nil {
		t.Fatal("Synced succeeded without a writable manifest")
	}
	if st, err := RollBack(dir, nil); err != nil || st != (Stats{}) {
		t.Fatalf("RollBack = %+v, %v; want nothing changed", st, err)
	}
	if read(t, filepath.Join(dir, "log")) != "synced" {
		t.Error("the synced file was rolled back")
	}
}
