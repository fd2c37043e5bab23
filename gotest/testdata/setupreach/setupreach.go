// Package setupreach is a test fixture of gofault test: Put's write is
// reached by one test directly and by another only in its setup (the
// test helper of testing.go), so a fault trial of the second test must
// not make the write live.
package setupreach

import (
	"os"
	"path/filepath"
)

// Put writes data as the record name under dir.
func Put(dir, name string, data []byte) error {
	return os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// Get reads the record name under dir.
func Get(dir, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(dir, name))
}
