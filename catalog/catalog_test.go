package catalog

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// parts returns a small catalog's parts: three sites guarded by three
// timeout points, two tasks with three states, two observation points and
// a role with two writes.
func parts() Parts {
	return Parts{
		Module: "m",
		Sites: []Site{
			{ID: "s/a", Kind: KindError, Timeouts: []uint32{1}},
			{ID: "s/b", Kind: KindDelay, Timeouts: []uint32{0, 2}},
			{ID: "s/c", Kind: KindCrash},
		},
		Tasks:         []Task{{ID: "t/1"}, {ID: "t/2"}},
		States:        []State{{ID: "a/1", Task: 1}, {ID: "a/2", Task: 2}, {ID: "a/3", Task: 2}},
		TimeoutPoints: []TimeoutPoint{{ID: "o/x"}, {ID: "o/y"}, {ID: "o/z"}},
		ObservePoints: []ObservePoint{{ID: "b/send"}, {ID: "b/handled"}},
		Role: &Role{Pkg: "m/raft", Type: "raft", Field: "state", Values: []RoleValue{{0, "StateFollower"}, {2, "StateLeader"}},
			Writes: []RoleWrite{{ID: "role:m/raft.becomeLeader#0"}, {ID: "role:m/raft.becomeFollower#0"}}},
	}
}

func TestNewNumbers(t *testing.T) {
	c, err := New(parts())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if c.Hash == "" || c.Hash != c.ComputeHash() {
		t.Errorf("hash %q, want %q", c.Hash, c.ComputeHash())
	}
	if c.Site(2).ID != "s/c" || c.State(3).ID != "a/3" || c.Task(2).ID != "t/2" || c.TimeoutPoints[1].Index != 1 ||
		c.Observe(1).ID != "b/handled" || c.Observe(1).Index != 1 {
		t.Errorf("indices: %+v", c)
	}
	if c.Module != "m" || c.Role == nil || len(c.Role.Writes) != 2 {
		t.Errorf("module %q, role %+v", c.Module, c.Role)
	}
}

