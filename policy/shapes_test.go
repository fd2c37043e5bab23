package policy

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// shapeCatalog has a disk site, a peer dial and an accept, and a role
// field whose leader is "StateLeader".
func shapeCatalog() *catalog.Catalog {
	return &catalog.Catalog{
		Sites: []catalog.Site{
			{Index: 0, ID: "append", Kind: catalog.KindError | catalog.KindCrash, IO: "disk", Errors: []catalog.ErrorValue{{Name: "EIO"}}},
			{Index: 1, ID: "dial", Kind: catalog.KindError | catalog.KindPartition, IO: "net", Peer: catalog.PeerDial, Errors: []catalog.ErrorValue{{Name: "ECONNREFUSED"}}},
			{Index: 2, ID: "accept", Kind: catalog.KindPartition, IO: "net", Peer: catalog.PeerAccept},
		},
		Role: &catalog.Role{Pkg: "m/raft", Type: "raft", Field: "state", Values: []catalog.RoleValue{{Value: 0, Name: "StateFollower"}, {Value: 2, Name: "StateLeader"}}},
	}
}

func members(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, "n"+string(rune('0'+i)))
	}
	return out
}

// TestShapeFaults: where each partition shape can start, for a request.
// A one-way cut and a split need a peer call whose peer is another member
// (never an accept), a split the trial's members too; a leader cut starts
// at any site, but only where the node leads. None is allowed unless
// listed.
func TestShapeFaults(t *testing.T) {
	cat := shapeCatalog()
	for _, tc := range []struct {
		name  string
		kind  catalog.Kind
		req   Request
		want  bool
		kinds []catalog.Kind // nil: the kind alone
	}{
		{"oneway at a dial to a member", catalog.KindOneWay, Request{Node: "n1", Peer: "n2", Site: &cat.Sites[1]}, true, nil},
		{"oneway, peer unknown", catalog.KindOneWay, Request{Node: "n1", Site: &cat.Sites[1]}, false, nil},
		{"oneway, peer is the node", catalog.KindOneWay, Request{Node: "n1", Peer: "n1", Site: &cat.Sites[1]}, false, nil},
		{"oneway at an accept", catalog.KindOneWay, Request{Node: "n1", Peer: "n2", Site: &cat.Sites[2]}, false, nil},
		{"oneway at a disk call", catalog.KindOneWay, Request{Node: "n1", Peer: "n2", Site: &cat.Sites[0]}, false, nil},
		{"oneway not listed", catalog.KindOneWay, Request{Node: "n1", Peer: "n2", Site: &cat.Sites[1]}, false, []catalog.Kind{catalog.KindPartition}},
		{"oneway not by default", catalog.KindOneWay, Request{Node: "n1", Peer: "n2", Site: &cat.Sites[1]}, false, []catalog.Kind{}},
		{"split at a dial to a member", catalog.KindSplit, Request{Node: "n1", Peer: "n2", Members: members(3), Site: &cat.Sites[1]}, true, nil},
		{"split, members unknown", catalog.KindSplit, Request{Node: "n1", Peer: "n2", Site: &cat.Sites[1]}, false, nil},
		{"split, peer no member", catalog.KindSplit, Request{Node: "n1", Peer: "n9", Members: members(3), Site: &cat.Sites[1]}, false, nil},
		{"split not by default", catalog.KindSplit, Request{Node: "n1", Peer: "n2", Members: members(3), Site: &cat.Sites[1]}, false, []catalog.Kind{}},
		{"leadercut at the leader's disk call", catalog.KindLeaderCut, Request{Node: "n1", Role: "StateLeader", Site: &cat.Sites[0]}, true, nil},
		{"leadercut at the leader's accept", catalog.KindLeaderCut, Request{Node: "n1", Role: "StateLeader", Site: &cat.Sites[2]}, true, nil},
		{"leadercut at a follower", catalog.KindLeaderCut, Request{Node: "n1", Role: "StateFollower", Site: &cat.Sites[0]}, false, nil},
		{"leadercut, role unknown", catalog.KindLeaderCut, Request{Node: "n1", Site: &cat.Sites[0]}, false, nil},
		{"leadercut not by default", catalog.KindLeaderCut, Request{Node: "n1", Role: "StateLeader", Site: &cat.Sites[0]}, false, []catalog.Kind{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kinds := tc.kinds
			if kinds == nil {
				kinds = []catalog.Kind{tc.kind}
			}
			env := Env{Catalog: cat, Seed: 1, Kinds: kinds, Partition: 2 * time.Second}
			fs := env.faultsAt(&tc.req)
			got := slices.ContainsFunc(fs, func(f Fault) bool { return f.Kind == tc.kind })
			if got != tc.want {
				t.Errorf("faults %+v: %v there, want %v", fs, got, tc.want)
			}
			for _, f := range fs {
				if f.Kind == tc.kind && (f.Delay != 2*time.Second || f.Key() != tc.kind.String()+":2s") {
					t.Errorf("fault %+v (key %s), want the partition length", f, f.Key())
				}
			}
		})
	}
}

