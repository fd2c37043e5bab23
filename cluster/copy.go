package cluster

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// copyTree copies the directory src to dst (which must not exist):
// directories, regular files with their modes, and symbolic links. Files
// are copied sparsely: only the ranges the file system reports as data
// (SEEK_DATA), so a preallocated write-ahead log segment of zeros (etcd's
// 64 MiB) costs nothing to copy. A copy leaves nothing synced: the copy is
// what the nodes' earlier run left, not what they wrote, so power-loss
// faults treat it as on disk, like any file a node finds at its start.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(path, to, info)
		}
		return fmt.Errorf("copy %s: not a regular file, directory or link (%s)", path, d.Type())
	})
}

// copyFile copies one regular file's data ranges and size.
func copyFile(src, dst string, info fs.FileInfo) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	size := info.Size()
	fd := int(in.Fd())
	for off := int64(0); off < size; {
		start, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole is left
		}
		if err != nil {
			return fmt.Errorf("copy %s: %w", src, err)
		}
		end, err := unix.Seek(fd, start, unix.SEEK_HOLE)
		if err != nil {
			return fmt.Errorf("copy %s: %w", src, err)
		}
		if _, err := io.Copy(io.NewOffsetWriter(out, start), io.NewSectionReader(in, start, end-start)); err != nil {
			return fmt.Errorf("copy %s: %w", src, err)
		}
		off = end
	}
	return out.Truncate(size)
}
