package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// shapeSession is a session of members n1..n<n> (agent connection i for
// ni, listening on port 400i) whose scripted policy grants f at the first
// request, after arming.
func shapeSession(t *testing.T, cat *catalog.Catalog, n int, f policy.Fault) (*session, *uint64) {
	t.Helper()
	pol := &scripted{plan: policy.Plan{Sites: []uint32{1}}, script: []policy.Fault{f}, done: true}
	var nodes []string
	addrs := map[string]string{}
	for i := 1; i <= n; i++ {
		name := "n" + string(rune('0'+i))
		nodes = append(nodes, name)
		addrs["127.0.0.1:400"+string(rune('0'+i))] = name
	}
	s := newSession(cat, TrialSpec{ID: "t1", Nodes: nodes}, pol.plan, pol.Decide)
	s.setAddresses(addrs)
	s.tagPeers = true
	for i := 1; i <= n; i++ {
		s.attach(PeerID(i), nodes[i-1], wire.RoleAgent, true)
	}
	seq := uint64(n)
	plans(t, s.arm(), &seq)
	return s, &seq
}

// call is one request of a member in a shape's table: the member's agent,
// the site and the peer's port ("" unknown), and the action it must get.
type call struct {
	name string
	id   PeerID
	site uint32
	port string
	act  wire.Action
}

func (c call) check(t *testing.T, s *session, at time.Time) {
	t.Helper()
	r := wire.Request{Site: c.site}
	if c.port != "" {
		r.Peer = "127.0.0.1:" + c.port
	}
	if resp, _ := s.request(c.id, &r, at); resp.Action != c.act {
		t.Errorf("%s: %+v, want action %v", c.name, resp, c.act)
	}
}

// TestSessionOneWay: a one-way cut granted at n1's dial to n2 cuts n1's
// calls to n2 only: n1 cannot reach n2 (its dials fail, its reads on the
// connections it dialled stall) while n2 still reaches n1 (n2's calls to
// n1 run, and so do n1's calls whose peer is unknown, the ones on the
// connections n2 dialled); only n1's peer sites become live, and the
// first peer call of n1 after the end heals it.
func TestSessionOneWay(t *testing.T) {
	s, seq := shapeSession(t, partitionCatalog(), 3, policy.Fault{Kind: catalog.KindOneWay, Delay: 3 * time.Second})
	resp, effs := s.request(1, &wire.Request{ID: 1, Site: 1, Peer: "localhost:4002"}, t0)
	if resp.Action != wire.ActError || resp.Arg != 2 {
		t.Fatalf("the asking dial: %+v, want ECONNREFUSED (error 2)", resp)
	}
	ps := plans(t, effs, seq)
	if got := ps[1].Sites; !slices.Equal(got, []uint32{1, 2, 3}) {
		t.Fatalf("n1's plan: %v, want the peer sites", got)
	}
	if got := ps[2].Sites; len(got) != 0 {
		t.Errorf("n2's plan: %v, want none live (its calls are not cut)", got)
	}
	if inj := s.inj; len(inj) != 1 || inj[0].Kind != catalog.KindOneWay || inj[0].Node != "n1" || inj[0].Peer != "n2" || inj[0].Delay != 3*time.Second {
		t.Fatalf("injections %+v", inj)
	}
	at := t0.Add(time.Second)
	for _, c := range []call{
		{"n1's dial to n2", 1, 1, "4002", wire.ActError},
		{"n1's read from n2 (a connection n1 dialled)", 1, 2, "4002", wire.ActStall},
		{"n1's read with no known peer (a connection n2 dialled)", 1, 2, "", wire.ActNone},
		{"n1's dial to n3", 1, 1, "4003", wire.ActNone},
		{"n2's dial to n1", 2, 1, "4001", wire.ActNone},
		{"n2's read from n1", 2, 2, "4001", wire.ActNone},
		{"n3's dial to n1", 3, 1, "4001", wire.ActNone},
	} {
		c.check(t, s, at)
	}
	resp, effs = s.request(1, &wire.Request{Site: 2, Peer: "127.0.0.1:4003"}, t0.Add(3*time.Second))
	if resp.Action != wire.ActNone {
		t.Fatalf("n1's read after the end: %+v, want none", resp)
	}
	if ps := plans(t, effs, seq); len(ps[1].Sites) != 0 {
		t.Fatalf("n1's plan after the heal: %+v, want none live", ps[1])
	}
	call{"n1's dial to n2 after the heal", 1, 1, "4002", wire.ActNone}.check(t, s, t0.Add(4*time.Second))
}

