package store

import "io/ioutil"

// ReadMeta reads a metadata file with the io/ioutil wrapper that code
// written before Go 1.16 still calls (etcd v3.5's snapshotter).
func ReadMeta(path string) ([]byte, error) { return ioutil.ReadFile(path) }

// WriteMeta writes a metadata file with the io/ioutil wrapper.
func WriteMeta(path string, b []byte) error { return ioutil.WriteFile(path, b, 0o600) }
