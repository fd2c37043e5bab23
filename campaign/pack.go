package campaign

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// Packing a failed trial's data dirs.
//
// An etcd member's data dir holds ~80 MB, most of it the zeros of
// preallocated WAL segments (64 MB each) and bbolt's free pages, so a
// failed trial that kept its data whole cost ~250 MB. Once judged, a
// failed trial's data dirs are packed into one gzip'd tar, PackName, in
// the trial dir, and removed; the logs (the trial dir's files) stay where
// they are, so reports read them as before.
//
//   - The members the trial's faults hit (hitMembers) are kept whole, but
//     the zeros that end a file (all of a preallocated segment, the unused
//     tail of the active one) are not stored: the entry holds the bytes up
//     to the last non-zero one and the PAX record paxSize the file's
//     length, and Restore extends the file to it as a sparse file.
//   - The other members keep their file list (names, sizes, modes, times)
//     but not the files' bytes: their entries carry paxOmitted.
//
// PackList, beside the archive, lists every file and what was kept of it,
// for people. gofault report --restore unpacks the archive (Restore).

const (
	// PackName is the archive of a failed trial's data dirs, in the trial
	// dir.
	PackName = "data.tar.gz"
	// PackList lists the archive's files and what was kept of each, in the
	// trial dir.
	PackList = "data.txt"
	// paxSize is the PAX record that holds a file's length when its entry
	// holds fewer bytes (the zeros that ended it were not stored).
	paxSize = "GOFAULT.size"
	// paxOmitted marks an entry whose bytes were not kept (a member the
	// faults did not hit).
	paxOmitted = "GOFAULT.omitted"
)

// hitMembers returns the members a failed trial's data dirs are kept whole
// for: the nodes its faults struck (and the peer a disconnect or a
// one-way cut cut them from, a split's side) and the nodes that exited on their own. nil means every member:
// nothing tells which one matters (a fault-free failure).
//
// A trial whose members disagree — acknowledged data lost, replicas
// diverged, wrong data served (check.ClassLost, ClassWrong) — keeps every
// member whole too: telling which member is wrong needs the others' data
// to compare with (about 1 MB more for a packed etcd trial).
func hitMembers(tr *record.Trial) []string {
	for _, v := range tr.Verdicts {
		if v.Failed && check.Class(v.Checker, v.Symptom) <= check.ClassWrong {
			return nil
		}
	}
	var out []string
	add := func(n string) {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, in := range tr.Injections {
		add(in.Node)
		add(in.Peer)
		for _, n := range in.Side {
			add(n)
		}
	}
	for _, n := range tr.Nodes {
		if n.Exited && !n.Killed {
			add(n.Name)
		}
	}
	slices.Sort(out)
	return out
}

// packed is what packTrial did.
type packed struct {
	Files   int   // regular files listed
	Bytes   int64 // their lengths, summed
	Stored  int64 // the file bytes the archive holds (before compression)
	Archive int64 // the archive's size on disk
}

// packTrial packs the data dirs (subdirectories) of a trial dir into
// PackName and writes PackList, keeping the files of the members in full
// whole (nil: every member) and only the metadata of the others, then
// removes the data dirs. A trial dir without data dirs is left alone.
func packTrial(dir string, full []string) (packed, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return packed{}, nil
	}
	if err != nil {
		return packed{}, fmt.Errorf("pack trial data: %w", err)
	}
	var members []string
	for _, e := range ents {
		if e.IsDir() {
			members = append(members, e.Name())
		}
	}
	if len(members) == 0 {
		return packed{}, nil
	}
	p, err := writePack(dir, members, full)
	if err != nil {
		os.Remove(filepath.Join(dir, PackName+".tmp"))
		return packed{}, fmt.Errorf("pack trial data of %s: %w", dir, err)
	}
	for _, m := range members {
		if err := os.RemoveAll(filepath.Join(dir, m)); err != nil {
			return p, fmt.Errorf("pack trial data: %w", err)
		}
	}
	return p, nil
}

