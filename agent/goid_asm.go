//go:build amd64 || arm64

package agent

// getg returns the address of the calling goroutine's runtime descriptor. It
// identifies the goroutine while it lives; the runtime may reuse it after
// the goroutine exits.
func getg() uintptr

// goroutine returns an identity of the calling goroutine.
func goroutine() uint64 { return uint64(getg()) }
