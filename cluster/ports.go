package cluster

import (
	"fmt"
	"net"
	"sync"
)

// ports hands out free loopback ports and remembers the ones handed out in
// this process, so parallel trials never get the same port.
var ports = portAllocator{inUse: map[int]bool{}}

type portAllocator struct {
	mu    sync.Mutex
	inUse map[int]bool
}

// AllocPorts returns n distinct free TCP ports on 127.0.0.1 that no other
// caller in this process holds until they are given back with ReleasePorts.
// A port is free when the kernel hands it out for a listener on port 0;
// the listener is closed before the port is returned.
func AllocPorts(n int) ([]int, error) {
	return ports.alloc(n)
}

// ReleasePorts gives ports back for reuse.
func ReleasePorts(ps []int) {
	ports.release(ps)
}

func (a *portAllocator) alloc(n int) ([]int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]int, 0, n)
	for tries := 0; len(out) < n; tries++ {
		if tries > 100*n+100 {
			a.releaseLocked(out)
			return nil, fmt.Errorf("allocate %d ports: no free port found", n)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			a.releaseLocked(out)
			return nil, fmt.Errorf("allocate ports: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if a.inUse[p] {
			continue
		}
		a.inUse[p] = true
		out = append(out, p)
	}
	return out, nil
}

func (a *portAllocator) release(ps []int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releaseLocked(ps)
}

func (a *portAllocator) releaseLocked(ps []int) {
	for _, p := range ps {
		delete(a.inUse, p)
	}
}
