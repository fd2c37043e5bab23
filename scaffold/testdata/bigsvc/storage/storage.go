// Package storage is the member's log store.
package storage

import "github.com/acme/bigsvc/storage/wal"

// Open opens the store.
func Open() any { return wal.Open() }
