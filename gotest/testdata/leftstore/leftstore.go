// Package leftstore is a tiny store for gofault test's second run in one
// process, with two planted bugs whose harm shows only in the next run of
// a test in the same process, and correct code beside them:
//   - a store's name is registered in the process while it is open. Open
//     forgets the name when its write fails, as it should; OpenLeaky
//     leaves it registered, so every later open of the name fails
//     "already open";
//   - Init writes the process's lock file once (sync.Once) and keeps the
//     error of a failed first try, which every later call returns though
//     nothing failed again.
package leftstore

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

var (
	mu   sync.Mutex
	open = map[string]bool{} // the names of the stores open in the process

	initOnce sync.Once
	initErr  error
)

// Store is an open store.
type Store struct{ name string }

// Open registers name and writes the store's marker file in dir; a failed
// write unregisters it and returns the error.
func Open(dir, name string) (*Store, error) {
	if err := register(name); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		unregister(name)
		return nil, fmt.Errorf("open store %s: %w", name, err)
	}
	return &Store{name: name}, nil
}

// OpenLeaky is Open with a planted bug: a failed write returns its error
// and leaves name registered.
func OpenLeaky(dir, name string) (*Store, error) {
	if err := register(name); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		return nil, fmt.Errorf("open store %s: %w", name, err)
	}
	return &Store{name: name}, nil
}

// Init writes the process's lock file in dir, once. The planted bug: the
// error of a failed first try is kept and returned by every later call.
func Init(dir string) error {
	initOnce.Do(func() {
		if err := os.WriteFile(filepath.Join(dir, "lock"), nil, 0o644); err != nil {
			initErr = fmt.Errorf("init: %w", err)
		}
	})
	return initErr
}

// Close unregisters the store's name.
func (s *Store) Close() { unregister(s.name) }

func register(name string) error {
	mu.Lock()
	defer mu.Unlock()
	if open[name] {
		return fmt.Errorf("store %s is already open", name)
	}
	open[name] = true
	return nil
}

func unregister(name string) {
	mu.Lock()
	defer mu.Unlock()
	delete(open, name)
}
