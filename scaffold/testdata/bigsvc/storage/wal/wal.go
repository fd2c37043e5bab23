// Package wal is the store's write-ahead log.
package wal

// Open opens the log.
func Open() any { return nil }
