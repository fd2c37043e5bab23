package agent

import (
	"sync"
	"testing"

	"github.com/gofault/gofault/agent/wire"
)

// TestSetupAsksNothing: while a setup function runs, in this goroutine
// or another, a live site asks the controller nothing and gets no fault;
// after its end, and after a nested one's, the site asks again.
func TestSetupAsksNothing(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{70}}, always(wire.ActError, 2))
	attach(t, f)
	t.Cleanup(func() { setupDepth.Store(0) })

	setup := func(inner func()) {
		SetupEnter()
		defer SetupExit()
		inner()
	}
	setup(func() {
		if got := Fault(70); got != 0 {
			t.Errorf("Fault in setup = %d, want 0", got)
		}
		setup(func() {}) // nested: the outer call still runs
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // another goroutine, started by the helper
			defer wg.Done()
			if got := Fault(70); got != 0 {
				t.Errorf("Fault in a goroutine during setup = %d, want 0", got)
			}
		}()
		wg.Wait()
	})
	if got := f.nRequests(); got != 0 {
		t.Fatalf("controller saw %d requests during setup, want 0", got)
	}
	if got := Fault(70); got != 2 {
		t.Errorf("Fault after setup = %d, want 2", got)
	}
	func() {
		defer func() { recover() }()
		setup(func() { panic("setup failed") })
	}()
	if got := Fault(70); got != 2 {
		t.Errorf("Fault after a setup that panicked = %d, want 2", got)
	}
	if got := f.nRequests(); got != 2 {
		t.Errorf("controller saw %d requests, want 2", got)
	}
}