// TestSessionSplit: a split granted at n1's dial to n3 with n2 on n1's
// side cuts {n1, n2} from {n3, n4, n5} both ways: every member's peer
// sites become live, calls across the sides fail or stall, calls within
// a side and calls with no known peer run; the first peer call of a
// member after the end heals its arcs.
func TestSessionSplit(t *testing.T) {
	s, seq := shapeSession(t, partitionCatalog(), 5, policy.Fault{Kind: catalog.KindSplit, Delay: 3 * time.Second, Side: []string{"n2"}})
	resp, effs := s.request(1, &wire.Request{ID: 1, Site: 1, Peer: "127.0.0.1:4003"}, t0)
	if resp.Action != wire.ActError {
		t.Fatalf("the asking dial: %+v, want it cut", resp)
	}
	ps := plans(t, effs, seq)
	for id := PeerID(1); id <= 5; id++ {
		if got := ps[id].Sites; !slices.Equal(got, []uint32{1, 2, 3}) {
			t.Errorf("plan of n%d: %v, want the peer sites", id, got)
		}
	}
	if inj := s.inj; len(inj) != 1 || inj[0].Kind != catalog.KindSplit || inj[0].Node != "n1" || inj[0].Peer != "n3" || !slices.Equal(inj[0].Side, []string{"n2"}) {
		t.Fatalf("injections %+v", inj)
	}
	at := t0.Add(time.Second)
	for _, c := range []call{
		{"n1 → n2 (same side)", 1, 1, "4002", wire.ActNone},
		{"n2 → n1 (same side)", 2, 2, "4001", wire.ActNone},
		{"n2 → n4", 2, 1, "4004", wire.ActError},
		{"n2 reads n5", 2, 2, "4005", wire.ActStall},
		{"n4 → n1", 4, 1, "4001", wire.ActError},
		{"n5 reads n2", 5, 2, "4002", wire.ActStall},
		{"n3 → n4 (same side)", 3, 1, "4004", wire.ActNone},
		{"n5 reads n4 (same side)", 5, 2, "4004", wire.ActNone},
		{"n3's accept (peer unknown)", 3, 3, "", wire.ActNone},
	} {
		c.check(t, s, at)
	}
	_, effs = s.request(4, &wire.Request{Site: 2, Peer: "127.0.0.1:4005"}, t0.Add(3*time.Second))
	ps = plans(t, effs, seq)
	if got, ok := ps[4]; !ok || len(got.Sites) != 0 {
		t.Errorf("n4's plan after the heal: %+v (sent %v), want none live", got, ok)
	}
	if got := ps[1].Sites; !slices.Equal(got, []uint32{1, 2, 3}) {
		t.Errorf("n1's plan at n4's heal: %v, want its peer sites still (its arcs to n3 and n5 heal at its own calls)", got)
	}
	call{"n1 → n4 after the end", 1, 1, "4004", wire.ActNone}.check(t, s, t0.Add(4*time.Second))
}

// TestSessionSplitRefused: a split whose sides are unsound injects nothing
// and warns.
func TestSessionSplitRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		side []string
		port string
	}{
		{"peer unknown", 3, nil, ""},
		{"peer is the node", 3, nil, "4001"},
		{"peer on the node's side", 5, []string{"n3"}, "4003"},
		{"side no minority", 5, []string{"n2", "n4"}, "4003"},
		{"side not a member", 3, []string{"n9"}, "4002"},
		{"node twice", 5, []string{"n1"}, "4002"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := shapeSession(t, partitionCatalog(), tc.n, policy.Fault{Kind: catalog.KindSplit, Delay: time.Second, Side: tc.side})
			r := wire.Request{Site: 1}
			if tc.port != "" {
				r.Peer = "127.0.0.1:" + tc.port
			}
			resp, effs := s.request(1, &r, t0)
			if resp.Action != wire.ActNone || len(s.inj) != 0 || len(effs) != 1 || effs[0].Warn == "" || len(s.arcs) != 0 {
				t.Errorf("%+v, injections %v, effects %+v; want none and a warning", resp, s.inj, effs)
			}
		})
	}
}

// leaderCatalog is partitionCatalog with a role field whose leader is
// "StateLeader" (value 2).
func leaderCatalog() *catalog.Catalog {
	c := partitionCatalog()
	c.Role = &catalog.Role{Pkg: "m/raft", Type: "raft", Field: "state", RoleType: "StateType",
		Values: []catalog.RoleValue{{Value: 0, Name: "StateFollower"}, {Value: 2, Name: "StateLeader"}}}
	c.Hash = c.ComputeHash()
	return c
}

