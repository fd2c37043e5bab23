//go:build !unix

package durable

import "io/fs"

// inode is unavailable: power-loss images need unix inode numbers.
func inode(fs.FileInfo) (uint64, bool) { return 0, false }
