// Package kv is shaped like bbolt: a bucket's ForEach returns its
// visitor's error as is, a DB's Update returns its function's error or its
// own commit's. It is not a target: the analysis summarises it.
package kv

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrTxClosed is returned by a closed transaction's bucket.
var ErrTxClosed = errors.New("tx closed")

// Bucket is a set of keys.
type Bucket struct {
	closed bool
	keys   [][]byte
}

// ForEach calls fn for every key and returns fn's first error.
func (b *Bucket) ForEach(fn func(k, v []byte) error) error {
	if b.closed {
		return ErrTxClosed
	}
	for _, k := range b.keys {
		if err := fn(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// DB is a database file.
type DB struct {
	f *os.File
}

// Update runs fn in a transaction and commits it (a sync of the file).
func (db *DB) Update(fn func(*Bucket) error) error {
	b := &Bucket{}
	if err := fn(b); err != nil {
		return err
	}
	return db.f.Sync()
}

// Dump returns a visitor that writes each key's value to a file of dir.
func Dump(dir string) func(k, v []byte) error {
	return func(k, v []byte) error {
		return os.WriteFile(filepath.Join(dir, string(k)), v, 0o644)
	}
}

// Restore writes the files of dir in a transaction: a function of this
// package passed to Update, which the call graph gives as a callee of
// Update's call of fn everywhere.
func (db *DB) Restore(dir string) error {
	return db.Update(func(b *Bucket) error {
		return os.WriteFile(filepath.Join(dir, "restored"), nil, 0o644)
	})
}

// Log is an append-only file.
type Log struct {
	f *os.File
}

// Append writes k to the log.
func (l *Log) Append(k, v []byte) error {
	_, err := l.f.Write(k)
	return err
}
