package agent

import (
	"testing"

	"github.com/gofault/gofault/agent/wire"
)

// TestMemberTagsRequests: a goroutine that entered a member's method
// names that member (and its rank, in the order members were first seen)
// in its requests until it enters another member's; a goroutine that
// entered none names none; without FlagMembers nothing is tagged.
func TestMemberTagsRequests(t *testing.T) {
	type want struct {
		member string
		seq    uint32
	}
	for _, tc := range []struct {
		name  string
		flags uint32
		run   func()
		want  []want
	}{
		{"three members, one goroutine each", wire.FlagMembers, func() {
			for _, m := range []string{"node-a", "node-b", "node-c"} {
				done := make(chan struct{})
				go func() { Member(m); Fault(1); close(done) }()
				<-done
			}
		}, []want{{"node-a", 1}, {"node-b", 2}, {"node-c", 3}}},
		{"a goroutine moves to another member", wire.FlagMembers, func() {
			done := make(chan struct{})
			go func() {
				Member("node-b")
				Member("node-a")
				Fault(1)
				Member("node-b")
				Member("node-b")
				Fault(1)
				close(done)
			}()
			<-done
		}, []want{{"node-a", 2}, {"node-b", 1}}},
		{"an untagged goroutine is no member", wire.FlagMembers, func() {
			done := make(chan struct{})
			go func() { Member("node-a"); close(done) }()
			<-done
			done = make(chan struct{})
			go func() { Fault(1); close(done) }()
			<-done
		}, []want{{"", 0}}},
		{"members not asked for", 0, func() {
			done := make(chan struct{})
			go func() { Member("node-a"); Fault(1); close(done) }()
			<-done
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
	run(func() { Member("a"); Role(2) })
	run(func() { Member("b"); Fault(1) })
	run(func() { Member("a"); Fault(1) })
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
