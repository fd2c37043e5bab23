package durable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOverwritten(t *testing.T) {
	cases := []struct {
		name        string
		synced, now string
		first, last int
	}{
		{"same", "abcdef", "abcdef", -1, -1},
		{"appended to", "abc", "abcdef", -1, -1},
		{"one byte", "abcdef", "abXdef", 2, 3},
		{"a span", "abcdef", "aXcdYf", 1, 5},
		{"truncated and rewritten shorter", "abcdef", "ab", 2, 6},
		{"emptied", "abc", "", 0, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, l := Overwritten([]byte(c.synced), []byte(c.now))
			if f != c.first || l != c.last {
				t.Fatalf("Overwritten(%q, %q) = %d, %d, want %d, %d", c.synced, c.now, f, l, c.first, c.last)
			}
		})
	}
}

// TestPowerLossRevertsOverwrites: bytes overwritten in place since the
// last sync read back as they were synced (pwrite, a rewrite through
// O_TRUNC), an overwrite synced again is kept, and a file larger than
// CopyLimit keeps its overwrite (the documented limit).
func TestPowerLossRevertsOverwrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	im, err := NewImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta, marker, synced, big := filepath.Join(dir, "meta"), filepath.Join(dir, "marker"), filepath.Join(dir, "synced"), filepath.Join(dir, "big")
	write(t, meta, "term=3 vote=n1", os.O_TRUNC)
	write(t, marker, "0123456789", os.O_TRUNC)
	write(t, synced, "v1", os.O_TRUNC)
	write(t, big, strings.Repeat("a", CopyLimit+1), os.O_TRUNC)
	if err := im.Synced(); err != nil {
		t.Fatal(err)
	}
	// An unsynced pwrite in the middle of synced data.
	f, err := os.OpenFile(meta, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("4"), 5); err != nil {
		t.Fatal(err)
	}
	f.Close()
	write(t, marker, "xy", os.O_TRUNC) // rewritten shorter, in place
	write(t, synced, "v2", os.O_TRUNC)
	write(t, big, "b", 0)
	if err := im.Synced(); err != nil { // syncs synced's v2 (and, by the model, the rest)
		t.Fatal(err)
	}
	// Overwrites after the last sync.
	f, err = os.OpenFile(meta, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("5"), 5); err != nil {
		t.Fatal(err)
	}
	f.Close()
	write(t, marker, "zz", os.O_TRUNC)
	write(t, big, "c", 0)

	st, err := RollBack(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{meta: "term=4 vote=n1", marker: "xy", synced: "v2"} {
		if got := read(t, p); got != want {
			t.Errorf("%s = %q, want %q", filepath.Base(p), got, want)
		}
	}
	if got := read(t, big)[:1]; got != "c" {
		t.Errorf("big starts %q, want the unsynced overwrite kept (beyond CopyLimit)", got)
	}
	if st.Reverted != 2 {
		t.Errorf("Reverted = %d, want 2 (meta, marker)", st.Reverted)
	}
}
