package cluster

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

func TestAllocPorts(t *testing.T) {
	ceil := portCeiling()
	ports.mu.Lock()
	before := len(ports.inUse) // what other tests of the package still hold
	ports.mu.Unlock()
	var mu sync.Mutex
	seen := map[int]bool{}
	var all [][]int
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ps, err := AllocPorts(25)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			all = append(all, ps)
			for _, p := range ps {
				if seen[p] {
					t.Errorf("port %d handed out twice", p)
				}
				seen[p] = true
				if ceil-portFloor >= 1000 && (p < portFloor || p >= ceil) {
					t.Errorf("port %d outside [%d, %d)", p, portFloor, ceil)
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != 200 {
		t.Errorf("%d distinct ports, want 200", len(seen))
	}
	// A port that is in use is never handed out.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	if free(busy) {
		t.Errorf("free(%d) with a listener on it", busy)
	}
	for _, ps := range all {
		ReleasePorts(ps)
	}
	ports.mu.Lock()
	left := len(ports.inUse) - before
	ports.mu.Unlock()
	if left != 0 {
		t.Errorf("%d ports still held after release", left)
	}
}

// TestPortLocks: a port another process holds (its lock in the shared
// directory) is never handed out, and comes back once given back; two
// allocators over one directory stand for two gofault processes (flock
// locks belong to open files, so they exclude each other in one process
// too).
func TestPortLocks(t *testing.T) {
	dir := t.TempDir()
	const floor = 20000
	other := &portAllocator{inUse: map[int]*os.File{}, dir: dir}
	held := map[int]bool{}
	for p := floor; p < floor+1000-10; p++ {
		f, ok := other.lock(p)
		if !ok || f == nil {
			t.Fatalf("lock %d: ok %v, file %v", p, ok, f)
		}
		other.inUse[p] = f
		held[p] = true
	}
	if _, ok := (&portAllocator{dir: dir}).lock(floor); ok {
		t.Fatalf("a second lock of port %d was taken", floor)
	}
	a := &portAllocator{inUse: map[int]*os.File{}, dir: dir, floor: floor, ceil: floor + 1000}
	var got []int
	for range 5 {
		ps, err := a.alloc(1)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ps...)
	}
	for _, p := range got {
		if held[p] {
			t.Errorf("port %d handed out while another allocator held it", p)
		}
	}
	a.release(got)
	other.release([]int{floor})
	if _, err := os.Stat(filepath.Join(dir, strconv.Itoa(floor))); !os.IsNotExist(err) {
		t.Errorf("lock file of a released port: %v", err)
	}
	f, ok := a.lock(floor)
	if !ok || f == nil {
		t.Errorf("port %d given back, but its lock was not taken again", floor)
	}
	unlock(f)
	if n, _ := os.ReadDir(dir); len(n) != 1000-11 {
		t.Errorf("%d lock files left, want %d (the other's)", len(n), 1000-11)
	}
}
