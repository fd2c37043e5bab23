package controller

import (
	"fmt"
	"slices"
	"testing"
	"time"

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

// sendCatalog is a catalog whose site 0 is an in-process transport's
// send (catalog.PeerSend) with the transport's error, and site 1 a file
// write.
func sendCatalog() *catalog.Catalog {
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "raft.(*InmemTransport).makeRPC:send", Kind: catalog.KindError | catalog.KindPartition, IO: "net", Peer: catalog.PeerSend,
			Errors: []catalog.ErrorValue{{Name: "unreachable", Expr: `errors.New("failed to connect to peer")`}}},
		{Index: 1, ID: "x.save:os.WriteFile#0", Kind: catalog.KindError, IO: "disk", Errors: []catalog.ErrorValue{{Name: "EIO", Expr: "e"}}},
	}}
	cat.Hash = cat.ComputeHash()
	return cat
}

// TestSessionMemberCuts: in a process of three members (TrialSpec.Members)
// a cut granted at n1's send to n2 fails exactly the sends it cuts with the
// transport's error (variant 1), whatever member of the process makes
// them, and nothing else: a partition of n1 cuts n1's sends and the
// others' sends to n1; a disconnect n1–n2 both of their sends to each
// other; a one-way cut n1→n2 n1's sends to n2 only; a split with n1 alone
// of three the same as a partition, also when n3 made no request yet (the
// agent said it ranked three members). A send to an address no member
// announced (PeerSeq 0) and a file write are never cut; the first send
// after the end heals it. Every send that named two members is counted; a
// send that named no sender never reaches the policy.
func TestSessionMemberCuts(t *testing.T) {
	const cut, run = wire.ActError, wire.ActNone
	type send struct{ from, to uint32 } // ranks; to 0: an address no member announced
	sends := []send{{1, 2}, {2, 1}, {1, 3}, {3, 1}, {2, 3}, {3, 2}, {1, 0}}
	for _, tc := range []struct {
		name   string
		kind   catalog.Kind
		byRank bool          // the members are known from Request.Ranked only, not seen before the cut
		want   []wire.Action // for sends, in order
	}{
		{"partition", catalog.KindPartition, false, []wire.Action{cut, cut, cut, cut, run, run, cut}},
		{"disconnect", catalog.KindDisconnect, false, []wire.Action{cut, cut, run, run, run, run, run}},
		{"one-way", catalog.KindOneWay, false, []wire.Action{cut, run, run, run, run, run, run}},
		{"split", catalog.KindSplit, false, []wire.Action{cut, cut, cut, cut, run, run, run}},
		{"split, members by rank", catalog.KindSplit, true, []wire.Action{cut, cut, cut, cut, run, run, run}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}}
			s := newSession(sendCatalog(), TrialSpec{ID: "t1", Nodes: []string{"n1"}, Members: true}, pol.plan, pol.Decide)
			const p = PeerID(1)
			s.attach(p, "n1", wire.RoleAgent, true)
			s.arm()
			req := func(from, to uint32, site uint32) wire.Request {
				r := wire.Request{Site: site, Member: fmt.Sprint("m", from), MemberSeq: from, Ranked: 3}
				if to != 0 {
					r.Peer, r.PeerSeq = fmt.Sprint("addr-", to), to
				} else if site == 0 {
					r.Peer = "elsewhere"
				}
				return r
			}
			// Every member is seen before the cut (a split needs three),
			// or known by its rank only.
			asked := 0
			if !tc.byRank {
				for _, r := range []wire.Request{req(2, 0, 1), req(3, 0, 1)} {
					s.request(p, &r, t0)
				}
				asked = 2
			}
			// A send of no known member is not the policy's to cut.
			anon := req(0, 2, 0)
			if resp, _ := s.request(p, &anon, t0); resp.Action != run || len(pol.seen) != asked {
				t.Fatalf("a send of no member: %+v, the policy asked %d times; want none, %d", resp, len(pol.seen), asked)
			}
			pol.script, pol.done = []policy.Fault{{Kind: tc.kind, Delay: 3 * time.Second}}, true
			first := req(1, 2, 0)
			resp, effs := s.request(p, &first, t0)
			if resp.Action != wire.ActError || resp.Arg != 1 {
				t.Fatalf("the send granted the cut got %+v, want the transport's error", resp)
			}
			var seq uint64
			if pl := plans(t, effs, &seq)[p]; !slices.Contains(pl.Sites, 0) {
				t.Errorf("plan after the cut %+v: the send site must stay live", pl)
			}
			at := t0.Add(time.Second)
			for i, sd := range sends {
				r := req(sd.from, sd.to, 0)
				if resp, _ := s.request(p, &r, at); resp.Action != tc.want[i] {
					t.Errorf("send n%d→%d: %+v, want %v", sd.from, sd.to, resp, tc.want[i])
				}
			}
			w := req(1, 0, 1)
			if resp, _ := s.request(p, &w, at); resp.Action != run {
				t.Errorf("a file write of n1 during the cut: %+v, want none", resp)
			}
			late := req(1, 2, 0)
			if resp, _ := s.request(p, &late, t0.Add(4*time.Second)); resp.Action != run {
				t.Errorf("a send after the end: %+v, want none", resp)
			}
			res, _ := s.end()
			if res.MemberSends != 1+len(sends)-1+1 {
				t.Errorf("MemberSends %d, want %d", res.MemberSends, 1+len(sends)-1+1)
			}
			if len(res.Injections) != 1 || res.Injections[0].Node != "n1" || res.Injections[0].Kind != tc.kind {
				t.Errorf("injections %+v, want one %v on n1", res.Injections, tc.kind)
			}
		})
	}
}
