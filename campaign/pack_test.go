package campaign

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gofault/gofault/record"
)

func TestHitMembers(t *testing.T) {
	for _, tc := range []struct {
		name string
		tr   record.Trial
		want []string
	}{
		{"fault-free: every member", record.Trial{Nodes: []record.Node{{Name: "n1"}, {Name: "n2"}}}, nil},
		{"a crash of n2", record.Trial{Injections: []record.Injection{{Node: "n2"}}, Nodes: []record.Node{{Name: "n2", Killed: true, Exited: true}}}, []string{"n2"}},
		{"a disconnect: both ends", record.Trial{Injections: []record.Injection{{Node: "n3", Peer: "n1"}}}, []string{"n1", "n3"}},
		{"a split: its struck side and the callee", record.Trial{Injections: []record.Injection{{Node: "n4", Peer: "n1", Side: []string{"n2"}}}}, []string{"n1", "n2", "n4"}},
		{"replicas diverged after a crash of n2: every member", record.Trial{Injections: []record.Injection{{Node: "n2"}}, Verdicts: []record.Verdict{{Checker: "replicas", Failed: true, Symptom: "replicas diverged"}}}, nil},
		{"a hang after a crash of n2: n2 only", record.Trial{Injections: []record.Injection{{Node: "n2"}}, Verdicts: []record.Verdict{{Checker: "hang", Failed: true, Symptom: "no progress"}, {Checker: "replicas"}}}, []string{"n2"}},
		{"a node that died on its own", record.Trial{Injections: []record.Injection{{Node: "n1"}, {Node: "n1"}}, Nodes: []record.Node{{Name: "n1"}, {Name: "n3", Exited: true}}}, []string{"n1", "n3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hitMembers(&tc.tr); !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("hitMembers = %q, want %q", got, tc.want)
			}
		})
	}
}

// content is a fake file: data random bytes, then zeros zero bytes (as a
// preallocated segment's unused tail).
type content struct{ data, zeros int64 }

const mb = 1 << 20

