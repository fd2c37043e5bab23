// Package lib is a library, not a target: two pairs of functions that call
// each other, where only one of each pair does I/O, as gRPC's stream
// wrappers' RecvMsg methods call one another through the call graph.
package lib

import "os"

// Load returns Read's error after n hops.
func Load(path string, n int) error {
	if n > 0 {
		return Hop(path, n-1)
	}
	_, err := os.ReadFile(path)
	return err
}

// Hop does no I/O of its own: it returns what Load returns.
func Hop(path string, n int) error {
	return Load(path, n)
}

// Save returns a write's error after n hops.
func Save(path string, n int) error {
	if n > 0 {
		return Relay(path, n-1)
	}
	return os.WriteFile(path, nil, 0o644)
}

// Relay does no I/O of its own: it returns what Save returns.
func Relay(path string, n int) error {
	return Save(path, n)
}
