package cluster

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTemplate forms a cluster once and starts two clusters from it: each
// member's data dir starts as the formed one (one boot recorded there, on
// the reserved port) and the template is left as it was.
func TestTemplate(t *testing.T) {
	res, err := Reserve(3 * 2)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	root := t.TempDir()
	tmpl := specIn(filepath.Join(root, "template"), "serve", 3)
	tmpl.Reserved = res
	if err := Form(context.Background(), tmpl); err != nil {
		t.Fatalf("Form: %v", err)
	}
	boots := func(dir string) []string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, "n2", "boots"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	client := res.Ports()[2] // n2's first port
	wantBoot := "boot 127.0.0.1:" + strconv.Itoa(client)
	if got := boots(tmpl.Dir); !slices.Equal(got, []string{wantBoot}) {
		t.Fatalf("template boots %q, want %q", got, wantBoot)
	}
	for i := range 2 {
		s := specIn(filepath.Join(root, "trial"+strconv.Itoa(i)), "serve", 3)
		s.Reserved, s.From = res, tmpl.Dir
		c := start(t, context.Background(), s)
		if !slices.Equal(c.Ports(), res.Ports()) {
			t.Errorf("cluster %d ports %v, want the reserved %v", i, c.Ports(), res.Ports())
		}
		recs := c.Stop()
		assertClean(t, pids(recs), nil)
		if got := boots(s.Dir); !slices.Equal(got, []string{wantBoot, wantBoot}) {
			t.Errorf("cluster %d: n2's boots %q, want the template's and its own", i, got)
		}
	}
	if got := boots(tmpl.Dir); len(got) != 1 {
		t.Errorf("the template changed: boots %q", got)
	}
}

// TestReservationHolds: while no cluster runs on them, reserved ports
// cannot be taken by another listener (another process's nodes).
func TestReservationHolds(t *testing.T) {
	res, err := Reserve(2)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(Host, strconv.Itoa(res.Ports()[0]))
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("listened on held port %s", addr)
	}
	res.unhold()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("port %s not free after unhold: %v", addr, err)
	}
	l.Close()
	res.hold()
	res.Release()
	if l, err := net.Listen("tcp", addr); err != nil {
		t.Errorf("port %s not free after Release: %v", addr, err)
	} else {
		l.Close()
	}
}

// TestFormRequiresReservation: a template needs fixed ports.
func TestFormRequiresReservation(t *testing.T) {
	if err := Form(context.Background(), spec(t, "serve", 1)); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("Form without a reservation: %v", err)
	}
}

// TestCopyTreeSparse: data ranges, sizes, modes, links and directories are
// copied; a preallocated or sparse file's zeros are not written.
func TestCopyTreeSparse(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	if err := os.MkdirAll(filepath.Join(src, "wal", "empty"), 0o750); err != nil {
		t.Fatal(err)
	}
	const size = 16 << 20
	wal, err := os.OpenFile(filepath.Join(src, "wal", "0.wal"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Fallocate(int(wal.Fd()), 0, 0, size); err != nil {
		t.Skipf("fallocate: %v", err)
	}
	head := bytes.Repeat([]byte("record"), 1000)
	if _, err := wal.WriteAt(head, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := wal.WriteAt([]byte("tail"), size-4096); err != nil {
		t.Fatal(err)
	}
	wal.Close()
	if err := os.WriteFile(filepath.Join(src, "member"), []byte("id=7"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("member", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dst, "wal", "0.wal"))
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, size)
	copy(want, head)
	copy(want[size-4096:], "tail")
	if !bytes.Equal(got, want) {
		t.Error("the WAL's copy differs")
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dst, "wal", "0.wal"), &st); err != nil {
		t.Fatal(err)
	}
	if !reportsHoles(t, filepath.Join(src, "wal", "0.wal"), 1<<20) {
		t.Log("this file system reports preallocated space as data: the copy is not sparse here")
	} else if used := st.Blocks * 512; used > 1<<20 {
		t.Errorf("the copy of a preallocated %d-byte file uses %d bytes of disk: zeros were written", size, used)
	}
	if fi, err := os.Stat(filepath.Join(dst, "wal", "0.wal")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "wal", "empty")); err != nil || !fi.IsDir() {
		t.Errorf("empty dir: %v %v", fi, err)
	}
	if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "member" {
		t.Errorf("link: %q %v", l, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "member")); string(b) != "id=7" {
		t.Errorf("member: %q", b)
	}
}

// reportsHoles reports whether the file system says that offset off of
// path, preallocated and never written, holds no data (SEEK_DATA skips it).
func reportsHoles(t *testing.T, path string, off int64) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	next, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
	return err == nil && next > off
}
