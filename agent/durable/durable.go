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
//   - a rename or removal since the last sync is undone (the inode is
//     linked back under its old name).
//
// Every sync the agent sees records the whole data dir, not only the file
// synced: the model loses at most what a real power loss can lose, never
// more, so a lost acknowledged write it shows is a real bug. It does not
// undo overwrites inside a file's synced size (a preallocated log written
// in place keeps its unsynced bytes), and a sync it is not told of (a sync
// call that is no fault site) is not seen: files whose syncs are not
// instrumented must be left out of the rollback (Scope).
//
// The package depends on the standard library only.
package durable

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

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
	rel  string // slash-separated path relative to the data dir
}

// Image records the durable state of one data dir. Its methods are safe
// for concurrent use.
type Image struct {
	dir    string
	shadow string

	mu     sync.Mutex
	linked map[uint64]bool // inodes with a link in the shadow directory
	err    error           // the first error; the image stops recording
}

// NewImage returns the image of data dir dir and records its current state
// (what is there when the process starts is durable).
func NewImage(dir string) (*Image, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	im := &Image{dir: abs, shadow: abs + ShadowSuffix, linked: map[uint64]bool{}}
	if err := os.MkdirAll(im.shadow, 0o755); err != nil {
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

func (im *Image) record() error {
	var ents []entry
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
		ents = append(ents, entry{ino: ino, size: info.Size(), rel: rel})
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
	return nil
}

// writeManifest replaces the manifest atomically (a kill never leaves half
// of one; the page cache survives a kill, so no fsync is needed).
func writeManifest(shadow string, ents []entry) error {
	var b strings.Builder
	for _, e := range ents {
		if e.dir {
			fmt.Fprintf(&b, "d %s\n", strconv.Quote(e.rel))
		} else {
			fmt.Fprintf(&b, "f %d %d %s\n", e.ino, e.size, strconv.Quote(e.rel))
		}
	}
	tmp := filepath.Join(shadow, manifestName+".tmp")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(shadow, manifestName))
}

func readManifest(shadow string) ([]entry, error) {
	f, err := os.Open(filepath.Join(shadow, manifestName))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ents []entry
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
			parts := strings.SplitN(line[2:], " ", 3)
			if len(parts) != 3 {
				return nil, bad
			}
			if e.ino, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
				return nil, bad
			}
			if e.size, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
				return nil, bad
			}
			q = parts[2]
		default:
			return nil, bad
		}
		if e.rel, err = strconv.Unquote(q); err != nil || !fs.ValidPath(e.rel) {
			return nil, bad
		}
		ents = append(ents, e)
	}
	return ents, sc.Err()
}

// Stats says what a RollBack changed.
type Stats struct {
	Removed   int // files created since the last sync, removed
	Truncated int // files cut back to their synced size
	Restored  int // names linked back (renames and removals undone)
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
	ents, err := readManifest(shadow)
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