// TestSessionLeaderCut: a leader cut granted at the leader's disk call (a
// log append) lets the call run and cuts the leader off from all its
// peers from then on, as a partition; granted at a peer call, the call is
// the first one cut; granted to a member that does not lead, or where the
// catalog names no leader, it injects nothing and warns.
func TestSessionLeaderCut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cat     *catalog.Catalog
		site    uint32
		role    int64
		hasRole bool
		act     wire.Action
		cut     bool
	}{
		{"leader's disk call", leaderCatalog(), 0, 2, true, wire.ActNone, true},
		{"leader's dial", leaderCatalog(), 1, 2, true, wire.ActError, true},
		{"follower", leaderCatalog(), 0, 0, true, wire.ActNone, false},
		{"role unknown", leaderCatalog(), 0, 0, false, wire.ActNone, false},
		{"no role in the catalog", partitionCatalog(), 0, 2, true, wire.ActNone, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, seq := shapeSession(t, tc.cat, 3, policy.Fault{Kind: catalog.KindLeaderCut, Delay: 3 * time.Second})
			resp, effs := s.request(1, &wire.Request{Site: tc.site, Peer: "127.0.0.1:4002", Role: tc.role, HasRole: tc.hasRole}, t0)
			if resp.Action != tc.act {
				t.Errorf("the asking call: %+v, want action %v", resp, tc.act)
			}
			if !tc.cut {
				if len(s.inj) != 0 || len(effs) != 1 || effs[0].Warn == "" {
					t.Errorf("injections %v, effects %+v; want none and a warning", s.inj, effs)
				}
				return
			}
			if inj := s.inj; len(inj) != 1 || inj[0].Kind != catalog.KindLeaderCut || inj[0].Node != "n1" || inj[0].Role != "StateLeader" || inj[0].Delay != 3*time.Second {
				t.Fatalf("injections %+v", inj)
			}
			if got := plans(t, effs, seq)[1].Sites; !slices.Equal(got, []uint32{1, 2, 3}) {
				t.Fatalf("leader's plan: %v, want the peer sites", got)
			}
			at := t0.Add(time.Second)
			for _, c := range []call{
				{"leader's dial to n3", 1, 1, "4003", wire.ActError},
				{"leader's accept", 1, 3, "", wire.ActStall},
				{"n2's dial to the leader", 2, 1, "4001", wire.ActNone},
			} {
				c.check(t, s, at)
			}
		})
	}
}

// TestSessionLeader: the leader by the role hooks is the member whose
// current role is the leader value, the latest to become leader when a
// stale one still says so; none when nobody leads or the catalog names no
// leader value.
func TestSessionLeader(t *testing.T) {
	const lead, follow = "StateLeader", "StateFollower"
	rc := func(node, role string, s int) record.RoleChange {
		return record.RoleChange{Node: node, Role: role, Time: t0.Add(time.Duration(s) * time.Second)}
	}
	for _, tc := range []struct {
		name  string
		cat   *catalog.Catalog
		roles []record.RoleChange
		want  string
	}{
		{"one leader", leaderCatalog(), []record.RoleChange{rc("n1", follow, 0), rc("n2", lead, 1), rc("n3", follow, 1)}, "n2"},
		{"a new leader after a failover", leaderCatalog(), []record.RoleChange{rc("n2", lead, 1), rc("n2", follow, 5), rc("n3", lead, 6)}, "n3"},
		{"a stale leader and the newer one", leaderCatalog(), []record.RoleChange{rc("n1", lead, 1), rc("n3", lead, 6)}, "n3"},
		{"nobody leads", leaderCatalog(), []record.RoleChange{rc("n1", lead, 1), rc("n1", follow, 2)}, ""},
		{"no leader value in the catalog", partitionCatalog(), []record.RoleChange{rc("n1", lead, 1)}, ""},
	} {
		s := newSession(tc.cat, TrialSpec{ID: "t1", Nodes: []string{"n1", "n2", "n3"}}, policy.Plan{}, nil)
		for _, c := range tc.roles {
			s.role[c.Node] = c.Role
		}
		s.roles = tc.roles
		if got := s.leader(); got != tc.want {
			t.Errorf("%s: leader %q, want %q", tc.name, got, tc.want)
		}
		s.roles = nil // capped: only the current roles are known
		if got := s.leader(); (got == "") != (tc.want == "") {
			t.Errorf("%s, no role changes kept: leader %q, want one iff %q", tc.name, got, tc.want)
		}
	}
}
