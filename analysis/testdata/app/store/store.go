// Package store is a tiny append-only file store: file I/O, a sentinel, a
// custom error type, an error created by a helper, and writers behind
// io.Writer that can and cannot fail.
package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// ErrNotFound is returned by Get for a missing key.
var ErrNotFound = errors.New("not found")

// CorruptError reports a corrupt record.
type CorruptError struct {
	Offset int64
	Err    error
}

func (e *CorruptError) Error() string { return fmt.Sprintf("corrupt at %d: %v", e.Offset, e.Err) }

// Store appends records to one file.
type Store struct {
	f    *os.File
	keys map[string][]byte
}

// Open opens or creates the store in dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "data"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Store{f: f, keys: map[string][]byte{}}, nil
}

// validate creates its own error: the site is the call to validate, not
// the calls to Put.
func validate(key string) error {
	if key == "" {
		return errors.New("empty key")
	}
	return nil
}

// Put validates and appends a record, then syncs.
func (s *Store) Put(key string, val []byte) error {
	if err := validate(key); err != nil {
		return err
	}
	if err := persist(s.f, val); err != nil {
		return err
	}
	s.keys[key] = val
	return s.f.Sync()
}

// persist writes through an io.Writer that is always a file.
func persist(w io.Writer, b []byte) error {
	_, err := w.Write(b)
	return err
}

// checksum writes through an io.Writer that is always a hash or a buffer:
// an injected I/O error there would be invalid.
func checksum(w io.Writer, b []byte) error {
	_, err := w.Write(b)
	return err
}

// Sum returns a checksum and a copy of b.
func Sum(b []byte) (uint32, []byte, error) {
	h := crc32.NewIEEE()
	if err := checksum(h, b); err != nil {
		return 0, nil, err
	}
	var buf bytes.Buffer
	if err := checksum(&buf, b); err != nil {
		return 0, nil, err
	}
	return h.Sum32(), buf.Bytes(), nil
}

// PutBatch writes records through a bufio.Writer over the file.
func (s *Store) PutBatch(recs [][]byte) error {
	w := bufio.NewWriter(s.f)
	for _, r := range recs {
		if _, err := w.Write(r); err != nil {
			return err
		}
	}
	return w.Flush()
}

// Render renders records into memory through a bufio.Writer over a
// bytes.Buffer: nothing there can fail.
func Render(recs [][]byte) ([]byte, error) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	for _, r := range recs {
		if _, err := w.Write(r); err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Get returns the value of key or the sentinel ErrNotFound.
func (s *Store) Get(key string) ([]byte, error) {
	v, ok := s.keys[key]
	if !ok {
		return nil, ErrNotFound
	}
	return v, nil
}

// Lookup only propagates Get's error: its callers get no site.
func (s *Store) Lookup(key string) ([]byte, error) {
	v, err := s.Get(key)
	if err != nil {
		return nil, fmt.Errorf("lookup %s: %w", key, err)
	}
	return v, nil
}

// Verify checks a record header.
func verify(b []byte, off int64) error {
	if len(b) < 4 {
		return &CorruptError{Offset: off}
	}
	return nil
}

// Load reads the whole file and verifies it.
func (s *Store) Load() error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	hdr := make([]byte, 4)
	if _, err := io.ReadFull(s.f, hdr); err != nil {
		return err
	}
	return verify(hdr, 0)
}

// Close closes the file.
func (s *Store) Close() error { return s.f.Close() }

// Log appends values of any type to a file: a method of a generic type.
type Log[T any] struct {
	f *os.File
}

// Append writes one value.
func (l *Log[T]) Append(v T) error {
	_, err := fmt.Fprintf(l.f, "%v\n", v)
	return err
}

// pager writes pages through function values bound to its file's methods,
// as bolt does (db.ops.writeAt = db.file.WriteAt): the write is a disk
// site, named for the method; the sync, bound to a method that is no
// disk call, is not (calls of function values are no sites).
type pager struct {
	writeAt func(b []byte, off int64) (int, error)
	sync    func() error
}

// NewPager binds f's WriteAt and Sync.
func NewPager(f *os.File) *pager {
	p := &pager{}
	p.writeAt = f.WriteAt
	p.sync = f.Sync
	return p
}

// WritePage writes page id through the bound WriteAt, then syncs.
func (p *pager) WritePage(b []byte, id int64) error {
	if _, err := p.writeAt(b, id*4096); err != nil {
		return err
	}
	return p.sync()
}

// SavePage writes b as page 0 of f.
func SavePage(f *os.File, b []byte) error { return NewPager(f).WritePage(b, 0) }
