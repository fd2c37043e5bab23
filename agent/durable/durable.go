// Package durable models what a node's data dir holds after a power loss,
// without FUSE and without root. The agent keeps an Image of the data dir:
// at every fsync/fdatasync it is told of, it records every file (path,
// inode, size) and every directory, and keeps a hard link to each inode
// in a shadow directory beside the data dir, so that a file renamed over
// or removed later is still there. RollBack, run by the cluster runner
// between the kill and the restart, turns the data dir back into the last
// recorded image:
//
//   - a file created since the last sync is removed (its directory entry
//     was never synced);
//   - a file that grew since the last sync is cut back to its synced size
//     (appends since the last sync are lost);
//   - what a sequential writer wrote since the last sync inside the synced
//     size — a log appending into preallocated space, as etcd's WAL does —
//     is zeroed, as such an unsynced write into preallocated (zeroed) space
//     reads back after a power loss: the image records the largest offset
//     of the process's descriptors on each file when zeros follow it (the
//     unwritten space; a descriptor in the middle of data is a reader),
//     and the runner records them again on the stopped process before the
//     kill (RecordCrash), so the bytes between are the unsynced appends
//     (Linux: /proc/PID/fdinfo);
//   - a rename or removal since the last sync is undone (the inode is
//     linked back under its old name);
//   - an overwrite since the last sync of bytes that were synced — in
//     place, through any descriptor, pwrite included — is undone in the
//     files of at most CopyLimit bytes (metadata, small snapshots, the
//     segments of a small log): the image keeps a copy of each such
//     file's synced bytes, and the synced prefix reads back as it was.
//
// Every sync the agent sees records the whole data dir, not only the file
// synced: the model loses at most what a real power loss can lose, never
// more, so a lost acknowledged write it shows is a real bug. It does not
// undo overwrites at offsets a descriptor does not move over (pwrite, as
// bbolt writes its pages; a file written through a descriptor closed
// before the crash keeps its unsynced bytes), and a sync it is not told of
// (a sync call that is no fault site) is not seen: files whose syncs are
// not instrumented must be left out of the rollback (Scope).
//
// The package depends on the standard library only.
package durable

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// CopyLimit is the largest file whose synced bytes an image copies, so
// that a RollBack undoes unsynced overwrites of them.
const CopyLimit = 64 << 10

// copySuffix names an inode's copy in the shadow directory: "<ino>.bytes".
const copySuffix = ".bytes"

// ShadowSuffix is appended to a data dir's path to name its shadow
// directory, which holds the image's manifest and its inodes' links. It is
// a sibling of the data dir, so on the same file system.
const ShadowSuffix = ".gofault-durable"

// manifestName is the image's manifest inside the shadow directory.
const manifestName = "manifest"

// entry is one file or directory of an image.
type entry struct {
	dir  bool
	ino  uint64
	size int64
	// pos is the largest offset of the process's descriptors on the file
	// when the image was recorded, -1 when none was open (positions).
	pos int64
	rel string // slash-separated path relative to the data dir
}

// Image records the durable state of one data dir. Its methods are safe
// for concurrent use.
type Image struct {
	dir    string
	shadow string
	// real is dir with symlinks resolved, as /proc names open files.
	real string

	mu     sync.Mutex
	linked map[uint64]bool // inodes with a link in the shadow directory
	// copied holds the bytes of each inode whose copy is in the shadow
	// directory, as copied (files of at most CopyLimit bytes).
	copied map[uint64][]byte
	err    error // the first error; the image stops recording
}

// NewImage returns the image of data dir dir and records its current state
// (what is there when the process starts is durable).
func NewImage(dir string) (*Image, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	im := &Image{dir: abs, shadow: abs + ShadowSuffix, linked: map[uint64]bool{}, copied: map[uint64][]byte{}}
	if err := os.MkdirAll(im.shadow, 0o755); err != nil {
		return nil, err
	}
	if im.real, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, err
	}
	// Links left by an earlier process of the node are kept: they are
	// what its manifest names until this process records its own.
	des, err := os.ReadDir(im.shadow)
	if err != nil {
		return nil, err
	}
	for _, de := range des {
		if n, err := strconv.ParseUint(de.Name(), 10, 64); err == nil {
			im.linked[n] = true
		}
		if strings.HasSuffix(de.Name(), copySuffix) {
			// An earlier process's copies: this one copies afresh.
			if err := os.Remove(filepath.Join(im.shadow, de.Name())); err != nil {
				return nil, err
			}
		}
	}
	if err := im.Synced(); err != nil {
		return nil, err
	}
	return im, nil
}

