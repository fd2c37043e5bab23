package agent

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// TestStallHealsWithPlan: a call told to stall (its node is cut off from
// its peers) blocks until a plan without its site comes (the heal), not
// for the whole stall, and then runs the real call.
func TestStallHealsWithPlan(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1}}, always(wire.ActStall, int64(10*time.Second)))
	attach(t, f)
	var ret atomic.Int64
	ret.Store(-1)
	start := time.Now()
	go func() { ret.Store(int64(Fault(1))) }()
	waitFor(t, func() bool { return f.nRequests() == 1 })
	time.Sleep(50 * time.Millisecond)
	if ret.Load() != -1 {
		t.Fatalf("Fault returned %d while cut off", ret.Load())
	}
	f.mu.Lock()
	f.conn.Write(wire.AppendPlan(nil, &wire.Plan{Epoch: 2}))
	f.mu.Unlock()
	waitFor(t, func() bool { return ret.Load() != -1 })
	if ret.Load() != 0 {
		t.Fatalf("Fault after the heal = %d, want 0 (the real call)", ret.Load())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("healed after %v, want at the plan", d)
	}
}

// TestStallAsksAgain: after a stall runs out with the site still live, the
// call asks again and does what the answer says.
func TestStallAsksAgain(t *testing.T) {
	var n atomic.Int32
	f := newFake(t, wire.Plan{Sites: []uint32{1}}, func(*wire.Request) (wire.Response, bool) {
		if n.Add(1) == 1 {
			return wire.Response{Action: wire.ActStall, Arg: int64(20 * time.Millisecond)}, true
		}
		return wire.Response{Action: wire.ActError, Arg: 2}, true
	})
	attach(t, f)
	if k := Fault(1); k != 2 || f.nRequests() != 2 {
		t.Fatalf("Fault = %d after %d requests, want error 2 after 2", k, f.nRequests())
	}
}

// TestDialTagsPeer: a dial's request names the address dialled, and later
// requests of the same goroutine (reads on that connection) name it too;
// another goroutine's requests do not, and a dial that is not live still
// tags its goroutine.
func TestDialTagsPeer(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1, 2}, Flags: wire.FlagPeers}, always(wire.ActNone, 0))
	attach(t, f)
	Dial(1, "127.0.0.1:4001")
	Fault(2)
	done := make(chan struct{})
	go func() { Fault(2); close(done) }()
	<-done
	Dial(3, "127.0.0.1:4002") // not live: no request, but a tag
	Fault(2)
	f.mu.Lock()
	defer f.mu.Unlock()
	var got []string
	for _, r := range f.requests {
		got = append(got, r.Peer)
	}
	want := []string{"127.0.0.1:4001", "127.0.0.1:4001", "", "127.0.0.1:4002"}
	if len(got) != len(want) {
		t.Fatalf("requests' peers %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("requests' peers %q, want %q", got, want)
		}
	}
}

// TestPeerTagOfDeadGoroutine: where goroutine identities are reused, a
// tag names the function its goroutine was started with, so a goroutine
// that reuses a dead one's identity but runs another function does not
// inherit what the dead one dialled.
func TestPeerTagOfDeadGoroutine(t *testing.T) {
	defer func(u bool) { uniqueIDs = u }(uniqueIDs)
	uniqueIDs = false // as where the goroutine ID's offset is unknown
	const g = 0xdead00
	done := make(chan string)
	go func() { tagPeer(g, "127.0.0.1:4001"); done <- "" }()
	<-done
	go func() { done <- peerOf(g) }() // another function: another root
	if got := <-done; got != "" {
		t.Errorf("a goroutine running another function inherited the tag %q", got)
	}
	go func() { tagPeer(g, "127.0.0.1:4002"); untagPeer(g); done <- peerOf(g) }()
	if got := <-done; got != "" {
		t.Errorf("after untagPeer the goroutine still names %q", got)
	}
	go func() { tagPeer(g, "127.0.0.1:4003"); done <- peerOf(g) }()
	if got := <-done; got != "127.0.0.1:4003" {
		t.Errorf("the dialling goroutine names %q, want its own dial", got)
	}
}

// TestAcceptForgetsDial: a goroutine that serves a peer's request (its
// accept site) no longer names what it dialled before.
func TestAcceptForgetsDial(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1, 2}, Flags: wire.FlagPeers}, always(wire.ActNone, 0))
	attach(t, f)
	Dial(3, "127.0.0.1:4001")
	Accept(1)
	Fault(2)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 2 || f.requests[0].Peer != "" || f.requests[1].Peer != "" {
		t.Fatalf("requests %+v, want two without a peer", f.requests)
	}
}

// TestDialWithoutFlagPeers: without wire.FlagPeers (no disconnect in the
// campaign) a dial still names its address, but tags nothing.
func TestDialWithoutFlagPeers(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1, 2}}, always(wire.ActNone, 0))
	attach(t, f)
	Dial(1, "127.0.0.1:4001")
	Fault(2)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 2 || f.requests[0].Peer != "127.0.0.1:4001" || f.requests[1].Peer != "" {
		t.Fatalf("requests %+v, want the dial's address and then none", f.requests)
	}
}

// BenchmarkDialNotCandidate is BenchmarkHookNotCandidate at a peer dial in
// a campaign without disconnects: no tag.
func BenchmarkDialNotCandidate(b *testing.B) {
	current.Store(newPlan(&wire.Plan{Sites: []uint32{3, 64, 700, 4095}}))
	defer current.Store(emptyPlan)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sink += Dial(1000, "127.0.0.1:4001")
	}
}

// BenchmarkDialTagged is a peer dial that is not live in a campaign with
// disconnects (wire.FlagPeers): the goroutine is tagged, here with the
// peer it dialled before (the common case: a sender re-dials its peer).
func BenchmarkDialTagged(b *testing.B) {
	current.Store(newPlan(&wire.Plan{Sites: []uint32{3, 64, 700, 4095}, Flags: wire.FlagPeers}))
	defer current.Store(emptyPlan)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sink += Dial(1000, "127.0.0.1:4001")
	}
}

// BenchmarkDialNewPeer is BenchmarkDialTagged when each dial goes to
// another peer than the last: the stack walk that names the goroutine's
// function.
func BenchmarkDialNewPeer(b *testing.B) {
	current.Store(newPlan(&wire.Plan{Sites: []uint32{3, 64, 700, 4095}, Flags: wire.FlagPeers}))
	defer current.Store(emptyPlan)
	addrs := [2]string{"127.0.0.1:4001", "127.0.0.1:4002"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sink += Dial(1000, addrs[i%2])
	}
}

// TestGoroutineIDs: goroutine identities are the runtime's goroutine IDs
// (never reused), read from the descriptor where its offset was found.
func TestGoroutineIDs(t *testing.T) {
	if !uniqueIDs {
		t.Skip("the goroutine ID's offset was not found on this runtime: identities are descriptor addresses")
	}
	for i := 0; i < 8; i++ {
		got := make(chan [2]uint64)
		go func() { got <- [2]uint64{goroutine(), stackGoid()} }()
		if ids := <-got; ids[0] != ids[1] {
			t.Fatalf("goroutine() = %d, runtime.Stack says %d", ids[0], ids[1])
		}
	}
}
