package campaign

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trialDirWithData makes a trial dir as a cluster leaves it: data dirs
// with files, and logs.
func trialDirWithData(t *testing.T, root, id string, age time.Duration) string {
	t.Helper()
	dir := filepath.Join(root, id)
	for _, d := range []string{"n1/member/wal", "n2/member/snap"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "0.wal"), make([]byte, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"n1.log", "n2.log", "workload.log"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("log\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mod := time.Now().Add(-age)
	if err := os.Chtimes(dir, mod, mod); err != nil {
		t.Fatal(err)
	}
	return dir
}

func logsOnly(t *testing.T, dir string) bool {
	t.Helper()
	for _, f := range []string{"n1.log", "n2.log", "workload.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s lost its log %s", dir, f)
		}
	}
	return !holdsData(dir)
}

func TestKeeper(t *testing.T) {
	root := t.TempDir()
	// Left by an earlier run: three failed trials with data, oldest first.
	old := []string{
		trialDirWithData(t, root, "1-1", 3*time.Hour),
		trialDirWithData(t, root, "1-2", 2*time.Hour),
		trialDirWithData(t, root, "1-3", time.Hour),
	}
	k, err := newKeeper(root, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !logsOnly(t, old[0]) || logsOnly(t, old[1]) || logsOnly(t, old[2]) {
		t.Fatal("start-up: want the oldest pruned and the two newest kept")
	}
	// The two kept, left unpacked, are packed whole.
	for _, dir := range old[1:] {
		if _, err := os.Stat(filepath.Join(dir, "n1")); !os.IsNotExist(err) {
			t.Errorf("start-up: %s still has its data dirs unpacked (%v)", dir, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, PackList)); err != nil || !strings.Contains(string(b), "n2/member/snap/0.wal") || strings.Contains(string(b), "omitted n") {
			t.Errorf("start-up: %s's pack lists %q (%v), want every member whole", dir, b, err)
		}
	}
	// A passing trial loses its data at once.
	pass := trialDirWithData(t, root, "2-1", 0)
	if err := k.tidy(pass, false, nil); err != nil {
		t.Fatal(err)
	}
	if !logsOnly(t, pass) {
		t.Error("a passing trial kept its data")
	}
	// A failed trial keeps its data; the oldest kept one loses it.
	fail := trialDirWithData(t, root, "2-2", 0)
	if err := k.tidy(fail, true, []string{"n1"}); err != nil {
		t.Fatal(err)
	}
	if logsOnly(t, fail) || !logsOnly(t, old[1]) || logsOnly(t, old[2]) {
		t.Error("want the new failure and 1-3 kept, 1-2 pruned")
	}
	// A trial dir that is gone (never started) is no error.
	if err := k.tidy(filepath.Join(root, "none"), false, nil); err != nil {
		t.Error(err)
	}
	// The new failure is packed: no data dir, its pack and list beside
	// the logs.
	if _, err := os.Stat(filepath.Join(fail, "n1")); !os.IsNotExist(err) {
		t.Errorf("the failed trial's data dir is still there: %v", err)
	}
	packs := dirSize(fail) - 3*4
	if packs <= 0 {
		t.Errorf("the failed trial holds no pack")
	}
	if n := dirSize(root); n != 5*3*4 /* logs */ +packs+dirSize(old[2])-3*4 /* 1-3's pack */ {
		t.Errorf("dirSize = %d", n)
	}
	// A later failure prunes 1-3's data and then the pack of 2-2.
	for _, id := range []string{"2-3", "2-4"} {
		if err := k.tidy(trialDirWithData(t, root, id, 0), true, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !logsOnly(t, old[2]) || !logsOnly(t, fail) {
		t.Error("want 1-3 and 2-2 pruned of their data and pack")
	}
	if _, err := os.Stat(filepath.Join(fail, PackList)); !os.IsNotExist(err) {
		t.Errorf("a pruned trial kept its pack's list: %v", err)
	}
}
