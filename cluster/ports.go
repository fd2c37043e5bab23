package cluster

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ports hands out free loopback ports and remembers the ones handed out in
// this process, so parallel trials never get the same port, and locks each
// in a directory every gofault process on the machine shares, so that
// another one (a second campaign, the packages of go test ./... run at
// once) never takes a killed member's port while it is down.
var ports = portAllocator{inUse: map[int]*os.File{}, dir: portLockDir()}

type portAllocator struct {
	mu sync.Mutex
	// inUse are the ports handed out, each with its lock file (nil where
	// dir could not be used).
	inUse map[int]*os.File
	// dir holds a lock file per port handed out by a live process.
	dir string
	// floor and ceil bound the ports drawn at random (0: portFloor and
	// the kernel's ephemeral range).
	floor, ceil int
}

// portLockDir is the directory of the machine's port locks: GOFAULT_PORT_LOCKS
// or gofault-ports-UID in the temp dir (one per user and TMPDIR).
func portLockDir() string {
	if d := os.Getenv("GOFAULT_PORT_LOCKS"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("gofault-ports-%d", os.Getuid()))
}

// lock takes port p's lock in a.dir: false when another process holds it.
// Without a usable dir, every port is this process's to check (nil, true).
// A lock file is removed when its port is given back; a lock taken on a file
// removed meanwhile (another process gave the port back between our open and
// our flock) is not a lock: the path names another file by then.
func (a *portAllocator) lock(p int) (*os.File, bool) {
	if a.dir == "" || os.MkdirAll(a.dir, 0o700) != nil {
		return nil, true
	}
	path := filepath.Join(a.dir, strconv.Itoa(p))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, true
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	held, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, false
	}
	return f, true
}

// unlock gives a port's lock back: its file goes first, then the lock.
func unlock(f *os.File) {
	if f == nil {
		return
	}
	os.Remove(f.Name())
	f.Close()
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
	floor, ceil := cmp.Or(a.floor, portFloor), a.ceil
	if ceil == 0 {
		ceil = portCeiling()
	}
	out := make([]int, 0, n)
	for tries := 0; len(out) < n; tries++ {
		if tries > 100*n+100 {
			a.releaseLocked(out)
			return nil, fmt.Errorf("allocate %d ports: no free port found", n)
		}
		p := 0
		random := ceil-floor >= 1000 && tries < 50*n
		if random {
			p = floor + rand.IntN(ceil-floor)
		} else {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				a.releaseLocked(out)
				return nil, fmt.Errorf("allocate ports: %w", err)
			}
			p = l.Addr().(*net.TCPAddr).Port
			l.Close()
		}
		if _, ok := a.inUse[p]; ok {
			continue
		}
		f, ok := a.lock(p)
		if !ok {
			continue
		}
		if random && !free(p) {
			unlock(f)
			continue
		}
		a.inUse[p] = f
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
		if f, ok := a.inUse[p]; ok {
			unlock(f)
			delete(a.inUse, p)
		}
	}
}

// A Reservation is a set of ports one caller keeps across several clusters
// (the trials of a template slot, which must find their members at the
// same addresses). Between clusters it holds each port with a listener,
// so that no other process, another gofault's trials included, takes it;
// Start closes them before the nodes bind and Stop opens them again.
type Reservation struct {
	mu    sync.Mutex
	ports []int
	held  []net.Listener
}

// Reserve allocates n ports (as AllocPorts) and holds them until Release.
func Reserve(n int) (*Reservation, error) {
	ps, err := AllocPorts(n)
	if err != nil {
		return nil, err
	}
	r := &Reservation{ports: ps}
	r.hold()
	return r, nil
}

// Ports returns the reserved ports, in allocation order.
func (r *Reservation) Ports() []int { return slices.Clone(r.ports) }

// hold listens on every port not yet held. A port it cannot listen on
// (a node's connection still in TIME_WAIT on it, say) stays reserved in
// this process only.
func (r *Reservation) hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held != nil || r.ports == nil {
		return
	}
	for _, p := range r.ports {
		if l, err := net.Listen("tcp", net.JoinHostPort(Host, strconv.Itoa(p))); err == nil {
			r.held = append(r.held, l)
		}
	}
}

// unhold closes the listeners, for the nodes to bind the ports.
func (r *Reservation) unhold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.held {
		l.Close()
	}
	r.held = nil
}

// Release closes the listeners and gives the ports back; the reservation
// must not be used after it.
func (r *Reservation) Release() {
	r.unhold()
	r.mu.Lock()
	defer r.mu.Unlock()
	ReleasePorts(r.ports)
	r.ports = nil
}
