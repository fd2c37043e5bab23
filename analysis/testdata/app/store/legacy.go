package store

import (
	"io/ioutil"
	"os"
)

// ReadMeta reads a metadata file with the io/ioutil wrapper that code
// written before Go 1.16 still calls (etcd v3.5's snapshotter).
func ReadMeta(path string) ([]byte, error) { return ioutil.ReadFile(path) }

// WriteMeta writes a metadata file with the io/ioutil wrapper.
func WriteMeta(path string, b []byte) error { return ioutil.WriteFile(path, b, 0o600) }

// journal is opened lazily by its own method named init: an ordinary
// method, whose I/O are sites like any other's.
type journal struct{ dir string }

func (j *journal) init() error { return os.MkdirAll(j.dir, 0o755) }

// Journal opens a journal in dir.
func Journal(dir string) error { return (&journal{dir: dir}).init() }

// The package's own init runs before the node reaches its controller: no
// site.
func init() { os.Remove(os.Getenv("STORE_STALE_LOCK")) }
