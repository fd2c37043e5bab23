package agent

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/agent/wire"
)

func TestCorruptBytes(t *testing.T) {
	cases := []struct {
		name    string
		n       int
		pick    uint64
		off     int
		bit     int // 1-based, 0: a sector
		changed int // bytes that differ
	}{
		{"empty read", 0, 6, -1, 0, 0},
		{"bit 0 of byte 0", 100, 0, 0, 1, 1},
		{"bit 3 of byte 1", 100, (8 + 3) << 1, 1, 4, 1},
		{"bit index wraps", 2, (16 + 9) << 1, 1, 2, 1},
		{"first sector of one", 100, 1, 0, 0, -1},
		{"second sector", 2048, 1 | 1<<1, 512, 0, -1},
		{"short last sector", 600, 1 | 1<<1, 512, 0, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := make([]byte, c.n)
			for i := range buf {
				buf[i] = byte(i * 7)
			}
			old := bytes.Clone(buf)
			off, bit := CorruptBytes(buf, c.pick)
			if off != c.off || bit != c.bit {
				t.Fatalf("CorruptBytes = (%d, %d), want (%d, %d)", off, bit, c.off, c.bit)
			}
			diff, first, last := 0, -1, -1
			for i := range buf {
				if buf[i] != old[i] {
					diff++
					if first < 0 {
						first = i
					}
					last = i
				}
			}
			switch {
			case c.changed >= 0 && diff != c.changed:
				t.Errorf("%d bytes changed, want %d", diff, c.changed)
			case c.changed < 0 && (diff == 0 || first < off || last >= off+SectorSize):
				t.Errorf("bytes %d..%d changed (%d), want some within the sector at %d", first, last, diff, off)
			}
			if bit > 0 && buf[off]^old[off] != 1<<(bit-1) {
				t.Errorf("byte %d: %08b → %08b, want bit %d flipped", off, old[off], buf[off], bit-1)
			}
			again := bytes.Clone(old)
			if o2, b2 := CorruptBytes(again, c.pick); o2 != off || b2 != bit || !bytes.Equal(again, buf) {
				t.Errorf("the same pick changed other bytes: not replayable")
			}
		})
	}
}

func TestCorruptBytesSectorAlwaysChanges(t *testing.T) {
	// Whatever the old bytes, a sector change changes something.
	for pick := uint64(1); pick < 200; pick += 2 {
		buf := []byte{0}
		x := (pick >> 1) | 1
		buf[0] = byte(splitmix(x)) // the byte the draw would write
		old := buf[0]
		CorruptBytes(buf, pick)
		if buf[0] == old {
			t.Fatalf("pick %d left the sector as it was", pick)
		}
	}
}

func TestTornLength(t *testing.T) {
	cases := []struct {
		name string
		off  int64
		n    int
		pick uint64
		want int
	}{
		{"empty write", 0, 0, 3, 0},
		{"inside one sector", 0, 512, 5, 0},
		{"inside one sector, unaligned", 100, 300, 5, 0},
		{"two sectors: the only cut", 0, 1024, 7, 512},
		{"three sectors, pick 0", 0, 1500, 0, 512},
		{"three sectors, pick 1", 0, 1500, 1, 1024},
		{"three sectors, pick wraps", 0, 1500, 2, 512},
		{"unaligned start cuts at the file's boundary", 100, 1000, 0, 412},
		{"unaligned start, second cut", 100, 1000, 1, 924},
		{"crossing one boundary", 500, 100, 9, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := TornLength(c.off, c.n, c.pick)
			if got != c.want {
				t.Fatalf("TornLength(%d, %d, %d) = %d, want %d", c.off, c.n, c.pick, got, c.want)
			}
			if got > 0 && ((c.off+int64(got))%SectorSize != 0 || got >= c.n) {
				t.Fatalf("cut %d is not a sector boundary inside the write", got)
			}
		})
	}
}

func TestDiskDecisions(t *testing.T) {
	tests := []struct {
		name   string
		answer func(*wire.Request) (wire.Response, bool)
		site   uint32
		k      int
		pick   uint64
	}{
		{"corrupt with its pick", always(wire.ActCorrupt, 77), 70, DiskFault, 77},
		{"tear with its pick", always(wire.ActTear, 5), 70, DiskFault, 5},
		{"rot with its pick", always(wire.ActRot, 9), 70, DiskFault, 9},
		{"an error as at Fault", always(wire.ActError, 2), 70, 2, 0},
		{"none", always(wire.ActNone, 0), 70, 0, 0},
		{"site not live never asks", always(wire.ActCorrupt, 1), 71, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, wire.Plan{Sites: []uint32{70}}, tt.answer)
			attach(t, f)
			if k, p := Disk(tt.site); k != tt.k || p != tt.pick {
				t.Fatalf("Disk(%d) = %d, %d, want %d, %d", tt.site, k, p, tt.k, tt.pick)
			}
		})
	}
}

// TestRotten: a write site told to rot gets its bytes back whole, with
// the bit its pick chooses flipped, in a copy (the caller's buffer is
// the program's); a site told to tear gets nothing (the Tear functions
// then cut the write).
func TestRotten(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{70, 72}}, func(r *wire.Request) (wire.Response, bool) {
		if r.Site == 72 {
			return wire.Response{Action: wire.ActRot, Arg: 3 << 1}, true // bit 3 of byte 0
		}
		return wire.Response{Action: wire.ActTear, Arg: 3 << 1}, true
	})
	attach(t, f)
	defer rots.Delete(uint32(72))
	b := []byte("0123456789")
	for _, site := range []uint32{70, 72} {
		if k, _ := Disk(site); k != DiskFault {
			t.Fatalf("Disk(%d) = %d, want DiskFault", site, k)
		}
	}
	if r, _, _ := rotten(70, b, 3<<1); r != nil {
		t.Errorf("a torn site rotted: %q", r)
	}
	r, off, bit := rotten(72, b, 3<<1)
	if len(r) != len(b) || off != 0 || bit != 4 || r[0] != '0'^1<<3 || string(r[1:]) != "123456789" {
		t.Errorf("rotten = %q, %d, %d; want byte 0's bit 3 flipped", r, off, bit)
	}
	if string(b) != "0123456789" {
		t.Errorf("the program's buffer changed: %q", b)
	}
}

