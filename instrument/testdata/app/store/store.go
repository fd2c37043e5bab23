// Package store is a tiny file-backed key-value store: the target package of
// the instrument tests. Every kind of call the rewriter handles appears here.
package store

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Store keeps one file per key in Dir.
type Store struct {
	Dir string
}

// Put writes a key.
func (s *Store) Put(key, value string) error {
	f, err := os.Create(filepath.Join(s.Dir, key))
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	defer f.Close()
	if _, err := f.Write([]byte(value)); err != nil {
		return err
	}
	return f.Sync()
}

// Get reads a key.
func (s *Store) Get(key string) (string, error) {
	data, err := os.ReadFile(filepath.Join(s.Dir, key))
	return string(data), err
}

// Keys lists the keys in order.
func (s *Store) Keys() ([]string, error) {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range ents {
		keys = append(keys, e.Name())
	}
	sort.Strings(keys)
	return keys, nil
}

// Lines counts the lines of a key through a buffered reader, in an
// expression position.
func (s *Store) Lines(key string) (int, error) {
	f, err := os.Open(filepath.Join(s.Dir, key))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReader(f)
	n := 0
	for {
		line, err := r.ReadString('\n')
		if len(line) > 0 {
			n++
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// Dump writes all keys to w, using a nested call as an argument.
func (s *Store) Dump(w io.Writer) error {
	keys, err := s.Keys()
	if err != nil {
		return err
	}
	for _, k := range keys {
		v, err := s.Get(k)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s=%s\n", k, strings.TrimSpace(v)); err != nil {
			return err
		}
	}
	done := make(chan error, 1)
	go func() { done <- os.WriteFile(filepath.Join(s.Dir, ".dumped"), []byte("yes"), 0o644) }()
	return <-done
}

// Where reports the file and line it calls where from, so tests can check
// that instrumented code keeps its original positions.
func (s *Store) Where() (string, error) {
	return where()
}

func where() (string, error) {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line), nil
}
