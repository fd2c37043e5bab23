package fleet

// A flat directory as a gzip'd tar: a bundle's files, a trial dir's
// files (its logs and its data pack). Only regular files at the top of the
// directory travel; unpacking writes through an os.Root, so no name leads
// out of the destination.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// packDir writes the regular files at the top of dir as a gzip'd tar.
func packDir(dir string) ([]byte, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if err := addFile(tw, filepath.Join(dir, e.Name()), e.Name()); err != nil {
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

func addFile(tw *tar.Writer, path, name string) error {
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
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, info.Size())
	return err
}

// unpackDir writes the files of a packDir archive into dest (made if
// missing), keeping their modes. An entry that is not a regular file
// named by one path element is an error.
func unpackDir(data []byte, dest string) error {
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
		if err := flatName(hdr); err != nil {
			return fmt.Errorf("unpack into %s: %w", dest, err)
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

// flatName checks that an archive entry is a regular file named by one
// local path element.
func flatName(hdr *tar.Header) error {
	if hdr.Typeflag != tar.TypeReg {
		return fmt.Errorf("entry %q is not a regular file", hdr.Name)
	}
	if !filepath.IsLocal(hdr.Name) || strings.ContainsAny(hdr.Name, `/\`) {
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
