package policy

import (
	"testing"

	"github.com/gofault/gofault/catalog"
)

// TestFaultsAtRoles: faults.roles keeps every fault to the requests of
// members in those roles; a request without a role, or of another, gets
// none; no roles: any.
func TestFaultsAtRoles(t *testing.T) {
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "p.f#(*os.File).Sync.0", Kind: catalog.KindError | catalog.KindDelay | catalog.KindCrash, IO: "disk",
			Errors: []catalog.ErrorValue{{Name: "EIO"}}},
	}}
	for _, tc := range []struct {
		name  string
		roles []string
		role  string
		want  int
	}{
		{"no roles: any member", nil, "StateLeader", 3},
		{"a follower, followers only", []string{"StateFollower"}, "StateFollower", 3},
		{"the leader, followers only", []string{"StateFollower"}, "StateLeader", 0},
		{"no role known, followers only", []string{"StateFollower"}, "", 0},
		{"either of two", []string{"StateFollower", "StateCandidate"}, "StateCandidate", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &Env{Catalog: cat, Roles: tc.roles}
			if fs := env.faultsAt(&Request{Node: "n1", Role: tc.role, Site: &cat.Sites[0]}); len(fs) != tc.want {
				t.Errorf("%d faults %v, want %d", len(fs), fs, tc.want)
			}
		})
	}
	// faults.nodes: the followers of a static leader (minikv's n1).
	env := &Env{Catalog: cat, Nodes: []string{"n2", "n3"}}
	for node, want := range map[string]int{"n1": 0, "n2": 3, "n3": 3} {
		if fs := env.faultsAt(&Request{Node: node, Site: &cat.Sites[0]}); len(fs) != want {
			t.Errorf("nodes n2, n3: %d faults at a request of %s, want %d", len(fs), node, want)
		}
	}
}
