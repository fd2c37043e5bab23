package cluster

import (
	"net"
	"sync"
	"testing"
)

func TestAllocPorts(t *testing.T) {
	ceil := portCeiling()
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
	left := len(ports.inUse)
	ports.mu.Unlock()
	if left != 0 {
		t.Errorf("%d ports still held after release", left)
	}
}
