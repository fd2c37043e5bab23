//go:build !amd64 && !arm64

package agent

// goroutine returns an identity of the calling goroutine: its ID, parsed
// from the header of runtime.Stack ("goroutine 42 [running]:").
func goroutine() uint64 { return stackGoid() }

// uniqueIDs says goroutine identities are never reused.
var uniqueIDs = true
