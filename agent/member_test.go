package agent

import (
	"slices"
	"testing"

	"github.com/gofault/gofault/agent/wire"
)

// TestMemberTagsRequests: a goroutine running a member's method names
// that member (and its rank, in the order members were first seen) in its
// requests, the innermost member method on its stack when methods of
// several members nest, and none once it left them all; a goroutine that
// entered none names none; without FlagMembers nothing is tagged.
func TestMemberTagsRequests(t *testing.T) {
	type want struct {
		member string
		seq    uint32
	}
	method := func(v string, body func()) { defer MemberExit(MemberEnter(v)); body() }
	inGoroutine := func(fn func()) {
		done := make(chan struct{})
		go func() { fn(); close(done) }()
		<-done
	}
	for _, tc := range []struct {
		name  string
		flags uint32
		run   func()
		want  []want
	}{
		{"three members, one goroutine each", wire.FlagMembers, func() {
			for _, m := range []string{"node-a", "node-b", "node-c"} {
				inGoroutine(func() { method(m, func() { Fault(1) }) })
			}
		}, []want{{"node-a", 1}, {"node-b", 2}, {"node-c", 3}}},
		{"nested methods of two members", wire.FlagMembers, func() {
			inGoroutine(func() {
				method("node-b", func() {
					method("node-a", func() {
						method("node-a", func() { Fault(1) })
						Fault(1)
					})
					Fault(1)
				})
				Fault(1) // left them all
			})
		}, []want{{"node-a", 2}, {"node-a", 2}, {"node-b", 1}, {"", 0}}},
		{"an untagged goroutine is no member", wire.FlagMembers, func() {
			inGoroutine(func() { MemberEnter("node-a") }) // never left: a dead goroutine's tag
			inGoroutine(func() { Fault(1) })
		}, []want{{"", 0}}},
		{"members not asked for", 0, func() {
			inGoroutine(func() { method("node-a", func() { Fault(1) }) })
		}, []want{{"", 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, wire.Plan{Sites: []uint32{1}, Flags: tc.flags}, always(wire.ActNone, 0))
			attach(t, f)
			tc.run()
			f.mu.Lock()
			defer f.mu.Unlock()
			var got []want
			for _, r := range f.requests {
				got = append(got, want{r.Member, r.MemberSeq})
			}
			if len(got) != len(tc.want) {
				t.Fatalf("requests' members %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("requests' members %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestMemberRole: a role written by a member's goroutine is that
// member's: the member's requests carry it, another member's do not, and
// the event names the member's rank.
func TestMemberRole(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1}, Flags: wire.FlagMembers}, always(wire.ActNone, 0))
	attach(t, f)
	run := func(fn func()) {
		done := make(chan struct{})
		go func() { fn(); close(done) }()
		<-done
	}
	run(func() { MemberEnter("a"); Role(2) })
	run(func() { MemberEnter("b"); Fault(1) })
	run(func() { MemberEnter("a"); Fault(1) })
	waitFor(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, e := range f.events {
			if e.Kind == wire.EvRole && e.A == 2 && e.B == 1 {
				return true
			}
		}
		return false
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 2 {
		t.Fatalf("%d requests, want 2", len(f.requests))
	}
	if r := f.requests[0]; r.Member != "b" || r.HasRole {
		t.Errorf("member b's request %+v: want no role (only a wrote one)", r)
	}
	if r := f.requests[1]; r.Member != "a" || !r.HasRole || r.Role != 2 {
		t.Errorf("member a's request %+v: want role 2", r)
	}
}

// BenchmarkMemberMethod is the member hook of one method call (enter and
// exit), with members not tagged (the plan does not ask) and tagged (the
// goroutine already runs the member: the common case), without and with
// the member's address (MemberEnterAt, a transport rule).
func BenchmarkMemberMethod(b *testing.B) {
	for _, bc := range []struct {
		name  string
		flags uint32
		addr  string // MemberEnterAt's, "" for MemberEnter
	}{{"off", 0, ""}, {"on", wire.FlagMembers, ""}, {"on-addr", wire.FlagMembers, "addr-a"}} {
		b.Run(bc.name, func(b *testing.B) {
			current.Store(&plan{flags: bc.flags})
			resetMembers()
			b.Cleanup(func() { current.Store(emptyPlan); resetMembers() })
			enter := func() uint32 { return MemberEnter("node-a") }
			if bc.addr != "" {
				enter = func() uint32 { return MemberEnterAt("node-a", bc.addr) }
			}
			defer MemberExit(enter())
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				MemberExit(enter())
			}
		})
	}
}

// TestSendNamesPeerMember: a send of an in-process transport names the
// member whose address it goes to once that member announced it
// (MemberEnterAt), none for an address no member announced, and does
// what the controller answers (the error variant); a site that is not
// live asks nothing.
func TestSendNamesPeerMember(t *testing.T) {
	f := newFake(t, wire.Plan{Sites: []uint32{1}, Flags: wire.FlagMembers}, func(r *wire.Request) (wire.Response, bool) {
		if r.MemberSeq == 1 && r.PeerSeq == 2 {
			return wire.Response{Action: wire.ActError, Arg: 1}, true // the arc a→b is cut
		}
		return wire.Response{}, true
	})
	attach(t, f)
	run := func(fn func()) {
		done := make(chan struct{})
		go func() { fn(); close(done) }()
		<-done
	}
	member := func(v, addr string, body func()) { defer MemberExit(MemberEnterAt(v, addr)); body() }
	var got []int
	run(func() { member("a", "addr-a", func() {}) })
	run(func() { member("b", "addr-b", func() {}) })
	run(func() {
		member("a", "addr-a", func() {
			got = append(got, Send(1, "", "addr-b"), Send(1, "", "addr-c"), Send(2, "", "addr-b"))
		})
	})
	run(func() { member("b", "addr-b", func() { got = append(got, Send(1, "", "addr-a")) }) })
	// A goroutine of no member sends for a by a's address; an unknown
	// sender address leaves the goroutine's member (none).
	run(func() { got = append(got, Send(1, "addr-a", "addr-b"), Send(1, "addr-x", "addr-b")) })
	if want := []int{1, 0, 0, 0, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("sends returned %v, want %v (a→b cut only)", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	type pair struct {
		from, to uint32
		peer     string
	}
	var pairs []pair
	for _, r := range f.requests {
		pairs = append(pairs, pair{r.MemberSeq, r.PeerSeq, r.Peer})
		if r.Ranked != 2 {
			t.Errorf("request %+v: Ranked %d, want 2 (a and b)", r, r.Ranked)
		}
	}
	if want := []pair{{1, 2, "addr-b"}, {1, 0, "addr-c"}, {2, 1, "addr-a"}, {1, 2, "addr-b"}, {0, 2, "addr-b"}}; !slices.Equal(pairs, want) {
		t.Errorf("requests (member, peer member, peer) %v, want %v", pairs, want)
	}
}