func TestPackRestore(t *testing.T) {
	logs := []string{"n1.log", "n2.log", "workload.log"}
	for _, tc := range []struct {
		name  string
		files map[string]content
		full  []string
		// maxArchive bounds the archive; omitted are the files whose
		// bytes it must not keep.
		maxArchive int64
		omitted    []string
	}{
		{
			name:       "a preallocated 64 MB WAL segment costs bytes",
			files:      map[string]content{"n1/member/wal/1.wal": {0, 64 * mb}},
			full:       []string{"n1"},
			maxArchive: 4 << 10,
		},
		{
			name: "the hit member whole, the other's file list only",
			files: map[string]content{
				"n1/member/wal/0.wal":   {8 << 10, 64*mb - 8<<10},
				"n1/member/snap/db":     {100 << 10, 0},
				"n1/member/wal/0.tmp":   {0, 0},
				"n2/member/wal/0.wal":   {mb, 63 * mb},
				"n2/member/snap/db":     {100 << 10, 0},
				"n3/member/wal/0.wal":   {mb, 0},
				"n1/member/wal/lock/ro": {3, 5},
			},
			full:       []string{"n1"},
			maxArchive: 200 << 10,
			omitted:    []string{"n2/member/wal/0.wal", "n2/member/snap/db", "n3/member/wal/0.wal"},
		},
		{
			name:       "nothing hit: every member whole",
			files:      map[string]content{"n1/a": {10, 10}, "n2/b": {20, 0}},
			maxArchive: 4 << 10,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rnd := rand.New(rand.NewPCG(1, 2))
			want := map[string][]byte{}
			for name, c := range tc.files {
				data := make([]byte, c.data)
				for i := range data {
					data[i] = byte(rnd.IntN(255) + 1)
				}
				want[name] = data
				writeFake(t, filepath.Join(dir, name), data, c.data+c.zeros)
			}
			for _, l := range logs {
				if err := os.WriteFile(filepath.Join(dir, l), []byte("log of "+l), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := packTrial(dir, tc.full)
			if err != nil {
				t.Fatal(err)
			}
			if p.Archive <= 0 || p.Archive > tc.maxArchive {
				t.Errorf("archive is %d bytes, want at most %d", p.Archive, tc.maxArchive)
			}
			if p.Files != len(tc.files) {
				t.Errorf("packed %d files, want %d", p.Files, len(tc.files))
			}
			if holds := holdsData(dir); !holds {
				t.Error("a packed trial dir does not count as holding data")
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.IsDir() {
					t.Errorf("data dir %s left after packing", e.Name())
				}
			}
			for _, l := range logs { // reports read them in place
				if _, err := os.Stat(filepath.Join(dir, l)); err != nil {
					t.Errorf("log %s gone: %v", l, err)
				}
			}

			dest := filepath.Join(t.TempDir(), "restored")
			res, err := Restore(dir, dest)
			if err != nil {
				t.Fatal(err)
			}
			for name, c := range tc.files {
				path := filepath.Join(dest, filepath.FromSlash(name))
				if slices.Contains(tc.omitted, name) {
					if n, ok := res.Omitted[name]; !ok || n != c.data+c.zeros {
						t.Errorf("%s: Omitted has %d (%v), want its length %d", name, n, ok, c.data+c.zeros)
					}
					if _, err := os.Stat(path); !os.IsNotExist(err) {
						t.Errorf("%s: an omitted file was made (%v)", name, err)
					}
					continue
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if int64(len(got)) != c.data+c.zeros || !bytes.Equal(got[:c.data], want[name]) || !isZeros(got[c.data:]) {
					t.Errorf("%s: restored %d bytes, not byte-exact (want %d data bytes then %d zeros)", name, len(got), c.data, c.zeros)
				}
			}
			if len(res.Files) != len(tc.files)-len(tc.omitted) || len(res.Omitted) != len(tc.omitted) {
				t.Errorf("restored %d files and %d omitted, want %d and %d", len(res.Files), len(res.Omitted), len(tc.files)-len(tc.omitted), len(tc.omitted))
			}
			for _, l := range logs {
				if got, err := os.ReadFile(filepath.Join(dest, l)); err != nil || string(got) != "log of "+l {
					t.Errorf("restored log %s = %q, %v", l, got, err)
				}
			}
		})
	}
}

func TestRestoreWithoutPack(t *testing.T) {
	if _, err := Restore(t.TempDir(), t.TempDir()); err == nil {
		t.Error("Restore of a trial dir with no pack: want an error")
	}
}

func TestDataLength(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want int64
	}{
		{nil, 0},
		{make([]byte, 3*mb+5), 0},
		{[]byte{0, 1, 0, 0}, 2},
		{append(append(make([]byte, mb+7), 9), make([]byte, 2*mb)...), mb + 8},
		{[]byte{1, 2, 3}, 3},
	} {
		if got, err := dataLength(bytes.NewReader(tc.in)); err != nil || got != tc.want {
			t.Errorf("dataLength(%d bytes) = %d, %v; want %d", len(tc.in), got, err, tc.want)
		}
	}
}

// writeFake writes data and extends the file to size with a hole (as
// etcd's preallocation leaves zeros).
func writeFake(t *testing.T, path string, data []byte, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func isZeros(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// TestRestoreStaysInside: no entry of a pack, by its name or through a
// symlink, writes outside the destination.
func TestRestoreStaysInside(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name    string
		entries []tar.Header
	}{
		{"a name with ..", []tar.Header{{Name: "../escaped", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}}},
		{"through a symlink", []tar.Header{
			{Name: "n1/", Typeflag: tar.TypeDir, Mode: 0o755},
			{Name: "n1/out", Typeflag: tar.TypeSymlink, Linkname: outside},
			{Name: "n1/out/escaped", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			for _, h := range tc.entries {
				if err := tw.WriteHeader(&h); err != nil {
					t.Fatal(err)
				}
				if h.Size > 0 {
					tw.Write([]byte("x"))
				}
			}
			tw.Close()
			zw.Close()
			dest := filepath.Join(t.TempDir(), "d")
			if err := os.MkdirAll(dest, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := unpack(&buf, dest); err == nil {
				t.Error("unpack: want an error")
			}
			for _, p := range []string{filepath.Join(filepath.Dir(dest), "escaped"), filepath.Join(outside, "escaped")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
		})
	}
}