// TestSplitSide: a split's side is a minority with the node — ⌊(n−1)/2⌋
// members in all — never holds the call's peer, is the same for the same
// request and varies with the trial.
func TestSplitSide(t *testing.T) {
	cat := shapeCatalog()
	env := Env{Catalog: cat, Seed: 3, Kinds: []catalog.Kind{catalog.KindSplit}}
	for _, tc := range []struct {
		n, others int
	}{{2, 0}, {3, 0}, {4, 0}, {5, 1}, {7, 2}} {
		sides := map[string]bool{}
		for trial := 0; trial < 40; trial++ {
			req := Request{Trial: trial, Node: "n1", Peer: "n2", Members: members(tc.n), Site: &cat.Sites[1], Occurrence: 1}
			fs := env.faultsAt(&req)
			if len(fs) != 1 || fs[0].Kind != catalog.KindSplit {
				t.Fatalf("n=%d: faults %+v, want a split", tc.n, fs)
			}
			side := fs[0].Side
			if len(side) != tc.others || slices.Contains(side, "n1") || slices.Contains(side, "n2") || !slices.IsSorted(side) {
				t.Errorf("n=%d trial %d: side %v, want %d others, sorted, neither the node nor the peer", tc.n, trial, side, tc.others)
			}
			if again := env.faultsAt(&req); !reflect.DeepEqual(again, fs) {
				t.Errorf("n=%d: asked again, %+v, want %+v", tc.n, again, fs)
			}
			sides[strings.Join(side, ",")] = true
		}
		if tc.others > 0 && len(sides) < 2 {
			t.Errorf("n=%d: one side in 40 trials: %v", tc.n, sides)
		}
	}
}

// TestLeaderCutRefused: a campaign that lists leadercut on a target whose
// catalog names no leader is refused with the reason; one that names a
// leader, or does not list the kind, is built.
func TestLeaderCutRefused(t *testing.T) {
	noLeader := shapeCatalog()
	noLeader.Role.Values = []catalog.RoleValue{{Value: 0, Name: "Primary"}, {Value: 1, Name: "Backup"}}
	noRole := shapeCatalog()
	noRole.Role = nil
	for _, tc := range []struct {
		name  string
		cat   *catalog.Catalog
		kinds []catalog.Kind
		err   string
	}{
		{"leader known", shapeCatalog(), []catalog.Kind{catalog.KindLeaderCut}, ""},
		{"no role", noRole, []catalog.Kind{catalog.KindPartition, catalog.KindLeaderCut}, "found no role field"},
		{"no leader value", noLeader, []catalog.Kind{catalog.KindLeaderCut}, "has no single leader value (its constants: Primary, Backup"},
		{"not listed", noRole, []catalog.Kind{catalog.KindPartition}, ""},
		{"defaults", noRole, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range []string{"random", "bsrr", "fuzz"} {
				_, err := New(name, Env{Catalog: tc.cat, Seed: 1, Kinds: tc.kinds})
				if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
					t.Errorf("%s: %v, want %q", name, err, tc.err)
				}
			}
		})
	}
}

// TestShapeReplay: a replay rebuilds each shape and waits for the same
// call: a one-way cut and a split for a call to the recorded peer (a split
// with the recorded side), a leader cut for the node to lead there.
func TestShapeReplay(t *testing.T) {
	cat := shapeCatalog()
	for _, tc := range []struct {
		name  string
		inj   record.Injection
		wrong Request // the same site and occurrence, another call
		right Request
	}{
		{"oneway", record.Injection{Node: "n1", SiteID: "dial", Kind: catalog.KindOneWay, Delay: time.Second, Peer: "n3", Occurrence: 1},
			Request{Node: "n1", Peer: "n2", Site: &cat.Sites[1], Occurrence: 1}, Request{Node: "n1", Peer: "n3", Site: &cat.Sites[1], Occurrence: 2}},
		{"split", record.Injection{Node: "n1", SiteID: "dial", Kind: catalog.KindSplit, Delay: time.Second, Peer: "n3", Side: []string{"n4"}, Occurrence: 1},
			Request{Node: "n1", Peer: "n2", Members: members(5), Site: &cat.Sites[1], Occurrence: 1}, Request{Node: "n1", Peer: "n3", Members: members(5), Site: &cat.Sites[1], Occurrence: 2}},
		{"leadercut", record.Injection{Node: "n1", SiteID: "append", Kind: catalog.KindLeaderCut, Delay: time.Second, Role: "StateLeader", Occurrence: 1},
			Request{Node: "n1", Role: "StateFollower", Site: &cat.Sites[0], Occurrence: 1}, Request{Node: "n1", Role: "StateLeader", Site: &cat.Sites[0], Occurrence: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReplay(cat, []record.Injection{tc.inj})
			if m := r.Missing(); len(m) != 0 {
				t.Fatalf("missing %v", m)
			}
			r.Begin(TrialInfo{})
			if d := r.Decide(&tc.wrong); d.Fault.Kind != catalog.KindNone {
				t.Errorf("granted %+v at another call", d.Fault)
			}
			d := r.Decide(&tc.right)
			if d.Fault.Kind != tc.inj.Kind || d.Fault.Delay != time.Second || !slices.Equal(d.Fault.Side, tc.inj.Side) {
				t.Errorf("at the recorded call: %+v, want %s for 1s with side %v", d.Fault, tc.inj.Kind, tc.inj.Side)
			}
		})
	}
}

