// Package ignoredstore is a tiny store for gofault test's rule on errors a
// test discards: Open returns its write's error as it should, and a test
// that ignores it made an assumption; Create carries a planted bug of
// etcd's wal.Create shape — a failed write returns a nil store and a nil
// error — which a test that checks the error still finds.
package ignoredstore

import (
	"fmt"
	"os"
	"path/filepath"
)

// Store counts what was put in it.
type Store struct {
	dir string
	n   int
}

// Open writes the store's marker file in dir and returns its error.
func Open(dir string) (*Store, error) {
	if err := os.WriteFile(filepath.Join(dir, "open"), nil, 0o644); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Create writes the store's marker file in dir. The planted bug: a failed
// write returns a nil store and a nil error.
func Create(dir string) (*Store, error) {
	if err := os.WriteFile(filepath.Join(dir, "create"), nil, 0o644); err != nil {
		return nil, nil
	}
	return &Store{dir: dir}, nil
}

// Put adds v.
func (s *Store) Put(v int) { s.n += v }

// Len is the sum of what was put.
func (s *Store) Len() int { return s.n }
