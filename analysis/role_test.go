package analysis

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

func runRoles(t *testing.T, pkg, role string) (*Result, error) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "roles"))
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/roles/" + pkg}, Role: role})
}

// TestRoleShapes checks RolePass on the three write shapes (etcd raft's
// assignment, hashicorp/raft's atomic.StoreUint32, the NATS server's
// atomic.Int32.Store): the field, its values, and a write on every line
// with a // want naming its shape.
func TestRoleShapes(t *testing.T) {
	for _, tc := range []struct {
		pkg, name, roleType string
		values              string
	}{
		{"etcdlike", "example.com/roles/etcdlike.raft.state", "StateType", "0=StateFollower 1=StateCandidate 2=StateLeader 3=StatePreCandidate"},
		{"hashilike", "example.com/roles/hashilike.raftState.state", "RaftState", "0=Follower 1=Candidate 2=Leader 3=Shutdown"},
		{"natslike", "example.com/roles/natslike.raft.state", "RaftState", "0=Follower 1=Leader 2=Candidate 3=Closed"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			res, err := runRoles(t, tc.pkg, "")
			if err != nil {
				t.Fatal(err)
			}
			r := res.Catalog.Role
			if r == nil {
				t.Fatal("no role found")
			}
			if r.String() != tc.name || r.RoleType != tc.roleType {
				t.Errorf("role %s of type %s, want %s of type %s", r, r.RoleType, tc.name, tc.roleType)
			}
			var vs []string
			for _, v := range r.Values {
				vs = append(vs, strings.Join([]string{strconv.FormatInt(v.Value, 10), v.Name}, "="))
			}
			if got := strings.Join(vs, " "); got != tc.values {
				t.Errorf("values %q, want %q", got, tc.values)
			}
			file := filepath.Join("testdata", "roles", tc.pkg, "raft.go")
			want := wants(t, file)
			got := map[int]string{}
			for _, w := range r.Writes {
				if !strings.HasPrefix(w.ID, "role:example.com/roles/"+tc.pkg+".") {
					t.Errorf("write ID %s", w.ID)
				}
				got[w.Line] = w.Shape
			}
			var lines []int
			for l := range want {
				lines = append(lines, l)
			}
			sort.Ints(lines)
			for _, l := range lines {
				if shape, _, _ := strings.Cut(want[l], " "); got[l] != shape {
					t.Errorf("raft.go:%d: write %q, want %q", l, got[l], shape)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d writes %v, want %d", len(got), got, len(want))
			}
			if n := res.Stats.Totals[CountRoleWrites]; n != len(want) {
				t.Errorf("%s = %d, want %d", CountRoleWrites, n, len(want))
			}
			if r.Name(2) == "" || r.Name(99) != "" {
				t.Errorf("Name(2) = %q, Name(99) = %q", r.Name(2), r.Name(99))
			}
		})
	}
}

// TestRoleOverride checks target.role: an explicit field, "none", and a
// field that is no role, which fails naming the field and the fix.
func TestRoleOverride(t *testing.T) {
	res, err := runRoles(t, "etcdlike", "example.com/roles/etcdlike.raft.prev")
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Catalog.Role; r == nil || r.Field != "prev" || len(r.Writes) != 1 {
		t.Errorf("explicit role = %+v, want raft.prev with one write", r)
	}
	res, err = runRoles(t, "etcdlike", RoleNone)
	if err != nil {
		t.Fatal(err)
	}
	if res.Catalog.Role != nil {
		t.Errorf("role %v with target.role: none", res.Catalog.Role)
	}
	_, err = runRoles(t, "etcdlike", "example.com/roles/etcdlike.progress.state")
	if err == nil || !strings.Contains(err.Error(), "target.role") || !strings.Contains(err.Error(), "etcdlike.raft.state") {
		t.Errorf("err = %v, want one naming target.role and the candidates", err)
	}
}

// TestRoleCatalog checks that the role survives Without (minus dropped
// writes) and counts in the hash.
func TestRoleCatalog(t *testing.T) {
	res, err := runRoles(t, "etcdlike", "")
	if err != nil {
		t.Fatal(err)
	}
	c := res.Catalog
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	drop := c.Role.Writes[0].ID
	w := c.Without(map[string]bool{drop: true})
	if w.Role == nil || len(w.Role.Writes) != len(c.Role.Writes)-1 || w.Hash == c.Hash {
		t.Errorf("Without(%s): role %+v hash %s (was %s)", drop, w.Role, w.Hash, c.Hash)
	}
	none := *c
	none.Role = nil
	if none.ComputeHash() == c.Hash {
		t.Error("the role does not count in the hash")
	}
}