// TestLeaderAt: faults.partition.leader_at keeps a leader cut to the sites
// whose ID holds one of its strings, and a string that no site holds is
// refused.
func TestLeaderAt(t *testing.T) {
	cat := shapeCatalog()
	for _, tc := range []struct {
		name  string
		at    []string
		sites []string // where a leader's request may get a leader cut
		err   string
	}{
		{"any site", nil, []string{"append", "dial", "accept"}, ""},
		{"the append", []string{"app"}, []string{"append"}, ""},
		{"two moments", []string{"append", "accept"}, []string{"append", "accept"}, ""},
		{"no such site", []string{"append", "commit"}, nil, `no fault site's ID contains "commit"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{Catalog: cat, Seed: 1, Kinds: []catalog.Kind{catalog.KindLeaderCut}, LeaderAt: tc.at}
			if _, err := New("random", env); tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("New: %v, want %q", err, tc.err)
			}
			if tc.err != "" {
				return
			}
			var sites []string
			for i := range cat.Sites {
				if fs := env.faultsAt(&Request{Node: "n1", Role: "StateLeader", Site: &cat.Sites[i]}); len(fs) > 0 {
					sites = append(sites, cat.Sites[i].ID)
				}
			}
			if !slices.Equal(sites, tc.sites) {
				t.Errorf("leader cuts at %v, want %v", sites, tc.sites)
			}
		})
	}
}

// TestFuzzShapes: a fuzz sequence's point placed before its request was
// seen (a mutation) grants a cut only at a call where it can start — a
// leader cut once the node leads, a one-way cut at a call with a known
// peer — and gives a split without a side the side faultsAt chooses.
func TestFuzzShapes(t *testing.T) {
	cat := shapeCatalog()
	five := members(5)
	for _, tc := range []struct {
		name  string
		fault Fault
		site  int
		reqs  []Request // in order; the last one must get the fault
		side  int
	}{
		{"leadercut waits for the node to lead", Fault{Kind: catalog.KindLeaderCut, Delay: time.Second}, 0, []Request{
			{Role: "StateFollower"}, {Role: "StateLeader"}}, 0},
		{"oneway waits for a known peer", Fault{Kind: catalog.KindOneWay, Delay: time.Second}, 1, []Request{
			{}, {Peer: "n1"}, {Peer: "n2"}}, 0},
		{"a split gets a side", Fault{Kind: catalog.KindSplit, Delay: time.Second}, 1, []Request{
			{Peer: "n2", Members: five}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New("fuzz", Env{Catalog: cat, Seed: 1, Kinds: []catalog.Kind{tc.fault.Kind}})
			if err != nil {
				t.Fatal(err)
			}
			f := p.(*fuzz)
			site := &cat.Sites[tc.site]
			f.trials.begin(0, &fuzzTrial{seq: []Point{{Node: "n1", Site: site.ID, Occurrence: 1, Fault: tc.fault}},
				reached: map[reachKey]Point{}, afterAt: map[[2]string]int{}})
			for i, r := range tc.reqs {
				r.Node, r.Site, r.Occurrence = "n1", site, i+1
				d := f.Decide(&r)
				last := i == len(tc.reqs)-1
				if last != (d.Fault.Kind == tc.fault.Kind) {
					t.Fatalf("request %d (%+v): %+v", i, r, d.Fault)
				}
				if last && len(d.Fault.Side) != tc.side {
					t.Errorf("side %v, want %d members", d.Fault.Side, tc.side)
				}
			}
		})
	}
}
