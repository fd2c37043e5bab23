package fleet

// A directory as a gzip'd tar: a bundle's files, a trial dir's files (its
// logs and its data pack). Only regular files travel: for a trial dir those
// at its top (flat), for a bundle its whole tree (a test bundle's package
// dir and testdata); unpacking writes through an os.Root, so no name leads
// out of the destination, and refuses nested names unless asked for a tree.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// packDir writes the regular files at the top of dir as a gzip'd tar.
func packDir(dir string) ([]byte, error) { return pack(dir, false, false) }

// packBundle packs a bundle dir (its whole tree when tree) as its content
// alone: names, modes and bytes, no times or owners, so that the same
// bundle written again (a resumed campaign) has the same digest.
func packBundle(dir string, tree bool) ([]byte, error) { return pack(dir, tree, true) }

func pack(dir string, tree, content bool) ([]byte, error) {
	// The files' walk starts below dir itself, which may be a symbolic
	// link (a bundle given as one).
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		switch {
		case e.Type().IsRegular():
			err = addFile(tw, path, e.Name(), content)
		case e.IsDir() && tree:
			err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				return addFile(tw, p, filepath.ToSlash(rel), content)
			})
		}
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", dir, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	return buf.Bytes(), nil
}

// addFile writes the file at path into tw as name; with content alone, its
// header has no times and no owner.
func addFile(tw *tar.Writer, path, name string, content bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	hdr, err := tar.FileInfoHeader(info, "")
	if err != nil {
		return err
	}
	hdr.Name = name
	if content {
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = time.Unix(0, 0), time.Time{}, time.Time{}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, info.Size())
	return err
}

// unpackDir writes the files of a packDir archive into dest (made if
// missing), keeping their modes. An entry that is not a regular file
// named by one path element is an error.
func unpackDir(data []byte, dest string) error { return unpack(data, dest, false) }

// unpackTree writes the files of a packBundle tree archive into dest, as
// unpackDir does, making their directories; an entry that is not a
// regular file with a local name is an error.
func unpackTree(data []byte, dest string) error { return unpack(data, dest, true) }

func unpack(data []byte, dest string, tree bool) error {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fmt.Errorf("unpack into %s: %w", dest, err)
	}
	root, err := os.OpenRoot(dest)
	if err != nil {
		return fmt.Errorf("unpack into %s: %w", dest, err)
	}
	defer root.Close()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("unpack into %s: %w", dest, err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpack into %s: %w", dest, err)
		}
		if err := entryName(hdr, tree); err != nil {
			return fmt.Errorf("unpack into %s: %w", dest, err)
		}
		if d := path.Dir(hdr.Name); tree && d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("unpack into %s: %w", dest, err)
			}
		}
		f, err := root.OpenFile(hdr.Name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, hdr.FileInfo().Mode().Perm())
		if err != nil {
			return fmt.Errorf("unpack into %s: %w", dest, err)
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("unpack into %s: %w", dest, err)
		}
	}
}

// entryName checks that an archive entry is a regular file named by a
// local path: one element unless tree, slash-separated if tree.
func entryName(hdr *tar.Header, tree bool) error {
	if hdr.Typeflag != tar.TypeReg {
		return fmt.Errorf("entry %q is not a regular file", hdr.Name)
	}
	sep := `/\`
	if tree {
		sep = `\`
	}
	if !filepath.IsLocal(hdr.Name) || strings.ContainsAny(hdr.Name, sep) {
		return fmt.Errorf("entry %q is not a plain file name", hdr.Name)
	}
	return nil
}

// digest is the hex SHA-256 of data: the name of a bundle's object, and
// of the directory a worker caches it in.
func digest(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}
