// Package node is the target. It calls each cycle of lib twice, once
// through each of its functions, in opposite orders: whichever function
// of a cycle the analysis summarises first, both calls can fail alike.
package node

import "example.com/cy/lib"

// ReadFirst calls the cycle's I/O function first.
func ReadFirst() error { return lib.Load("a", 2) }

// ReadThen calls the function that only forwards.
func ReadThen() error { return lib.Hop("a", 2) }

// WriteFirst calls the forwarding function first.
func WriteFirst() error { return lib.Relay("b", 2) }

// WriteThen calls the cycle's I/O function.
func WriteThen() error { return lib.Save("b", 2) }
