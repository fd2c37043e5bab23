//go:build amd64 || arm64

package agent

import (
	"sync"
	"unsafe"
)

// getg returns the address of the calling goroutine's runtime descriptor. It
// identifies the goroutine while it lives; the runtime may reuse it after
// the goroutine exits.
func getg() unsafe.Pointer

// goidOffset is the offset of the goroutine ID in the runtime's descriptor
// (found at start-up, goidAt), or 0 when it could not be found.
var goidOffset = goidAt()

// goroutine returns an identity of the calling goroutine: its ID, read
// from its descriptor, which no later goroutine reuses; the descriptor's
// address, which a later goroutine may reuse, where the ID's offset is
// unknown.
func goroutine() uint64 {
	if goidOffset != 0 {
		return *(*uint64)(unsafe.Add(getg(), goidOffset))
	}
	return uint64(uintptr(getg()))
}

// uniqueIDs says goroutine identities are never reused.
var uniqueIDs = goidOffset != 0

// goidAt finds the offset of the goroutine ID in the descriptor: the one
// word that holds each of several goroutines' ID (parsed from
// runtime.Stack), in the descriptor's first 320 bytes (the ID sits at 152
// or 160 in recent releases). It returns 0 unless exactly one offset fits.
func goidAt() uintptr {
	const span, probes = 320, 4
	var mu sync.Mutex
	counts := map[uintptr]int{}
	var wg sync.WaitGroup
	for i := 0; i < probes; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, g := stackGoid(), getg()
			mu.Lock()
			defer mu.Unlock()
			for off := uintptr(8); off+8 <= span; off += 8 {
				if *(*uint64)(unsafe.Add(g, off)) == id {
					counts[off]++
				}
			}
		}()
		wg.Wait() // one at a time: each probe is a live goroutine with its own ID
	}
	var found uintptr
	for off, n := range counts {
		if n == probes {
			if found != 0 {
				return 0
			}
			found = off
		}
	}
	return found
}