func TestCorruptReportsWhatChanged(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{70}}, always(wire.ActCorrupt, 0))
	attach(t, f)
	buf := make([]byte, 10)
	Corrupt(70, buf, "/d/wal.log", 3<<1) // bit 3 of byte 0
	if buf[0] != 1<<3 {
		t.Fatalf("buf[0] = %08b, want bit 3 set", buf[0])
	}
	waitFor(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, e := range f.events {
			if e.Kind == wire.EvDisk && e.A == 70 && e.B == 10 && e.C == 0 && e.D == 4|1<<8 && string(e.Data) == "/d/wal.log" {
				return true
			}
		}
		return false
	})
}

func TestWriteOffset(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		flag int
		seek int64
		want int64
	}{
		{"appending: the file's end, whatever the offset", os.O_APPEND, 0, 700},
		{"in place: the descriptor's offset", 0, 100, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			if err := os.WriteFile(p, make([]byte, 700), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_WRONLY|c.flag, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Seek(c.seek, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			if got := writeOffset(f); got != c.want {
				t.Fatalf("writeOffset = %d, want %d", got, c.want)
			}
		})
	}
}

// BenchmarkDiskNotCandidate is BenchmarkHookNotCandidate for the disk
// hook, which a read or write site that can be corrupted or torn calls in
// every campaign.
func BenchmarkDiskNotCandidate(b *testing.B) {
	current.Store(newPlan(&wire.Plan{Sites: []uint32{3, 64, 700, 4095}}))
	defer current.Store(emptyPlan)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k, p := Disk(1000)
		sink += k + int(p)
	}
}

// TestCorruptArmedUntilBytesRead runs reads at a live site whose first
// decision grants a corrupt fault (later ones grant nothing), as the
// generated code does, and checks which read the fault changed, that the
// site asked only once, and what was reported.
func TestCorruptArmedUntilBytesRead(t *testing.T) {
	tests := []struct {
		name    string
		lengths []int // the bytes each read returns
		changed int   // the read (from 1) whose bytes changed; 0 for none
		asked   int   // decisions asked: none while the fault is armed
		events  []wire.Event
	}{
		{"bytes at the granted read", []int{10, 10}, 1, 2,
			[]wire.Event{{A: 70, B: 10, C: 0, D: 4 | 1<<8}}},
		{"armed over empty reads", []int{0, 0, 10, 10}, 3, 2,
			[]wire.Event{{A: 70, B: 0}, {A: 70, B: 10, C: 0, D: 4 | 3<<8}}},
		{"never any bytes", []int{0, 0, 0}, 0, 1,
			[]wire.Event{{A: 70, B: 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			granted := false
			f := newFake(t, wire.Plan{Sites: []uint32{70}}, func(*wire.Request) (wire.Response, bool) {
				if granted {
					return wire.Response{}, true
				}
				granted = true
				return wire.Response{Action: wire.ActCorrupt, Arg: 3 << 1}, true // bit 3 of byte 0
			})
			attach(t, f)
			changed := 0
			for i, n := range tt.lengths {
				buf := make([]byte, n)
				if k, pick := Disk(70); k == DiskFault {
					Corrupt(70, buf, "", pick)
				}
				if !bytes.Equal(buf, make([]byte, n)) {
					if changed != 0 {
						t.Fatalf("reads %d and %d both changed", changed, i+1)
					}
					changed = i + 1
				}
			}
			if changed != tt.changed {
				t.Errorf("read %d changed, want %d", changed, tt.changed)
			}
			if n := f.nRequests(); n != tt.asked {
				t.Errorf("%d requests, want %d (an armed fault does not ask again)", n, tt.asked)
			}
			var got []wire.Event
			waitFor(t, func() bool {
				f.mu.Lock()
				defer f.mu.Unlock()
				got = got[:0]
				for _, e := range f.events {
					if e.Kind == wire.EvDisk {
						got = append(got, wire.Event{A: e.A, B: e.B, C: e.C, D: e.D})
					}
				}
				return len(got) >= len(tt.events)
			})
			if len(got) != len(tt.events) {
				t.Fatalf("reported %+v, want %+v", got, tt.events)
			}
			for i := range got {
				if g, w := got[i], tt.events[i]; g.A != w.A || g.B != w.B || g.C != w.C || g.D != w.D {
					t.Errorf("report %d = %+v, want %+v", i, got[i], tt.events[i])
				}
			}
		})
	}
}

// TestCorruptArmedFailsOpen: an armed fault does nothing once the
// controller is gone.
func TestCorruptArmedFailsOpen(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{70}}, always(wire.ActCorrupt, 3<<1))
	c := attach(t, f)
	if k, pick := Disk(70); k == DiskFault {
		Corrupt(70, nil, "", pick) // nothing read: armed
	}
	if _, ok := armedPick(70); !ok {
		t.Fatal("not armed after an empty read")
	}
	c.close()
	if k, _ := Disk(70); k != 0 {
		t.Fatalf("Disk(70) = %d with no controller, want 0", k)
	}
}
