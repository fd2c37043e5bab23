//go:build unix

package durable

import (
	"io/fs"
	"syscall"
)

// inode returns a file's inode number.
func inode(info fs.FileInfo) (uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Ino), true
}