// TestNewIsComplete: every part New takes counts in the hash it sets, so a
// catalog is complete when made and nothing patched in later can go
// unhashed.
func TestNewIsComplete(t *testing.T) {
	whole, err := New(parts())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		drop func(p *Parts)
	}{
		{"observation points", func(p *Parts) { p.ObservePoints = nil }},
		{"role", func(p *Parts) { p.Role = nil }},
		{"role writes", func(p *Parts) { p.Role.Writes = p.Role.Writes[:1] }},
		{"timeout points", func(p *Parts) { p.TimeoutPoints, p.Sites[0].Timeouts, p.Sites[1].Timeouts = nil, nil, nil }},
		{"states", func(p *Parts) { p.States = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parts()
			tc.drop(&p)
			c, err := New(p)
			if err != nil {
				t.Fatal(err)
			}
			if c.Hash == whole.Hash {
				t.Errorf("the hash %s does not depend on the %s", c.Hash, tc.name)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(p *Parts)
		want string
	}{
		{"duplicate site", func(p *Parts) { p.Sites = append(p.Sites, Site{ID: "s/a"}) }, "two sites with ID s/a"},
		{"duplicate state", func(p *Parts) { p.States = append(p.States, State{ID: "a/1", Task: 1}) }, "two states with ID a/1"},
		{"state without task", func(p *Parts) { p.States = append(p.States, State{ID: "a/9", Task: 3}) }, "names task 3 of 2"},
		{"timeout out of range", func(p *Parts) { p.TimeoutPoints = p.TimeoutPoints[:2] }, "names timeout point 2 of 2"},
		{"duplicate observation point", func(p *Parts) { p.ObservePoints = append(p.ObservePoints, ObservePoint{ID: "b/send"}) }, "two observation points with ID b/send"},
		{"duplicate role write", func(p *Parts) { p.Role.Writes = append(p.Role.Writes, RoleWrite{ID: "role:m/raft.becomeLeader#0"}) }, "two role writes with ID role:m/raft.becomeLeader#0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parts()
			tc.edit(&p)
			_, err := New(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWithout(t *testing.T) {
	c, err := New(parts())
	if err != nil {
		t.Fatal(err)
	}
	before := c.Hash
	got := c.Without(map[string]bool{"s/a": true, "a/2": true, "o/x": true})
	if err := got.Check(); err != nil {
		t.Fatal(err)
	}
	if c.Hash != before || len(c.Sites) != 3 || c.Sites[1].Timeouts[1] != 2 {
		t.Fatal("Without changed its receiver")
	}
	ids := func(n int, id func(int) string) []string {
		var out []string
		for i := range n {
			out = append(out, id(i))
		}
		return out
	}
	if s := ids(len(got.Sites), func(i int) string { return got.Sites[i].ID }); !reflect.DeepEqual(s, []string{"s/b", "s/c"}) {
		t.Errorf("sites %v", s)
	}
	if s := ids(len(got.States), func(i int) string { return got.States[i].ID }); !reflect.DeepEqual(s, []string{"a/1", "a/3"}) {
		t.Errorf("states %v", s)
	}
	if got.State(2).Task != 2 || len(got.Tasks) != 2 {
		t.Errorf("state a/3 lost its task: %+v", got.States)
	}
	// s/b guarded o/x (dropped) and o/z (now index 1).
	if !reflect.DeepEqual(got.Sites[0].Timeouts, []uint32{1}) || got.TimeoutPoints[1].ID != "o/z" {
		t.Errorf("timeouts %v, points %+v", got.Sites[0].Timeouts, got.TimeoutPoints)
	}
	if got.Hash == before || got.Hash != got.ComputeHash() {
		t.Errorf("hash %q not recomputed", got.Hash)
	}
	if same := c.Without(nil); same.Hash != before {
		t.Errorf("Without(nil) hash %q, want %q", same.Hash, before)
	}
}

func TestKind(t *testing.T) {
	for _, tc := range []struct {
		k    Kind
		text string
	}{
		{KindNone, "none"},
		{KindError, "error"},
		{KindDelay, "delay"},
		{KindCrash, "crash"},
		{KindError | KindDelay, "error|delay"},
		{KindError | KindDelay | KindCrash, "error|delay|crash"},
		{KindReboot, "reboot"},
		{KindPowerLoss | KindReboot, "powerloss|reboot"},
		{KindOneWay, "oneway"},
		{KindSplit, "split"},
		{KindLeaderCut, "leadercut"},
		{KindDisconnect | KindLeaderCut, "disconnect|leadercut"},
		// The disk kinds are bits 10 and 11 (from 0): past a uint8.
		{KindCorrupt, "corrupt"},
		{KindTorn, "torn"},
		{KindError | KindDelay | KindCrash | KindCorrupt, "error|delay|crash|corrupt"},
	} {
		if got := tc.k.String(); got != tc.text {
			t.Errorf("%d.String() = %q, want %q", tc.k, got, tc.text)
		}
		if got, err := ParseKind(tc.text); err != nil || got != tc.k {
			t.Errorf("ParseKind(%q) = %v, %v", tc.text, got, err)
		}
		data, err := json.Marshal(tc.k)
		var back Kind
		if err != nil || json.Unmarshal(data, &back) != nil || back != tc.k {
			t.Errorf("JSON round trip of %v: %s -> %v (%v)", tc.k, data, back, err)
		}
	}
	var legacy Kind // catalogs written before kinds had names
	if err := json.Unmarshal([]byte("3"), &legacy); err != nil || legacy != KindError|KindDelay {
		t.Errorf("numeric kind: %v, %v", legacy, err)
	}
	if _, err := ParseKind("explode"); err == nil || !strings.Contains(err.Error(), "want one of error, delay, crash, partition, powerloss, reboot, disconnect, oneway, split, leadercut, corrupt, torn, crash-after, powerloss-after, pause, stop or rot") {
		t.Errorf("ParseKind(explode): %v", err)
	}
	if !(KindError | KindCrash).Has(KindCrash) || KindError.Has(KindDelay) {
		t.Error("Has")
	}
	for k, kills := range map[Kind]bool{KindCrash: true, KindPowerLoss: true, KindReboot: true, KindTorn: true, KindStop: true, KindRot: true, KindError: false, KindDelay: false, KindPartition: false, KindCorrupt: false, KindPause: false} {
		if k.Kills() != kills {
			t.Errorf("%v.Kills() = %v", k, !kills)
		}
	}
	for k, cuts := range map[Kind]bool{KindPartition: true, KindDisconnect: true, KindOneWay: true, KindSplit: true, KindLeaderCut: true,
		KindNone: false, KindDelay: false, KindCrash: false, KindPartition | KindDelay: false} {
		if k.Cuts() != cuts {
			t.Errorf("%v.Cuts() = %v", k, !cuts)
		}
	}
}

func TestRoleLeader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		role   *Role
		leader string
		ok     bool
	}{
		{"nil", nil, "", false},
		{"etcd", &Role{Values: []RoleValue{{0, "StateFollower"}, {1, "StateCandidate"}, {2, "StateLeader"}, {3, "StatePreCandidate"}}}, "StateLeader", true},
		{"minikv", &Role{Values: []RoleValue{{0, "roleFollower"}, {1, "roleLeader"}}}, "roleLeader", true},
		{"no leader", &Role{Values: []RoleValue{{0, "Primary"}, {1, "Backup"}}}, "", false},
		{"two leaders", &Role{Values: []RoleValue{{0, "Leader"}, {1, "SubLeader"}}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := tc.role.Leader(); got != tc.leader || ok != tc.ok {
				t.Errorf("Leader() = %q, %v, want %q, %v", got, ok, tc.leader, tc.ok)
			}
		})
	}
}

func TestBlocksInHashAndPos(t *testing.T) {
	c := &Catalog{Module: "m"}
	plain := c.ComputeHash()
	c.Blocks = 5
	c.BlockFiles = []BlockFile{{File: "/a/p/x.go", First: 0, Lines: []int{3, 9}}, {File: "/a/q/y.go", First: 2, Lines: []int{1, 4, 8}}}
	h := c.ComputeHash()
	if h == plain {
		t.Error("blocks do not change the hash")
	}
	// Another checkout of the same source: the same hash.
	moved := *c
	moved.BlockFiles = []BlockFile{{File: "/b/p/x.go", First: 0, Lines: []int{3, 9}}, {File: "/b/q/y.go", First: 2, Lines: []int{1, 4, 8}}}
	if moved.ComputeHash() != h {
		t.Error("the hash depends on the checkout's directory")
	}
	if err := c.Check(); err != nil {
		t.Error(err)
	}
	gap := *c
	gap.BlockFiles = []BlockFile{c.BlockFiles[1]}
	if err := gap.Check(); err == nil {
		t.Error("Check accepts blocks that do not start at 0")
	}
	for _, tt := range []struct {
		i    int
		file string
		line int
	}{{0, "/a/p/x.go", 3}, {1, "/a/p/x.go", 9}, {2, "/a/q/y.go", 1}, {4, "/a/q/y.go", 8}, {5, "", 0}, {-1, "", 0}} {
		if f, l := c.BlockPos(tt.i); f != tt.file || l != tt.line {
			t.Errorf("BlockPos(%d) = %s:%d, want %s:%d", tt.i, f, l, tt.file, tt.line)
		}
	}
}

func TestDiskCallOf(t *testing.T) {
	for _, tc := range []struct {
		callee string
		ok     bool
		write  bool
		buf    int
	}{
		{"(*os.File).Read", true, false, 0},
		{"io.ReadFull", true, false, 1},
		{"os.ReadFile", true, false, -1},
		{"(*os.File).WriteAt", true, true, 0},
		{"os.WriteFile", true, true, 1},
		{"(*os.File).Sync", false, false, 0},
		{"(io.Reader).Read", true, false, 0}, // where the analysis found it reading a file
		{"(io.Writer).Write", true, true, 0},
		{"(*bytes.Buffer).Write", false, false, 0},
	} {
		d, ok := DiskCallOf(tc.callee)
		if ok != tc.ok || ok && (d.Write != tc.write || d.Buf != tc.buf) {
			t.Errorf("DiskCallOf(%q) = %+v, %v; want write %v buf %d, %v", tc.callee, d, ok, tc.write, tc.buf, tc.ok)
		}
	}
}

// TestObservesCommit: a commit index is any observed variable whose name
// says so, case aside, as the real targets' catalogs name them; a catalog
// observes one when any of its observation points does.
func TestObservesCommit(t *testing.T) {
	for name, want := range map[string]bool{
		"msg.Commit": true, "msg.LeaderCommitIndex": true, "node.getCommitIndex()": true, "msg.commit": true,
		"node.committedIndex": true, "msg.Term": false, "node.getLastApplied()": false, "msg.Index": false,
	} {
		if got := CommitVar(name); got != want {
			t.Errorf("CommitVar(%q) = %v, want %v", name, got, want)
		}
	}
	c := &Catalog{ObservePoints: []ObservePoint{{Vars: []ObserveVar{{Name: "msg.Term"}}}}}
	if c.ObservesCommit() {
		t.Error("a catalog observing only terms observes a commit index")
	}
	c.ObservePoints = append(c.ObservePoints, ObservePoint{Vars: []ObserveVar{{Name: "msg.Term"}, {Name: "msg.LeaderCommitIndex"}}})
	if !c.ObservesCommit() {
		t.Error("a catalog observing msg.LeaderCommitIndex observes no commit index")
	}
	if (&Catalog{}).ObservesCommit() {
		t.Error("a catalog without observation points observes a commit index")
	}
}
