package agent

import (
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// Disk faults: a read that returns the real bytes with one bit flipped or
// one sector changed (corrupt), and a write of which only a prefix cut at
// a sector boundary reaches the file before the node crashes (torn). The
// controller's answer carries a pick, chosen by the campaign's policy from
// its seed, and the pure functions CorruptBytes and TornLength turn it
// into the change, so a replay with the same pick on a read of the same
// length changes the same bits. What was done is reported (wire.EvDisk).
//
// A corrupt fault granted at a read that returned no bytes (a missing or
// empty file, a read at the end) would change nothing: it stays armed in
// this process for the next read at the same site that returns bytes,
// which it changes with the same pick, without asking the controller
// again. Which read that was is reported, counting the granted one as 1.

// SectorSize is the unit of a torn write and of a changed sector.
const SectorSize = 512

// DiskFault is the result of Disk telling the generated code to carry out
// the disk fault (Corrupt after the real read, a Tear function instead of
// the real write).
const DiskFault = -1

// Disk is Fault at a file read or write whose bytes the hook can reach
// (catalog.DiskCallOf). It returns Fault's k, or DiskFault with the pick
// to pass on to Corrupt (after running the real read) or to a Tear
// function (instead of the real write).
func Disk(site uint32) (int, uint64) {
	if armed.n.Load() > 0 {
		if pick, ok := armedPick(site); ok {
			return DiskFault, pick
		}
	}
	p := current.Load()
	if w := site / 64; w >= uint32(len(p.bits)) || p.bits[w]&(1<<(site%64)) == 0 {
		if p.sync != nil {
			synced(site, p.sync)
		}
		return 0, 0
	}
	resp, c := ask(site, p, "", false)
	switch resp.Action {
	case wire.ActCorrupt:
		granted(site)
		return DiskFault, uint64(resp.Arg)
	case wire.ActTear:
		rots.Delete(site)
		return DiskFault, uint64(resp.Arg)
	case wire.ActRot:
		rots.Store(site, true)
		return DiskFault, uint64(resp.Arg)
	}
	k := act(c, resp, nil)
	if k == 0 && p.sync != nil {
		synced(site, p.sync)
	}
	return k, 0
}

// Corrupt alters buf, the bytes a read at site returned from file name
// ("" when unknown), as pick chooses (CorruptBytes), and reports it. When
// buf is empty it changes nothing and arms the fault for the site's next
// read (reported once, as a read of 0 bytes).
func Corrupt(site uint32, buf []byte, name string, pick uint64) {
	read, ok := corruptRead(site, pick, len(buf) == 0)
	switch {
	case !ok:
		return
	case len(buf) == 0:
		if read == 1 {
			report(site, 0, 0, 0, name)
		}
		return
	}
	off, bit := CorruptBytes(buf, pick)
	report(site, len(buf), off, bit|read<<8, name)
}

// armed holds the corrupt faults of this process that were granted at a
// read that returned no bytes, by site, until a read at the site returns
// some (or the process connects again).
var armed struct {
	n     atomic.Int32 // the armed faults not yet done: the hooks' fast path reads only this
	mu    sync.Mutex
	sites map[uint32]*armedRead
}

// armedRead is a corrupt fault at one site: its pick, the reads at the
// site since it was granted (that one included), and whether one of them
// changed bytes.
type armedRead struct {
	pick  uint64
	reads int
	done  bool
}

// armedPick returns the pick of the corrupt fault armed at site, if one
// is and the controller is still connected (fail-open).
func armedPick(site uint32) (uint64, bool) {
	armed.mu.Lock()
	defer armed.mu.Unlock()
	a := armed.sites[site]
	if a == nil || a.done || client.Load() == nil {
		return 0, false
	}
	return a.pick, true
}

// granted forgets an earlier corrupt fault at site, done or not, when the
// controller grants a new one there.
func granted(site uint32) {
	armed.mu.Lock()
	defer armed.mu.Unlock()
	if a := armed.sites[site]; a != nil {
		if !a.done {
			armed.n.Add(-1)
		}
		delete(armed.sites, site)
	}
}

// corruptRead counts a read at site that a corrupt fault with pick acts
// on, empty or not, and returns its number since the fault was granted
// (1 for the granted read); ok is false for a read that another one at
// the site has already corrupted (two goroutines that both found it armed).
func corruptRead(site uint32, pick uint64, empty bool) (read int, ok bool) {
	armed.mu.Lock()
	defer armed.mu.Unlock()
	a := armed.sites[site]
	switch {
	case a == nil:
		a = &armedRead{pick: pick}
		if armed.sites == nil {
			armed.sites = map[uint32]*armedRead{}
		}
		armed.sites[site] = a
		armed.n.Add(1)
	case a.done:
		return 0, false
	}
	a.reads++
	if !empty {
		a.done = true
		armed.n.Add(-1)
	}
	return a.reads, true
}

// resetArmed forgets every armed corrupt fault and every site told to
// rot: a new connection is a new trial's.
func resetArmed() {
	armed.mu.Lock()
	defer armed.mu.Unlock()
	armed.sites = nil
	armed.n.Store(0)
	rots.Range(func(k, _ any) bool { rots.Delete(k); return true })
}

// rots holds the write sites told to rot (wire.ActRot) rather than tear:
// their generated code calls the same Tear functions, which then write
// the bytes whole, changed. The process dies right after either.
var rots sync.Map // uint32 → bool

// rotten returns, for a write at site told to rot, a copy of b changed as
// pick chooses (CorruptBytes) and what was changed; for a torn write,
// nil.
func rotten(site uint32, b []byte, pick uint64) (out []byte, off, bit int) {
	if _, ok := rots.Load(site); !ok {
		return nil, 0, 0
	}
	out = slices.Clone(b)
	off, bit = CorruptBytes(out, pick)
	return out, off, bit
}

// TearWrite writes to w, in place of w.Write(b) at site, only the prefix of
// b that pick chooses (TornLength, from where the write lands in the file
// when w is an *os.File: its end when opened with O_APPEND, else its
// offset), reports it and waits to be killed. For a rot it writes b whole,
// changed (rotten), instead.
func TearWrite(site uint32, w io.Writer, b []byte, pick uint64) {
	var off int64
	name := ""
	if f, ok := w.(*os.File); ok {
		name = f.Name()
		off = writeOffset(f)
	}
	if r, at, bit := rotten(site, b, pick); r != nil {
		w.Write(r)
		rot(site, len(b), at, bit, name)
	}
	n := TornLength(off, len(b), pick)
	w.Write(b[:n]) // the node crashes next, whatever happened
	tear(site, len(b), n, name)
}

// writeOffset is the file offset a write on f lands at (0 when unknown).
func writeOffset(f *os.File) int64 {
	if appending(f) {
		if fi, err := f.Stat(); err == nil {
			return fi.Size()
		}
		return 0
	}
	if o, err := f.Seek(0, io.SeekCurrent); err == nil {
		return o
	}
	return 0
}

// WriterAtFunc is a function with WriteAt's signature as an io.WriterAt:
// the generated code passes a function value bound to a file's WriteAt
// (bolt's db.ops.writeAt) to TearWriteAt through it.
type WriterAtFunc func(p []byte, off int64) (int, error)

// WriteAt calls f.
func (f WriterAtFunc) WriteAt(p []byte, off int64) (int, error) { return f(p, off) }

// TearWriteAt writes to w, in place of w.WriteAt(b, off) at site, only the
// prefix of b that pick chooses, reports it and waits to be killed; for a
// rot, b whole, changed.
func TearWriteAt(site uint32, w io.WriterAt, b []byte, off int64, pick uint64) {
	name := ""
	if f, ok := w.(*os.File); ok {
		name = f.Name()
	}
	if r, at, bit := rotten(site, b, pick); r != nil {
		w.WriteAt(r, off)
		rot(site, len(b), at, bit, name)
	}
	n := TornLength(off, len(b), pick)
	w.WriteAt(b[:n], off) // the node crashes next, whatever happened
	tear(site, len(b), n, name)
}

// TearFile writes file name, in place of os.WriteFile(name, data, perm) at
// site, with only the prefix of data that pick chooses, reports it and
// waits to be killed; for a rot, with data whole, changed.
func TearFile(site uint32, name string, data []byte, perm fs.FileMode, pick uint64) {
	if r, at, bit := rotten(site, data, pick); r != nil {
		os.WriteFile(name, r, perm)
		rot(site, len(data), at, bit, name)
	}
	n := TornLength(0, len(data), pick)
	os.WriteFile(name, data[:n], perm) // the node crashes next, whatever happened
	tear(site, len(data), n, name)
}

// tear reports a torn write and blocks until the controller kills the
// process. Unlike a crash, it never returns into the program, which would
// then write the whole buffer after its torn prefix: without a
// controller the process kills itself.
func tear(site uint32, size, kept int, name string) {
	report(site, size, kept, 0, name)
	die()
}

// die blocks until the controller kills the process; without a
// controller the process kills itself.
func die() {
	if c := client.Load(); c != nil {
		c.awaitKill()
	}
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
	select {}
}

// rot reports a rotten write — size bytes, changed at off (bit: as
// CorruptBytes says) — and, as tear, blocks until the controller kills
// the process.
func rot(site uint32, size, off, bit int, name string) {
	report(site, size, off, bit, name)
	die()
}

// report sends the EvDisk event of a disk fault carried out.
func report(site uint32, size, off, bit int, name string) {
	c := client.Load()
	if c == nil {
		return
	}
	c.event(wire.Event{Kind: wire.EvDisk, Time: time.Now().UnixNano(), A: uint64(site),
		B: uint64(size), C: uint64(off), D: uint64(bit), Data: []byte(name)})
}

// CorruptBytes alters buf in place as pick chooses and returns what it
// changed: with pick's lowest bit clear, one bit is flipped — bit bit-1 of
// the byte at off —; with it set, the SectorSize bytes from off (a sector
// of the buffer, cut short at its end) are replaced by bytes drawn from
// pick, which differ from the old ones (bit is then 0). An empty buf is
// left alone (off is -1).
func CorruptBytes(buf []byte, pick uint64) (off, bit int) {
	if len(buf) == 0 {
		return -1, 0
	}
	r := pick >> 1
	if pick&1 == 0 {
		i := r % uint64(len(buf)*8)
		off, bit = int(i/8), int(i%8)
		buf[off] ^= 1 << bit
		return off, bit + 1
	}
	sectors := (len(buf) + SectorSize - 1) / SectorSize
	off = int(r%uint64(sectors)) * SectorSize
	end := min(off+SectorSize, len(buf))
	x := r | 1
	same := true
	for i := off; i < end; i++ {
		x = splitmix(x)
		if b := byte(x); b != buf[i] {
			buf[i], same = b, false
		}
	}
	if same {
		buf[off] ^= 0xff // the drawn bytes were the old ones: change one
	}
	return off, 0
}

// TornLength returns how many of the n bytes of a write at file offset off
// reach the file when it is torn as pick chooses: the length of a prefix
// that ends at a sector boundary of the file, shorter than the write. A
// write inside one sector keeps nothing.
func TornLength(off int64, n int, pick uint64) int {
	if n <= 0 {
		return 0
	}
	first := 0 // the first boundary after the write's start
	if r := int(off % SectorSize); r != 0 {
		first = SectorSize - r
	}
	if first == 0 {
		first = SectorSize
	}
	if first >= n {
		return 0
	}
	cuts := (n-1-first)/SectorSize + 1 // boundaries first, first+512, ... < n
	return first + int(pick%uint64(cuts))*SectorSize
}

// splitmix is one step of the SplitMix64 generator.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
