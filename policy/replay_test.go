package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// TestReplay feeds a replay the requests of a re-run trial and checks which
// ones it grants: the recorded node, site and stack, at or after the
// recorded occurrence, one recorded injection after the other.
func TestReplay(t *testing.T) {
	cat := ledCatalog()
	wal, step := &cat.Sites[0], &cat.Sites[1]
	sync, snap := stackOf("wal.save", "raft.loop"), stackOf("wal.save", "snap.save")
	// The two writes of a snapshot: one caller, two lines.
	at := func(st []record.Frame, line int) []record.Frame {
		st = append([]record.Frame(nil), st...)
		st[len(st)-1].File, st[len(st)-1].Line = "snap.go", line
		return st
	}
	data, reqs := at(snap, 434), at(snap, 437)
	// req is the occ-th request at site s from node.
	req := func(node string, s int, st []record.Frame, occ int) Request {
		return Request{Node: node, Site: &cat.Sites[s], Stack: st, Occurrence: occ}
	}
	// peerReq sets the member the request's call talks to.
	peerReq := func(r Request, peer string) Request {
		r.Peer = peer
		return r
	}
	// lead sets the role of the requesting member.
	lead := func(r Request, role string) Request {
		r.Role = role
		return r
	}
	tests := []struct {
		name     string
		recorded []record.Injection
		requests []Request
		want     string // granted request indices and faults
		missing  int
		lines    bool // MatchLines: the original's very build
	}{
		{
			name:     "the same build tells one caller's two calls apart",
			recorded: []record.Injection{{Node: "n1", SiteID: wal.ID, Kind: catalog.KindCrash, Stack: reqs, Occurrence: 5}},
			requests: []Request{req("n1", 0, data, 5), req("n1", 0, reqs, 6), req("n1", 0, data, 7)},
			want:     "[1:crash]",
			lines:    true,
		},
		{
			name:     "another build matches functions only",
			recorded: []record.Injection{{Node: "n1", SiteID: wal.ID, Kind: catalog.KindCrash, Stack: reqs, Occurrence: 5}},
			requests: []Request{req("n1", 0, data, 5), req("n1", 0, reqs, 6)},
			want:     "[0:crash]",
		},
		{
			name:     "the recorded occurrence, not the first match",
			recorded: []record.Injection{{Node: "n1", SiteID: wal.ID, Kind: catalog.KindError, Error: "ENOSPC", Stack: sync, Occurrence: 3}},
			requests: []Request{req("n1", 0, sync, 1), req("n2", 0, sync, 1), req("n1", 0, sync, 2), req("n1", 0, sync, 3), req("n1", 0, sync, 4)},
			want:     "[3:error:2]",
		},
		{
			name:     "a later occurrence when the re-run made fewer requests before it",
			recorded: []record.Injection{{Node: "n1", SiteID: wal.ID, Kind: catalog.KindDelay, Delay: time.Second, Stack: snap, Occurrence: 3}},
			requests: []Request{req("n1", 0, sync, 1), req("n1", 0, snap, 2), req("n1", 0, sync, 3), req("n1", 0, snap, 4)},
			want:     "[3:delay:1s]",
		},
		{
			name:     "records without occurrence (older stores) match the first request",
			recorded: []record.Injection{{Node: "n2", SiteID: wal.ID, Kind: catalog.KindCrash, Stack: sync}},
			requests: []Request{req("n1", 0, sync, 1), req("n2", 0, sync, 1)},
			want:     "[1:crash]",
		},
		{
			name: "two injections in order",
			recorded: []record.Injection{
				{Node: "n1", SiteID: step.ID, Kind: catalog.KindError, Error: "ErrStopped", Occurrence: 2},
				{Node: "n3", SiteID: wal.ID, Kind: catalog.KindError, Error: "EIO", Stack: sync, Occurrence: 1},
			},
			requests: []Request{req("n3", 0, sync, 1), req("n1", 1, nil, 1), req("n1", 1, nil, 2), req("n3", 0, sync, 2)},
			want:     "[2:error:1 3:error:1]",
		},
		{
			name:     "a leadercut cuts whichever member leads at the site, at its recorded occurrence or later",
			recorded: []record.Injection{{Node: "n3", Role: "StateLeader", SiteID: wal.ID, Kind: catalog.KindLeaderCut, Delay: 3 * time.Second, Stack: sync, Occurrence: 2}},
			requests: []Request{
				lead(req("n3", 0, sync, 2), "StateFollower"), // the original's member, not leading now
				lead(req("n1", 0, sync, 1), "StateLeader"),   // leading, before the occurrence
				lead(req("n1", 0, snap, 2), "StateLeader"),   // another stack
				lead(req("n1", 0, sync, 2), "StateLeader"),
			},
			want: "[3:leadercut:3s]",
		},
		{
			name: "held arc cuts hold until the recorded condition, with the recorded cap",
			recorded: []record.Injection{
				{Node: "n1", Peer: "n2", SiteID: wal.ID, Kind: catalog.KindDisconnect, Delay: 2 * time.Second, Until: "requests=20", Cap: 15 * time.Second, Met: "the other members' clients made 20 requests that succeeded", Stack: sync, Occurrence: 1},
				{Node: "n1", Peer: "n2", SiteID: wal.ID, Kind: catalog.KindOneWay, Delay: 15 * time.Second, Until: "leader", Cap: 15 * time.Second, Stack: sync, Occurrence: 2},
				{Node: "n1", Peer: "n2", Side: []string{"n3"}, SiteID: wal.ID, Kind: catalog.KindSplit, Delay: 4 * time.Second, Until: "site=SaveSnap", Cap: 15 * time.Second, Met: "n2 reached SaveSnap", Stack: sync, Occurrence: 3},
			},
			requests: []Request{
				peerReq(req("n1", 0, sync, 1), "n3"), // another peer
				peerReq(req("n1", 0, sync, 1), "n2"),
				peerReq(req("n1", 0, sync, 2), "n2"),
				peerReq(req("n1", 0, sync, 3), "n2"),
			},
			want: "[1:disconnect:until=requests=20:15s 2:oneway:until=leader:15s 3:split:until=site=SaveSnap:15s]",
		},
		{
			name:     "an error on a follower stays on its member whatever the roles now",
			recorded: []record.Injection{{Node: "n3", Role: "StateFollower", SiteID: wal.ID, Kind: catalog.KindError, Error: "EIO", Stack: sync, Occurrence: 1}},
			requests: []Request{lead(req("n1", 0, sync, 1), "StateFollower"), lead(req("n3", 0, sync, 1), "StateLeader")},
			want:     "[1:error:1]",
		},
		{
			name:     "an error on the leader strikes whichever member leads now",
			recorded: []record.Injection{{Node: "n3", Role: "StateLeader", SiteID: wal.ID, Kind: catalog.KindError, Error: "EIO", Stack: sync, Occurrence: 1}},
			requests: []Request{lead(req("n3", 0, sync, 1), "StateFollower"), lead(req("n1", 0, sync, 1), "StateLeader")},
			want:     "[1:error:1]",
		},
		{
			name:     "a crash of the leader strikes whichever member leads now, at its recorded occurrence or later",
			recorded: []record.Injection{{Node: "n1", Role: "StateLeader", SiteID: wal.ID, Kind: catalog.KindCrash, Stack: sync, Occurrence: 2}},
			requests: []Request{
				lead(req("n1", 0, sync, 2), "StateFollower"), // the original's member, not leading now
				lead(req("n2", 0, sync, 1), "StateLeader"),   // leading, before the occurrence
				lead(req("n2", 0, sync, 2), "StateLeader"),
			},
			want: "[2:crash]",
		},
		{
			name:     "a disconnect of the leader stays between its named members",
			recorded: []record.Injection{{Node: "n1", Peer: "n2", Role: "StateLeader", SiteID: wal.ID, Kind: catalog.KindDisconnect, Delay: time.Second, Stack: sync, Occurrence: 1}},
			requests: []Request{peerReq(lead(req("n3", 0, sync, 1), "StateLeader"), "n2"), peerReq(lead(req("n1", 0, sync, 1), "StateFollower"), "n2")},
			want:     "[1:disconnect:1s]",
		},
		{
			name: "a site or error gone from the catalog is reported and skipped",
			recorded: []record.Injection{
				{Node: "n1", SiteID: "gone#0", Kind: catalog.KindError, Error: "EIO"},
				{Node: "n1", SiteID: wal.ID, Kind: catalog.KindError, Error: "EPERM"},
			},
			requests: []Request{req("n1", 0, sync, 1)},
			want:     "[]",
			missing:  2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReplay(cat, tt.recorded)
			if tt.lines {
				r.MatchLines()
			}
			r.Begin(TrialInfo{})
			var got []string
			for i := range tt.requests {
				d := r.Decide(&tt.requests[i])
				if d.Fault.Kind != catalog.KindNone {
					got = append(got, fmt.Sprintf("%d:%s", i, d.Fault.Key()))
				}
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("granted %v, want %s", got, tt.want)
			}
			if len(r.Missing()) != tt.missing {
				t.Errorf("missing %v, want %d", r.Missing(), tt.missing)
			}
		})
	}
}

