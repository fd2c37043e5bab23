package controller

import (
	"slices"
	"testing"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
)

// TestSessionMembers: in a trial that splits a process into in-process
// cluster members, a request naming a member is that member's node
// (n<rank>) for the policy, the injection and the occurrence count; a
// request naming none is the process's node; a member role event is that
// member's; the result lists the members seen. Without TrialSpec.Members
// the names are ignored.
func TestSessionMembers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		members   bool
		plan      policy.Plan
		wantNodes []string // the policy's requests' nodes
		wantOcc   []int
		wantInj   string // the node of the one injection
		wantSeen  []Member
		wantRoles []string // node=role
	}{
		{
			name: "members", members: true, plan: policy.Plan{Sites: []uint32{0}},
			wantNodes: []string{"n2", "n1", "n2", "n3", "n1"},
			wantOcc:   []int{1, 1, 2, 1, 2},
			wantInj:   "n2",
			wantSeen:  []Member{{Node: "n1", Value: "a", Requests: 1}, {Node: "n2", Value: "b", Requests: 2}, {Node: "n3", Value: "c", Requests: 1}},
			wantRoles: []string{"n1=role=0", "n3=role=2"},
		},
		{
			name: "a plan naming one member", members: true, plan: policy.Plan{Sites: []uint32{0}, Nodes: []string{"n3"}},
			wantNodes: []string{"n3"},
			wantOcc:   []int{1},
			wantInj:   "n3",
			wantSeen:  []Member{{Node: "n1", Value: "a", Requests: 1}, {Node: "n2", Value: "b", Requests: 2}, {Node: "n3", Value: "c", Requests: 1}},
			wantRoles: []string{"n1=role=0", "n3=role=2"},
		},
		{
			name: "members off", members: false, plan: policy.Plan{Sites: []uint32{0}},
			wantNodes: []string{"n1", "n1", "n1", "n1", "n1"},
			wantOcc:   []int{1, 2, 3, 4, 5},
			wantInj:   "n1",
			wantRoles: []string{"n1=role=0", "n1=role=2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := &scripted{plan: tc.plan, script: []policy.Fault{{Kind: catalog.KindError, Error: 1}}}
			s := newTestSession(pol, TrialSpec{ID: "t1", Index: 1, Nodes: []string{"n1"}, Members: tc.members})
			const p = PeerID(1)
			w := s.attach(p, "n1", wire.RoleAgent, true)
			if got := w.Plan.Flags&wire.FlagMembers != 0; got != tc.members {
				t.Fatalf("welcome plan flags %b: FlagMembers %v, want %v", w.Plan.Flags, got, tc.members)
			}
			s.arm()
			for _, r := range []wire.Request{
				{ID: 1, Site: 0, Member: "b", MemberSeq: 2},
				{ID: 2, Site: 0, Member: "a", MemberSeq: 1},
				{ID: 3, Site: 0, Member: "b", MemberSeq: 2},
				{ID: 4, Site: 0, Member: "c", MemberSeq: 3},
				{ID: 5, Site: 0}, // no member: the process's node
			} {
				s.request(p, &r, t0)
			}
			s.events(p, []wire.Event{{Kind: wire.EvRole, Time: t0.UnixNano(), A: 0, B: 1}, {Kind: wire.EvRole, Time: t0.UnixNano() + 1, A: 2, B: 3}})
			res, _ := s.end()
			var nodes []string
			var occ []int
			for _, r := range pol.seen {
				nodes, occ = append(nodes, r.Node), append(occ, r.Occurrence)
			}
			if !slices.Equal(nodes, tc.wantNodes) || !slices.Equal(occ, tc.wantOcc) {
				t.Errorf("policy saw nodes %v occurrences %v, want %v %v", nodes, occ, tc.wantNodes, tc.wantOcc)
			}
			if len(res.Injections) != 1 || res.Injections[0].Node != tc.wantInj {
				t.Errorf("injections %+v, want one on %s", res.Injections, tc.wantInj)
			}
			if tc.members && res.MemberRequests != 4 {
				t.Errorf("MemberRequests %d, want 4", res.MemberRequests)
			}
			if !slices.Equal(res.Members, tc.wantSeen) {
				t.Errorf("members %+v, want %+v", res.Members, tc.wantSeen)
			}
			var roles []string
			for _, r := range res.Roles {
				roles = append(roles, r.Node+"="+r.Role)
			}
			if !slices.Equal(roles, tc.wantRoles) {
				t.Errorf("roles %v, want %v", roles, tc.wantRoles)
			}
		})
	}
}