// Synced records that the program is about to sync something under the
// data dir: the data dir as it is now is durable. It returns the error
// that stopped recording, if any. Once an error occurred it records
// nothing more and removes the manifest: an older image could lack what
// later syncs made durable, so without a current one RollBack changes
// nothing and a power loss is a plain crash.
func (im *Image) Synced() error {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.err != nil {
		return im.err
	}
	if err := im.record(); err != nil {
		im.err = err
		if rerr := os.Remove(filepath.Join(im.shadow, manifestName)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			im.err = fmt.Errorf("%w (and removing the stale manifest: %v)", err, rerr)
		}
	}
	return im.err
}

// RecordCrash records, just before process pid (stopped, or about to be
// killed) loses power, how far its descriptors have written into each file
// of data dir dir: RollBack zeroes what a sequential writer wrote since the
// image. It reads /proc/PID (Linux); elsewhere, or without a manifest, it
// records nothing and such appends are kept.
func RecordCrash(pid int, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	return appendCrash(abs+ShadowSuffix, positions(strconv.Itoa(pid), real))
}

// appendCrash appends the crash offsets to the manifest in shadow; the
// next image of a restarted process writes a manifest without them.
func appendCrash(shadow string, pos map[uint64]int64) error {
	if len(pos) == 0 {
		return nil
	}
	var b strings.Builder
	for ino, p := range pos {
		fmt.Fprintf(&b, "c %d %d\n", ino, p)
	}
	f, err := os.OpenFile(filepath.Join(shadow, manifestName), os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no image: RollBack changes nothing anyway
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (im *Image) record() error {
	var ents []entry
	pos := positions("self", im.real)
	err := filepath.WalkDir(im.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed under the walk
			}
			return err
		}
		if p == im.dir {
			return nil
		}
		rel, err := filepath.Rel(im.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			ents = append(ents, entry{dir: true, rel: rel})
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		ino, ok := inode(info)
		if !ok {
			return errors.New("durable: no inode numbers on this system")
		}
		if !im.linked[ino] {
			if err := os.Link(p, filepath.Join(im.shadow, strconv.FormatUint(ino, 10))); err != nil && !errors.Is(err, fs.ErrExist) {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			im.linked[ino] = true
		}
		at, open := pos[ino]
		if !open || (at < info.Size() && !unwritten(p, at)) {
			// No descriptor, or one that is not at the end of what was
			// written (a reader in the middle of synced data): its later
			// offset would say nothing about unsynced appends.
			at = -1
		}
		if err := im.copyBytes(p, ino, info.Size()); err != nil {
			return err
		}
		ents = append(ents, entry{ino: ino, size: info.Size(), pos: at, rel: rel})
		return nil
	})
	if err != nil {
		return err
	}
	if err := writeManifest(im.shadow, ents); err != nil {
		return err
	}
	// Drop the links no image names any more.
	keep := make(map[uint64]bool, len(ents))
	for _, e := range ents {
		if !e.dir {
			keep[e.ino] = true
		}
	}
	for ino := range im.linked {
		if !keep[ino] {
			os.Remove(filepath.Join(im.shadow, strconv.FormatUint(ino, 10)))
			delete(im.linked, ino)
		}
	}
	for ino := range im.copied {
		if !keep[ino] {
			os.Remove(filepath.Join(im.shadow, strconv.FormatUint(ino, 10)+copySuffix))
			delete(im.copied, ino)
		}
	}
	return nil
}

// copyBytes keeps in the shadow directory a copy of the bytes of file p
// (inode ino, size bytes), when it holds at most CopyLimit, and they
// changed since the last copy; a larger file's copy is removed.
func (im *Image) copyBytes(p string, ino uint64, size int64) error {
	name := filepath.Join(im.shadow, strconv.FormatUint(ino, 10)+copySuffix)
	if size > CopyLimit {
		if _, ok := im.copied[ino]; ok {
			delete(im.copied, ino)
			if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed under the walk
	}
	if err != nil {
		return err
	}
	if old, ok := im.copied[ino]; ok && string(old) == string(b) {
		return nil
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	im.copied[ino] = b
	return nil
}

// revertOverwrites writes back, in file p of image entry e, the synced
// bytes that were overwritten since the image, from the inode's copy (if
// the image kept one of that size).
func revertOverwrites(shadow, p string, e entry, st *Stats) error {
	synced, err := os.ReadFile(filepath.Join(shadow, strconv.FormatUint(e.ino, 10)+copySuffix))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if int64(len(synced)) != e.size {
		return nil // a copy of another state of the inode
	}
	now, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	first, last := Overwritten(synced, now)
	if first < 0 {
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("durable: revert overwrites of %s: %w", e.rel, err)
	}
	if _, err := f.WriteAt(synced[first:last], int64(first)); err != nil {
		f.Close()
		return fmt.Errorf("durable: revert overwrites of %s: %w", e.rel, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("durable: revert overwrites of %s: %w", e.rel, err)
	}
	st.Reverted++
	st.RevertedBytes += int64(last - first)
	return nil
}

// Overwritten returns the range [first, last) of the synced bytes that
// differ from the bytes now in the file (its prefix of the same length;
// bytes the file lost by a truncation count as differing), or -1, -1 when
// none does. Pure: the decision of revertOverwrites.
func Overwritten(synced, now []byte) (first, last int) {
	first, last = -1, -1
	for i := range synced {
		if i >= len(now) || synced[i] != now[i] {
			if first < 0 {
				first = i
			}
			last = i + 1
		}
	}
	return first, last
}

// writeManifest replaces the manifest atomically (a kill never leaves half
// of one; the page cache survives a kill, so no fsync is needed).
func writeManifest(shadow string, ents []entry) error {
	var b strings.Builder
	for _, e := range ents {
		if e.dir {
			fmt.Fprintf(&b, "d %s\n", strconv.Quote(e.rel))
		} else {
			fmt.Fprintf(&b, "f %d %d %d %s\n", e.ino, e.size, e.pos, strconv.Quote(e.rel))
		}
	}
	tmp := filepath.Join(shadow, manifestName+".tmp")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(shadow, manifestName))
}

// unwritten says whether the bytes of file p just past offset off read as
// zeros: the unwritten, preallocated space a sequential writer appends
// into. A descriptor at an offset followed by data is a reader (or a
// writer overwriting), whose later offset is no measure of appends.
func unwritten(p string, off int64) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	for _, b := range buf[:n] {
		if b != 0 {
			return false
		}
	}
	return true
}

// readManifest returns the image's entries and the offsets Crashing
// recorded (by inode; nil when none).
func readManifest(shadow string) ([]entry, map[uint64]int64, error) {
	f, err := os.Open(filepath.Join(shadow, manifestName))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var ents []entry
	var crashed map[uint64]int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		bad := fmt.Errorf("durable: bad manifest line %q", line)
		var e entry
		var q string
		switch {
		case strings.HasPrefix(line, "d "):
			e.dir, q = true, line[2:]
		case strings.HasPrefix(line, "f "):
			parts := strings.SplitN(line[2:], " ", 4)
			if len(parts) != 4 {
				return nil, nil, bad
			}
			if e.ino, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
				return nil, nil, bad
			}
			if e.size, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
				return nil, nil, bad
			}
			if e.pos, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
				return nil, nil, bad
			}
			q = parts[3]
		case strings.HasPrefix(line, "c "):
			var ino uint64
			var p int64
			if _, err := fmt.Sscanf(line, "c %d %d", &ino, &p); err != nil {
				return nil, nil, bad
			}
			if crashed == nil {
				crashed = map[uint64]int64{}
			}
			crashed[ino] = p
			continue
		default:
			return nil, nil, bad
		}
		if e.rel, err = strconv.Unquote(q); err != nil || !fs.ValidPath(e.rel) {
			return nil, nil, bad
		}
		ents = append(ents, e)
	}
	return ents, crashed, sc.Err()
}