// TestReplayPlanNodes: a replay's plan reaches the recorded members only,
// except for a fault on the leader and a leadercut, which may strike
// whichever member leads; without a catalog role, a fault recorded with a
// role stays on its member.
func TestReplayPlanNodes(t *testing.T) {
	for _, tc := range []struct {
		kind      catalog.Kind
		role      string
		noCatRole bool
		want      string
	}{
		{catalog.KindDelay, "StateFollower", false, "[n3]"},
		{catalog.KindDelay, "StateLeader", false, "[]"},
		{catalog.KindDelay, "StateLeader", true, "[n3]"},
		{catalog.KindLeaderCut, "StateLeader", false, "[]"},
	} {
		cat := ledCatalog()
		if tc.noCatRole {
			cat.Role = nil
		}
		r := NewReplay(cat, []record.Injection{{Node: "n3", Role: tc.role, SiteID: cat.Sites[0].ID, Kind: tc.kind, Delay: time.Second, Occurrence: 1}})
		if got := fmt.Sprint(r.Begin(TrialInfo{}).Nodes); got != tc.want {
			t.Errorf("%s on the %s (catalog role %v): plan nodes %s, want %s", tc.kind, tc.role, !tc.noCatRole, got, tc.want)
		}
	}
}

// ledCatalog is testCatalog with etcd raft's role values.
func ledCatalog() *catalog.Catalog {
	cat := testCatalog()
	cat.Role = &catalog.Role{Pkg: "raft", Type: "raft", Field: "state", RoleType: "StateType",
		Values: []catalog.RoleValue{{Value: 0, Name: "StateFollower"}, {Value: 1, Name: "StateCandidate"}, {Value: 2, Name: "StateLeader"}}}
	return cat
}