// writePack writes the archive of members (subdirectories of dir) and its
// list, atomically.
func writePack(dir string, members, full []string) (packed, error) {
	var p packed
	tmp := filepath.Join(dir, PackName+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return p, err
	}
	defer f.Close()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	var list strings.Builder
	for _, m := range members {
		whole := full == nil || slices.Contains(full, m)
		err := filepath.WalkDir(filepath.Join(dir, m), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			n, stored, how, err := packEntry(tw, path, filepath.ToSlash(rel), info, whole)
			if err != nil {
				return err
			}
			if how != "" {
				p.Files++
				p.Bytes += n
				p.Stored += stored
				fmt.Fprintf(&list, "%12d  %-7s %s\n", n, how, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return p, err
		}
	}
	if err := tw.Close(); err != nil {
		return p, err
	}
	if err := zw.Close(); err != nil {
		return p, err
	}
	if err := f.Close(); err != nil {
		return p, err
	}
	header := fmt.Sprintf("# %s: the data dirs of this failed trial, packed (gofault report --restore TRIAL DIR unpacks them)\n"+
		"# length  kept: whole | zeros (its ending zeros not stored, restored sparse) | omitted (a member the faults did not hit)\n", PackName)
	if err := os.WriteFile(filepath.Join(dir, PackList), []byte(header+list.String()), 0o644); err != nil {
		return p, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, PackName)); err != nil {
		return p, err
	}
	if info, err := os.Stat(filepath.Join(dir, PackName)); err == nil {
		p.Archive = info.Size()
	}
	return p, nil
}

// packEntry writes one file's entry; for a regular file it returns its
// length, the bytes stored and how it was kept ("whole", "zeros",
// "omitted"). Other than directories, symlinks and regular files,
// nothing is packed.
func packEntry(tw *tar.Writer, path, name string, info fs.FileInfo, whole bool) (n, stored int64, how string, err error) {
	hdr := &tar.Header{Name: name, Mode: int64(info.Mode().Perm()), ModTime: info.ModTime(), Format: tar.FormatPAX}
	switch {
	case info.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		return 0, 0, "", tw.WriteHeader(hdr)
	case info.Mode()&fs.ModeSymlink != 0:
		if hdr.Linkname, err = os.Readlink(path); err != nil {
			return 0, 0, "", err
		}
		hdr.Typeflag = tar.TypeSymlink
		return 0, 0, "", tw.WriteHeader(hdr)
	case !info.Mode().IsRegular():
		return 0, 0, "", nil
	}
	hdr.Typeflag = tar.TypeReg
	n = info.Size()
	if !whole {
		hdr.PAXRecords = map[string]string{paxSize: strconv.FormatInt(n, 10), paxOmitted: "1"}
		return n, 0, "omitted", tw.WriteHeader(hdr)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, "", err
	}
	defer f.Close()
	stored, err = dataLength(f)
	if err != nil {
		return 0, 0, "", err
	}
	how = "whole"
	if stored < n {
		how = "zeros"
		hdr.PAXRecords = map[string]string{paxSize: strconv.FormatInt(n, 10)}
	}
	hdr.Size = stored
	if err := tw.WriteHeader(hdr); err != nil {
		return 0, 0, "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, "", err
	}
	if _, err := io.CopyN(tw, f, stored); err != nil {
		return 0, 0, "", err
	}
	return n, stored, how, nil
}

// dataLength returns the length of r's content without the zeros that end
// it: the offset just past its last non-zero byte (0 for a file of zeros).
func dataLength(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	zero := make([]byte, len(buf))
	var off, end int64
	for {
		k, err := io.ReadFull(r, buf)
		if k > 0 && !bytes.Equal(buf[:k], zero[:k]) {
			i := k - 1
			for buf[i] == 0 {
				i--
			}
			end = off + int64(i) + 1
		}
		off += int64(k)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return end, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// Restored is what Restore unpacked.
type Restored struct {
	// Files are the files restored (slash-separated, relative to the
	// destination); Omitted those listed in the archive whose bytes were
	// not kept (members the faults did not hit), with their lengths.
	Files   []string         `json:"files"`
	Omitted map[string]int64 `json:"omitted"`
}

// Restore unpacks the data dirs packed in trialDir (PackName) into dest,
// and copies the trial dir's logs there too, so dest looks like the trial
// dir when the trial ended: the files whose ending zeros were not stored
// get them back as holes (sparse files); the files whose bytes were not
// kept are not made (Restored.Omitted lists them).
func Restore(trialDir, dest string) (*Restored, error) {
	f, err := os.Open(filepath.Join(trialDir, PackName))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("restore trial data: %s holds no %s (a passing trial, or one beyond store.keep_failed, keeps only its logs)", trialDir, PackName)
		}
		return nil, fmt.Errorf("restore trial data: %w", err)
	}
	defer f.Close()
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, fmt.Errorf("restore trial data: %w", err)
	}
	res, err := unpack(f, dest)
	if err != nil {
		return nil, fmt.Errorf("restore trial data from %s: %w", trialDir, err)
	}
	if err := copyLogs(trialDir, dest); err != nil {
		return nil, fmt.Errorf("restore trial logs: %w", err)
	}
	return res, nil
}

// unpack extracts a pack into dest; nothing is written outside it (an
// os.Root: no entry name or symlink leads out).
func unpack(r io.Reader, dest string) (*Restored, error) {
	root, err := os.OpenRoot(dest)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	res := &Restored{Omitted: map[string]int64{}}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		path := filepath.FromSlash(name)
		if !filepath.IsLocal(path) {
			return nil, fmt.Errorf("entry %q leaves the destination", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(path, fs.FileMode(hdr.Mode).Perm()|0o700); err != nil {
				return nil, err
			}
		case tar.TypeSymlink:
			if err := root.Symlink(hdr.Linkname, path); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			size := hdr.Size
			if s, ok := hdr.PAXRecords[paxSize]; ok {
				if size, err = strconv.ParseInt(s, 10, 64); err != nil || size < hdr.Size {
					return nil, fmt.Errorf("entry %q: bad %s %q", hdr.Name, paxSize, s)
				}
			}
			if hdr.PAXRecords[paxOmitted] != "" {
				res.Omitted[name] = size
				continue
			}
			if err := restoreFile(root, tr, path, hdr, size); err != nil {
				return nil, err
			}
			res.Files = append(res.Files, name)
		}
	}
}

// restoreFile writes one file under root: the entry's bytes, then holes
// up to size.
func restoreFile(root *os.Root, r io.Reader, path string, hdr *tar.Header, size int64) error {
	if err := root.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fs.FileMode(hdr.Mode).Perm())
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, r, hdr.Size); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(size); err != nil { // the zeros, as a hole
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return root.Chtimes(path, hdr.ModTime, hdr.ModTime)
}

// copyLogs copies the regular files of trialDir (its logs), but the pack
// and its list, into dest.
func copyLogs(trialDir, dest string) error {
	ents, err := os.ReadDir(trialDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name() == PackName || e.Name() == PackList {
			continue
		}
		data, err := os.ReadFile(filepath.Join(trialDir, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dest, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
