package cluster

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
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
//
// Ports are drawn at random from below the kernel's ephemeral range
// (10000 up to net.ipv4.ip_local_port_range's low end), where outgoing
// connections never take them between the check and the node's bind; a
// port is free when a listener on it can be opened (and is closed again).
// If that range is too small, the kernel picks ports (listening on :0).
func AllocPorts(n int) ([]int, error) {
	return ports.alloc(n)
}

// ReleasePorts gives ports back for reuse.
func ReleasePorts(ps []int) {
	ports.release(ps)
}

// portFloor is the lowest port handed out.
const portFloor = 10000

// portCeiling returns the first port of the ephemeral range.
func portCeiling() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768 // the Linux default; BSDs use 49152
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
}

func (a *portAllocator) alloc(n int) ([]int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ceil := portCeiling()
	out := make([]int, 0, n)
	for tries := 0; len(out) < n; tries++ {
		if tries > 100*n+100 {
			a.releaseLocked(out)
			return nil, fmt.Errorf("allocate %d ports: no free port found", n)
		}
		p := 0
		if ceil-portFloor >= 1000 && tries < 50*n {
			p = portFloor + rand.IntN(ceil-portFloor)
			if a.inUse[p] || !free(p) {
				continue
			}
		} else {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				a.releaseLocked(out)
				return nil, fmt.Errorf("allocate ports: %w", err)
			}
			p = l.Addr().(*net.TCPAddr).Port
			l.Close()
			if a.inUse[p] {
				continue
			}
		}
		a.inUse[p] = true
		out = append(out, p)
	}
	return out, nil
}

// free reports whether a listener can be opened on 127.0.0.1:p.
func free(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(Host, strconv.Itoa(p)))
	if err != nil {
		return false
	}
	l.Close()
	return true
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