// Stats says what a RollBack changed.
type Stats struct {
	Removed   int // files created since the last sync, removed
	Truncated int // files cut back to their synced size
	Restored  int // names linked back (renames and removals undone)
	// Zeroed counts the files whose appends since the last sync inside
	// their synced size were zeroed, ZeroedBytes the bytes.
	Zeroed      int
	ZeroedBytes int64
	// Reverted counts the files whose synced bytes overwritten since the
	// last sync were written back, RevertedBytes the span written.
	Reverted      int
	RevertedBytes int64
}

// Scope says which files of the data dir a RollBack may change: those
// whose slash-separated path relative to the data dir matches one of the
// path.Match patterns (a pattern matches a directory's files too: "wal"
// covers "wal/0001.log"). An empty Scope covers every file.
type Scope []string

func (s Scope) covers(rel string) bool {
	if len(s) == 0 {
		return true
	}
	for _, p := range s {
		for r := rel; r != "." && r != ""; r = path.Dir(r) {
			if ok, _ := path.Match(p, r); ok {
				return true
			}
		}
	}
	return false
}

// RollBack turns data dir dir, whose process has been killed, back into
// its last recorded image (the package comment says how), changing only
// the files in scope. Without a manifest (no agent recorded one) it
// changes nothing.
func RollBack(dir string, scope Scope) (Stats, error) {
	var st Stats
	abs, err := filepath.Abs(dir)
	if err != nil {
		return st, err
	}
	shadow := abs + ShadowSuffix
	ents, crashed, err := readManifest(shadow)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	want := map[string]entry{}
	for _, e := range ents {
		if !e.dir && scope.covers(e.rel) {
			want[e.rel] = e
		}
	}
	// Remove every file in scope that is not the recorded inode under its
	// recorded name; the shadow keeps each recorded inode alive.
	var gone []string
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == abs {
			return err
		}
		rel, err := filepath.Rel(abs, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !scope.covers(rel) {
			return nil
		}
		if e, ok := want[rel]; ok && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				if ino, ok := inode(info); ok && ino == e.ino {
					if err := zeroAppends(p, e, crashed, &st); err != nil {
						return err
					}
					if err := revertOverwrites(shadow, p, e, &st); err != nil {
						return err
					}
					if info.Size() > e.size {
						if err := os.Truncate(p, e.size); err != nil {
							return err
						}
						st.Truncated++
					}
					delete(want, rel)
					return nil
				}
			}
		}
		gone = append(gone, p)
		return nil
	})
	if err != nil {
		return st, err
	}
	for _, p := range gone {
		if err := os.Remove(p); err != nil {
			return st, err
		}
		rel, _ := filepath.Rel(abs, p)
		if _, ok := want[filepath.ToSlash(rel)]; !ok {
			st.Removed++
		}
	}
	for _, e := range ents {
		if e.dir {
			if err := os.MkdirAll(filepath.Join(abs, filepath.FromSlash(e.rel)), 0o755); err != nil {
				return st, err
			}
		}
	}
	for _, e := range want {
		p := filepath.Join(abs, filepath.FromSlash(e.rel))
		if err := os.Link(filepath.Join(shadow, strconv.FormatUint(e.ino, 10)), p); err != nil {
			return st, fmt.Errorf("durable: restore %s: %w", e.rel, err)
		}
		st.Restored++
		if err := zeroAppends(p, e, crashed, &st); err != nil {
			return st, err
		}
		if err := revertOverwrites(shadow, p, e, &st); err != nil {
			return st, err
		}
		info, err := os.Stat(p)
		if err != nil {
			return st, err
		}
		if info.Size() > e.size {
			if err := os.Truncate(p, e.size); err != nil {
				return st, err
			}
			st.Truncated++
		}
	}
	return st, nil
}

// zeroAppends zeroes, in file p of image entry e, what a sequential writer
// wrote since the image inside the synced size: from the offset its
// descriptors had reached when the image was recorded to the one they
// had reached at the crash.
func zeroAppends(p string, e entry, crashed map[uint64]int64, st *Stats) error {
	end, ok := crashed[e.ino]
	if !ok || e.pos < 0 {
		return nil
	}
	end = min(end, e.size)
	if end <= e.pos {
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("durable: zero unsynced appends of %s: %w", e.rel, err)
	}
	zeros := make([]byte, min(end-e.pos, 1<<20))
	for off := e.pos; off < end; off += int64(len(zeros)) {
		n := min(int64(len(zeros)), end-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			f.Close()
			return fmt.Errorf("durable: zero unsynced appends of %s: %w", e.rel, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("durable: zero unsynced appends of %s: %w", e.rel, err)
	}
	st.Zeroed++
	st.ZeroedBytes += end - e.pos
	return nil
}
