package campaign

import (
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

func TestCheckRoles(t *testing.T) {
	withRole := &catalog.Catalog{Role: &catalog.Role{Pkg: "go.etcd.io/raft/v3", Type: "raft", Field: "state", RoleType: "StateType",
		Values: []catalog.RoleValue{{Value: 0, Name: "StateFollower"}, {Value: 2, Name: "StateLeader"}}}}
	for _, tc := range []struct {
		name  string
		roles []string
		cat   *catalog.Catalog
		want  string // a substring of the error; "" none
	}{
		{"none asked", nil, &catalog.Catalog{}, ""},
		{"a role of the type", []string{"StateFollower"}, withRole, ""},
		{"a name that is no role", []string{"StateFollower", "follower"}, withRole, `faults.roles[1]: "follower" is no value of the role type go.etcd.io/raft/v3.StateType; use one of StateFollower, StateLeader`},
		{"no role field", []string{"StateFollower"}, &catalog.Catalog{}, "the analysis found no role field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRoles(tc.roles, tc.cat)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("checkRoles = %v, want %q", err, tc.want)
			}
		})
	}
}
