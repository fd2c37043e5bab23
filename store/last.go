package store

import (
	"os"
	"path/filepath"
	"strings"
)

// lastFile remembers the database of the last campaign run on this
// machine, so "gofault report" works from anywhere right after "gofault run".
func lastFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "gofault", "last-db")
}

// Last returns the path Remember remembered, or "".
func Last() string {
	f := lastFile()
	if f == "" {
		return ""
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// Remember records path as the database of the last campaign run on this
// machine (Last); failures are ignored, it is only a convenience.
func Remember(path string) {
	f := lastFile()
	if f == "" || os.MkdirAll(filepath.Dir(f), 0o755) != nil {
		return
	}
	os.WriteFile(f, []byte(path+"\n"), 0o644)
}
