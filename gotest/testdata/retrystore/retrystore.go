// Package retrystore saves and loads small records as files, retrying a
// failed write or read. It carries a planted bug for gofault test: with
// RETRYSTORE_BUG=drop in the environment, Save's retry loop drops the
// error of a failed write and reports success.
package retrystore

import (
	"fmt"
	"os"
	"path/filepath"
)

// attempts is how often Save and Load try before they give up.
const attempts = 3

// dropBug turns the planted bug on.
var dropBug = os.Getenv("RETRYSTORE_BUG") == "drop"

// Save writes data as the record name under dir, retrying a failed write.
func Save(dir, name string, data []byte) error {
	path := filepath.Join(dir, name)
	var err error
	for i := 0; i < attempts; i++ {
		err = os.WriteFile(path, data, 0o644)
		if err == nil {
			return nil
		}
		if dropBug {
			// The planted bug: the loop gives up at once and forgets why.
			return nil
		}
	}
	return fmt.Errorf("save %s: %w", name, err)
}

// Load reads the record name under dir, retrying a failed read.
func Load(dir, name string) ([]byte, error) {
	path := filepath.Join(dir, name)
	var err error
	for i := 0; i < attempts; i++ {
		var data []byte
		data, err = os.ReadFile(path)
		if err == nil {
			return data, nil
		}
	}
	return nil, fmt.Errorf("load %s: %w", name, err)
}