// TestNamedRoles checks the roles that only target.role names, on packages
// shaped like raft forks: a plain string field, a named string type, a bool
// isLeader and an atomic.Bool. Each is found with its values and a write
// on every line with a // want naming its shape; none is picked unasked.
func TestNamedRoles(t *testing.T) {
	for _, tc := range []struct {
		pkg, role, roleType, values string
		writes                      string // shapes of the writes, in order; "" to take the // want lines
		unasked                     bool   // picked with no target.role: written "leader" and "follower"
	}{
		{"stringlike", "example.com/roles/stringlike.server.state", RoleTypeString, "1=candidate 2=follower 3=leader 4=stopped", "", true},
		{"goraftlike", "example.com/roles/goraftlike.server.state", RoleTypeString, "1=candidate 2=follower 3=initialized 4=leader 5=snapshotting 6=stopped", "", true},
		{"enumlike", "example.com/roles/enumlike.node.role", "State", "1=candidate 2=follower 3=leader", "", false},
		{"boollike", "example.com/roles/boollike.peer.isLeader", RoleTypeBool, "0=follower 1=leader", "", false},
		{"boollike", "example.com/roles/boollike.peer.amLeader", RoleTypeBool, "0=follower 1=leader", "method method", false},
		{"peerlike", "example.com/roles/peerlike.peer.kind", RoleTypeString, "1=follower 2=leader", "assign", false},
	} {
		t.Run(tc.role, func(t *testing.T) {
			res, err := runRoles(t, tc.pkg, "")
			if err != nil {
				t.Fatal(err)
			}
			if r := res.Catalog.Role; tc.unasked && (r == nil || r.String() != tc.role) {
				t.Errorf("role %v found unasked, want %s", r, tc.role)
			} else if !tc.unasked && r != nil {
				t.Errorf("role %s found unasked", r)
			}
			res, err = runRoles(t, tc.pkg, tc.role)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Catalog.Role
			if r == nil || r.String() != tc.role || r.RoleType != tc.roleType {
				t.Fatalf("role %+v, want %s of type %s", r, tc.role, tc.roleType)
			}
			var vs []string
			for _, v := range r.Values {
				vs = append(vs, strconv.FormatInt(v.Value, 10)+"="+v.Name)
			}
			if got := strings.Join(vs, " "); got != tc.values {
				t.Errorf("values %q, want %q", got, tc.values)
			}
			if leader, ok := r.Leader(); !ok || leader != "leader" {
				t.Errorf("Leader() = %q, %v", leader, ok)
			}
			if tc.writes != "" {
				var shapes []string
				for _, w := range r.Writes {
					shapes = append(shapes, w.Shape)
				}
				if got := strings.Join(shapes, " "); got != tc.writes {
					t.Errorf("writes %q, want %q", got, tc.writes)
				}
				return
			}
			want := wants(t, filepath.Join("testdata", "roles", tc.pkg, "raft.go"))
			got := map[int]string{}
			for _, w := range r.Writes {
				got[w.Line] = w.Shape
			}
			for l, w := range want {
				if shape, _, _ := strings.Cut(w, " "); got[l] != shape {
					t.Errorf("raft.go:%d: write %q, want %q", l, got[l], shape)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d writes %v, want %d", len(got), got, len(want))
			}
		})
	}
	_, err := runRoles(t, "stringlike", "example.com/roles/stringlike.server.id")
	if err == nil || !strings.Contains(err.Error(), "found: example.com/roles/stringlike.server.state") {
		t.Errorf("a string field no role constant touches: err = %v, want one naming the role found", err)
	}
}

// TestRoleMethods checks target.role naming a role method, on packages
// shaped like raft forks: goraft's State() under a lock (both name forms),
// an IsLeader comparing a string, dragonboat's IsLeader comparing a named
// integer through a getter, a mode whose constants do not say leader, a
// bool and an atomic.Bool behind IsLeader, a named string type's Role(),
// and hashicorp/raft's atomic getState. Each resolves to the field it reads, with its values and the
// leader value the method compares with.
func TestRoleMethods(t *testing.T) {
	for _, tc := range []struct {
		pkg, method, field, roleType, values, leader string
	}{
		{"stringlike", "(*server).State", "server.state", RoleTypeString, "1=candidate 2=follower 3=leader 4=stopped", "leader"},
		{"stringlike", "server.State", "server.state", RoleTypeString, "1=candidate 2=follower 3=leader 4=stopped", "leader"},
		{"stringlike", "(*server).IsLeader", "server.state", RoleTypeString, "1=candidate 2=follower 3=leader 4=stopped", "leader"},
		{"goraftlike", "(*server).State", "server.state", RoleTypeString, "1=candidate 2=follower 3=initialized 4=leader 5=snapshotting 6=stopped", "leader"},
		{"dragonlike", "(*raft).IsLeader", "raft.state", "State", "0=follower 1=candidate 2=leader 3=observer", "leader"},
		{"dragonlike", "(*replica).IsPrimary", "replica.mode", "Mode", "0=Primary 1=Backup", "Primary"},
		{"boollike", "(*peer).IsLeader", "peer.amLeader", RoleTypeBool, "0=follower 1=leader", "leader"},
		{"boollike", "(*peer).Leading", "peer.isLeader", RoleTypeBool, "0=follower 1=leader", "leader"},
		{"enumlike", "(*node).Role", "node.role", "State", "1=candidate 2=follower 3=leader", "leader"},
		{"hashilike", "(*raftState).getState", "raftState.state", "RaftState", "0=Follower 1=Candidate 2=Leader 3=Shutdown", "Leader"},
	} {
		t.Run(tc.pkg+"."+tc.method, func(t *testing.T) {
			prefix := "example.com/roles/" + tc.pkg + "."
			res, err := runRoles(t, tc.pkg, prefix+tc.method)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Catalog.Role
			if r == nil || r.String() != prefix+tc.field || r.RoleType != tc.roleType {
				t.Fatalf("role %+v, want %s of type %s", r, prefix+tc.field, tc.roleType)
			}
			if want := strings.Replace(tc.method, "server.", "(*server).", 1); r.Method != want {
				t.Errorf("method %q, want %q", r.Method, want)
			}
			var vs []string
			for _, v := range r.Values {
				vs = append(vs, strconv.FormatInt(v.Value, 10)+"="+v.Name)
			}
			if got := strings.Join(vs, " "); got != tc.values {
				t.Errorf("values %q, want %q", got, tc.values)
			}
			if leader, ok := r.Leader(); !ok || leader != tc.leader {
				t.Errorf("Leader() = %q, %v, want %q", leader, ok, tc.leader)
			}
			if len(r.Writes) == 0 {
				t.Error("no writes")
			}
			var b strings.Builder
			if err := catalog.WriteRole(&b, res.Catalog, ""); err != nil {
				t.Fatal(err)
			}
			if want := "role: " + prefix + tc.field + " (read by " + r.Method + ")"; !strings.HasPrefix(b.String(), want) {
				t.Errorf("WriteRole: %q, want it to start %q", b.String(), want)
			}
		})
	}
}

// TestRoleMethodErrors checks role methods the pass cannot resolve: each
// fails naming the method, what its body does, and the fix.
func TestRoleMethodErrors(t *testing.T) {
	for method, found := range map[string]string{
		"Busy":      "combines several values",
		"Always":    "returns a constant",
		"PeerLeads": "calls the interface method IsLeader",
		"Which":     "reads several fields or values (id, state)",
	} {
		want := "example.com/roles/stringlike.(*server)." + method
		_, err := runRoles(t, "stringlike", want)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), found) || !strings.Contains(err.Error(), "name the field instead") {
			t.Errorf("%s: err = %v, want one naming it, %q and the fix", method, err, found)
		}
	}
}

// TestRoleSuggestion checks that a target with no role field the pass
// picks gets a role method suggested, not taken; and one with a role (of
// a named integer type, or a string written with "leader" and "follower",
// goraft's) none.
func TestRoleSuggestion(t *testing.T) {
	for pkg, want := range map[string]string{
		"peerlike":   "no role field found; (*peer).IsLeader reads peer.kind: set target.role: example.com/roles/peerlike.(*peer).IsLeader",
		"boollike":   "no role field found; (*peer).IsLeader reads peer.amLeader: set target.role: example.com/roles/boollike.(*peer).IsLeader",
		"dragonlike": "",
		"stringlike": "",
		"goraftlike": "",
	} {
		res, err := runRoles(t, pkg, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.RoleSuggestion != want {
			t.Errorf("%s: suggestion %q, want %q", pkg, res.RoleSuggestion, want)
		}
		if (res.Catalog.Role == nil) != (want != "") {
			t.Errorf("%s: role %v beside suggestion %q", pkg, res.Catalog.Role, res.RoleSuggestion)
		}
	}
}
