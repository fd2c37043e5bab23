package agent

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// withBlocks makes the build count n blocks for one test, with a clean table.
func withBlocks(t *testing.T, n int) {
	t.Helper()
	clear(Cov[:])
	setCoverBlocks(strconv.Itoa(n))
	t.Cleanup(func() { clear(Cov[:]); setCoverBlocks(coverBlocks) })
}

// coveredBlocks decodes the EvCover events of buf.
func coveredBlocks(t *testing.T, buf []byte) []uint32 {
	t.Helper()
	var evs wire.Events
	if err := wire.DecodeEvents(buf, &evs); err != nil {
		t.Fatal(err)
	}
	var out []uint32
	for _, e := range evs.Events {
		if e.Kind != wire.EvCover {
			t.Fatalf("event %+v, want EvCover", e)
		}
		var err error
		if out, err = wire.DecodeBlocks(out, e.Data); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestAppendCoveredReportsNewBlocksOnce(t *testing.T) {
	withBlocks(t, 21) // not a multiple of 8: the tail is scanned too
	now := time.Unix(1, 0)
	for _, step := range []struct {
		set  []int
		want []uint32
	}{
		{nil, nil},
		{[]int{0, 7, 8, 20}, []uint32{0, 7, 8, 20}},
		{[]int{0, 7}, nil}, // already reported
		{[]int{3, 7, 16}, []uint32{3, 16}},
		{[]int{21, 100}, nil}, // past the build's blocks: never scanned
	} {
		for _, i := range step.set {
			Cov[i] = 1
		}
		if got := coveredBlocks(t, appendCovered(nil, now)); !slices.Equal(got, step.want) {
			t.Errorf("after setting %v: reported %v, want %v", step.set, got, step.want)
		}
	}
	resetCovered() // a new connection hears everything again
	if got := coveredBlocks(t, appendCovered(nil, now)); len(got) != 6 {
		t.Errorf("after reset: reported %v, want the 6 blocks set", got)
	}
}

func TestAppendCoveredSplitsLargeReports(t *testing.T) {
	n := maxBlocksPerEvent + 10
	withBlocks(t, n)
	for i := 0; i < n; i++ {
		Cov[i] = 1
	}
	buf := appendCovered(nil, time.Unix(1, 0))
	var evs wire.Events
	if err := wire.DecodeEvents(buf, &evs); err != nil || len(evs.Events) != 2 {
		t.Fatalf("%d events (%v), want 2", len(evs.Events), err)
	}
	if got := coveredBlocks(t, buf); len(got) != n || got[n-1] != uint32(n-1) {
		t.Errorf("reported %d blocks, want %d", len(got), n)
	}
}

func TestCoverageReachesController(t *testing.T) {
	withBlocks(t, 100)
	f := newFake(t, wire.Plan{}, always(wire.ActNone, 0))
	Cov[42] = 1 // before the connection: reported with its first batch
	attach(t, f)
	got := func() []uint32 {
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []uint32
		for _, e := range f.events {
			if e.Kind == wire.EvCover {
				out, _ = wire.DecodeBlocks(out, e.Data)
			}
		}
		return out
	}
	waitFor(t, func() bool { return len(got()) == 1 })
	// Generated code writes the table without synchronisation, which the
	// race detector reports (builds with -race have no counters); the test
	// writes it under the scan's lock.
	covered.mu.Lock()
	Cov[43], Cov[99] = 1, 1
	covered.mu.Unlock()
	waitFor(t, func() bool { return len(got()) == 3 })
	if b := got(); !slices.Equal(b, []uint32{42, 43, 99}) {
		t.Errorf("controller got blocks %v, want [42 43 99]", b)
	}
}

// BenchmarkCounter measures one block counter as generated code writes it
// (a load, and the store only the first time), and a bare store, on one
// goroutine and on all Ps at once: concurrent bare stores to one cache
// line make it bounce between cores, the load keeps it shared.
func BenchmarkCounter(b *testing.B) {
	b.Run("checked", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if Cov[1234] == 0 {
				Cov[1234] = 1
			}
		}
	})
	b.Run("store", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Cov[1234] = 1
		}
	})
	b.Run("checked-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if Cov[1234] == 0 {
					Cov[1234] = 1
				}
				if Cov[1235] == 0 {
					Cov[1235] = 1
				}
			}
		})
	})
	b.Run("store-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				Cov[1234] = 1
				Cov[1235] = 1
			}
		})
	})
}

// BenchmarkScan measures the flusher's scan of 40k blocks (etcd's order of
// magnitude) with nothing new: what every flushInterval costs.
func BenchmarkScan(b *testing.B) {
	clear(Cov[:])
	setCoverBlocks("40000")
	defer setCoverBlocks(coverBlocks)
	for i := 0; i < 40000; i += 3 {
		Cov[i] = 1
	}
	appendCovered(nil, time.Now())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		appendCovered(nil, time.Now())
	}
}

// TestCrashSendsCoverage: a hook told to crash sends the coverage the
// flusher has not sent yet before it waits for the kill.
func TestCrashSendsCoverage(t *testing.T) {
	withBlocks(t, 16)
	f := newFake(t, wire.Plan{}, always(wire.ActNone, 0))
	// No start: no flusher, so only the crash path can send.
	c, err := connect(f.addr(), wire.Hello{Version: wire.Version, Role: wire.RoleAgent, Node: "n1"}, ConnectTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer current.Store(emptyPlan)
	Cov[7] = 1
	c.event(wire.Event{Kind: wire.EvRole, A: 2})
	done := make(chan struct{})
	go func() { c.awaitKill(); close(done) }()
	waitFor(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.events) == 2
	})
	c.close() // the controller "killed" the process: the hook returns
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.events[0].Kind != wire.EvRole || f.events[1].Kind != wire.EvCover {
		t.Fatalf("events %+v, want the queued role then the coverage", f.events)
	}
	if b, err := wire.DecodeBlocks(nil, f.events[1].Data); err != nil || !slices.Equal(b, []uint32{7}) {
		t.Errorf("blocks %v, %v; want [7]", b, err)
	}
}
