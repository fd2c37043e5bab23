package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const base = `
name: demo
target:
  packages: [./...]
cluster:
  nodes: 3
  ports: [client, peer]
  command: ["{{.Bin}}", "--port={{.Port.client}}"]
  env:
    A: "1"
workload:
  command: [./load.sh]
`

var known = Known{
	Policies: []string{"random", "bsrr", "none"},
	Checkers: []string{"crash", "hang", "gray", "log", "linearizability", "violations", "replicas", "recovery", "slow"},
}

func TestSet(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		get  func(*Config) any
		want any
	}{
		{"int", []string{"cluster.nodes=5"}, func(c *Config) any { return c.Cluster.Nodes }, 5},
		{"string that looks like a float", []string{"target.version=3.5"}, func(c *Config) any { return c.Target.Version }, "3.5"},
		{"version", []string{"target.version=v3.5.16"}, func(c *Config) any { return c.Target.Version }, "v3.5.16"},
		{"duration", []string{"trials.timeout=30s"}, func(c *Config) any { return c.Trials.Timeout }, 30 * time.Second},
		{"nested new section", []string{"cluster.shutdown.grace=1m"}, func(c *Config) any { return c.Cluster.Shutdown.Grace }, time.Minute},
		{"list comma", []string{"faults.kinds=error, delay"}, func(c *Config) any { return c.Faults.Kinds }, []string{"error", "delay"}},
		{"list flow", []string{"faults.kinds=[crash]"}, func(c *Config) any { return c.Faults.Kinds }, []string{"crash"}},
		{"list empty", []string{"cluster.ports="}, func(c *Config) any { return c.Cluster.Ports }, []string{}},
		{"replaces list", []string{"cluster.command=/bin/x,-v"}, func(c *Config) any { return c.Cluster.Command }, []string{"/bin/x", "-v"}},
		{"map key", []string{"cluster.env.GODEBUG=x=1"}, func(c *Config) any { return c.Cluster.Env }, map[string]string{"A": "1", "GODEBUG": "x=1"}},
		{"map flow", []string{"workload.env={K: v}"}, func(c *Config) any { return c.Workload.Env }, map[string]string{"K": "v"}},
		{"last wins", []string{"policy.seed=1", "policy.seed=-7"}, func(c *Config) any { return c.Policy.Seed }, int64(-7)},
		{"top level", []string{"workdir=/tmp/w"}, func(c *Config) any { return c.WorkDir }, "/tmp/w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(base), tt.set...)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.get(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestSetErrors(t *testing.T) {
	tests := []struct {
		set  string
		want []string
	}{
		{"cluster.node=5", []string{`unknown field "cluster.node"`, `did you mean "cluster.nodes"`}},
		{"nodes=5", []string{`unknown field "nodes"`, `"cluster.nodes"`}},
		{"trials.timout=3s", []string{`"trials.timeout"`}},
		{"cluster.nodes=five", []string{"cluster.nodes", "want an integer", `"five"`}},
		{"trials.timeout=30", []string{"trials.timeout", "duration"}},
		{"cluster.nodes.x=1", []string{"has no field"}},
		{"cluster.nodes", []string{"want path=value"}},
		{"=3", []string{"want path=value"}},
		{"cluster.command=[a", []string{"parse"}},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			_, err := Parse([]byte(base), tt.set)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown top", "name: x\nclustr:\n  nodes: 3\n", []string{"line 2", `unknown field "clustr"`, `did you mean "cluster"`}},
		{"unknown nested", "cluster:\n  nodes: 3\n  readyy:\n    tcp: x\n", []string{"line 3", `"cluster.readyy"`, `"cluster.ready"`}},
		{"unknown deep", "cluster:\n  ready:\n    timout: 3s\n", []string{"line 3", `"cluster.ready.timeout"`}},
		{"bad int", "cluster:\n  nodes: many\n", []string{"line 2", "cluster.nodes", "integer"}},
		{"bad duration", "trials:\n  timeout: 10\n", []string{"line 2", "trials.timeout", "duration"}},
		{"list not scalar", "faults:\n  kinds: error\n", []string{"faults.kinds", "list"}},
		{"bad bound", "checkers:\n  progress: soon\n", []string{"line 2", "checkers.progress", `"auto"`}},
		{"not yaml", "a: [", []string{"parse yaml"}},
		{"not a mapping", "- a\n", []string{"line 1", "want a mapping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestProgressBound(t *testing.T) {
	tests := []struct {
		name, yaml string
		sets       []string
		want       Bound
	}{
		{"unset: auto", "name: x\n", nil, 0},
		{"auto", "checkers:\n  progress: auto\n", nil, 0},
		{"AUTO", "checkers:\n  progress: AUTO\n", nil, 0},
		{"explicit", "checkers:\n  progress: 3s\n", nil, Bound(3 * time.Second)},
		{"--set a duration", "checkers:\n  progress: auto\n", []string{"checkers.progress=2500ms"}, Bound(2500 * time.Millisecond)},
		{"--set auto", "checkers:\n  progress: 3s\n", []string{"checkers.progress=auto"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), tt.sets...)
			if err != nil {
				t.Fatal(err)
			}
			c.Defaults()
			if c.Checkers.Progress != tt.want || c.Checkers.Progress.Auto() != (tt.want == 0) {
				t.Errorf("progress = %s, want %s", c.Checkers.Progress, tt.want)
			}
		})
	}
	if s := Bound(0).String(); s != Auto {
		t.Errorf("Bound(0) = %q", s)
	}
	if s := Bound(1500 * time.Millisecond).String(); s != "1.5s" {
		t.Errorf("Bound(1.5s) = %q", s)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, doc := range []string{"", "# only a comment\n", "---\n", "null\n"} {
		c, err := Parse([]byte(doc), "cluster.nodes=2")
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if c.Cluster.Nodes != 2 {
			t.Errorf("%q: nodes = %d", doc, c.Cluster.Nodes)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gofault.yaml")
	if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != dir {
		t.Errorf("Dir = %q, want %q", c.Dir, dir)
	}
	if got := c.Path("x/y"); got != filepath.Join(dir, "x/y") {
		t.Errorf("Path = %q", got)
	}
	c, err = Open(path, known, "cluster.nodes=4")
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster.Nodes != 4 || c.Store.DB != filepath.Join(".gofault", "gofault.db") {
		t.Errorf("nodes %d db %q", c.Cluster.Nodes, c.Store.DB)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := Open(path, known, "cluster.nodes=-1"); err == nil || !strings.Contains(err.Error(), "cluster.nodes: must be at least 1 (got -1)") {
		t.Errorf("Open with bad nodes: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	var c Config
	c.Dir = "/x/etcd"
	c.Defaults()
	want := Config{
		Name: "etcd",
		Dir:  "/x/etcd",
		Target: Target{
			Module: ".", Main: ".",
		},
		Cluster: Cluster{
			Nodes:    3,
			Ready:    Ready{Timeout: 30 * time.Second},
			Shutdown: Shutdown{Signal: "SIGTERM", Grace: 5 * time.Second, Order: "parallel"},
		},
		Workload: Workload{Timeout: 30 * time.Second, MinDuration: DefaultMinDuration},
		Checkers: Checkers{Enabled: DefaultCheckers, Baseline: 3, Linearizability: 10 * time.Second, RecoveryBound: DefaultRecoveryBound, GenericSites: DefaultGenericSites, RerunFaultFree: DefaultRerunFaultFree},
		Faults:   Faults{Kinds: []string{"error", "delay", "crash", "crash-after"}, Delay: 3 * time.Second, DelayHoldCap: DefaultHoldCap, Partition: Partition{Duration: 3 * time.Second, HoldCap: DefaultHoldCap}},
		Policy:   Policy{Name: "random", PerTrial: 1, Budget: 5, Memory: "on"},
		Trials:   Trials{Count: 100, Timeout: 2 * time.Minute, StopAfterErrors: DefaultStopAfterErrors},
		Store:    Store{DB: ".gofault/gofault.db", KeepFailed: DefaultKeepFailed},
		WorkDir:  ".gofault",
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Defaults:\n got %+v\nwant %+v", c, want)
	}
	again := c
	again.Defaults()
	if !reflect.DeepEqual(again, c) {
		t.Error("Defaults is not idempotent")
	}
	// Set values are kept.
	d := Config{Cluster: Cluster{Nodes: 5}, WorkDir: "w"}
	d.Defaults()
	if d.Cluster.Nodes != 5 || d.Store.DB != "w/gofault.db" {
		t.Errorf("kept: nodes %d db %q", d.Cluster.Nodes, d.Store.DB)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		want []string // substrings of the error; none: valid
	}{
		{"valid", nil, nil},
		{"valid http ready", []string{"cluster.ready.http=http://{{.Host}}:{{.Port.client}}/health"}, nil},
		{"nodes zero after defaults", []string{"cluster.nodes=-2"}, []string{`cluster.nodes: must be at least 1 (got -2); set e.g. "nodes: 3"`}},
		{"nodes 64", []string{"cluster.nodes=64"}, nil},
		{"nodes too many", []string{"cluster.nodes=100000"}, []string{`cluster.nodes: must be at most 64 (got 100000); set e.g. "nodes: 3"`}},
		{"no packages", []string{"target.packages="}, []string{"target.packages: must list"}},
		{"negative keep_failed", []string{"store.keep_failed=-1"}, []string{`store.keep_failed: must be at least 1 (got -1); set e.g. "keep_failed: 20"`}},
		{"version without modules", []string{"target.version=v3.5.16"}, []string{"target.versioned: must list"}},
		{"version without v", []string{"target.version=3.5", "target.versioned=x"}, []string{"target.version: must be a module version"}},
		{"role", []string{"target.role=go.etcd.io/etcd/raft/v3.raft.state"}, nil},
		{"role method", []string{"target.role=github.com/x/raft.(*server).IsLeader"}, nil},
		{"role method, plain form", []string{"target.role=github.com/x/raft.server.State"}, nil},
		{"bad role method", []string{"target.role=github.com/x/raft.(*server.IsLeader"}, []string{`target.role: must be pkg/path.Type.field, pkg/path.(*Type).Method or none`}},
		{"no role", []string{"target.role=none"}, nil},
		{"bad role", []string{"target.role=raft.state"}, []string{`target.role: must be pkg/path.Type.field, pkg/path.(*Type).Method or none (got "raft.state")`, `role: none`}},
		{"no command", []string{"cluster.command="}, []string{"cluster.command: must be set"}},
		{"undeclared port", []string{"cluster.command={{.Bin}},--p={{.Port.admin}}"}, []string{"cluster.command[1]: bad template", "admin", `"client", "peer"`}},
		{"a node by index", []string{"cluster.nodes=3", "cluster.command={{.Bin}},--join={{(index .Nodes 2).Host}}"}, nil},
		{"a node past the cluster", []string{"cluster.nodes=3", "cluster.command={{.Bin}},--join={{(index .Nodes 3).Host}}"}, []string{"cluster.command[1]: bad template", "out of range"}},
		{"bad template syntax", []string{"cluster.env.X={{.Name"}, []string{"cluster.env.X: bad template"}},
		{"unknown var", []string{"cluster.ready.tcp={{.Hots}}:1"}, []string{"cluster.ready.tcp: bad template"}},
		{"both probes", []string{"cluster.ready.http=http://x", "cluster.ready.tcp=x:1"}, []string{"cluster.ready: sets both"}},
		{"http not url", []string{"cluster.ready.http=localhost:1"}, []string{"cluster.ready.http: must be an http"}},
		{"bad port name", []string{"cluster.ports=client,my-port"}, []string{"cluster.ports[1]", "not an identifier"}},
		{"fault nodes", []string{"cluster.nodes=3", "faults.nodes=n2,n3"}, nil},
		{"a fault node past the cluster", []string{"cluster.nodes=3", "faults.nodes=n2,n4"}, []string{`faults.nodes[1]: "n4" is no member of the cluster; name members "n1" to "n3" (cluster.nodes)`}},
		{"dup port", []string{"cluster.ports=client,client"}, []string{"listed twice"}},
		{"bad signal", []string{"cluster.shutdown.signal=SIGFOO"}, []string{"cluster.shutdown.signal: unknown signal", "SIGTERM"}},
		{"short signal", []string{"cluster.shutdown.signal=int"}, nil},
		{"sequential", []string{"cluster.shutdown.order=sequential"}, nil},
		{"leader-last", []string{"cluster.shutdown.order=leader-last"}, nil},
		{"min_duration", []string{"workload.min_duration=2s"}, nil},
		{"min_duration past timeout", []string{"workload.min_duration=40s", "workload.timeout=30s"}, []string{"workload.min_duration: must be positive and below workload.timeout 30s (got 40s)"}},
		{"negative min_duration", []string{"workload.min_duration=-1s"}, []string{"workload.min_duration: must be positive"}},
		{"bad order", []string{"cluster.shutdown.order=random"}, []string{`cluster.shutdown.order: unknown order "random"; set "order: parallel", "order: sequential" or "order: leader-last"`}},
		{"negative grace", []string{"cluster.shutdown.grace=-1s"}, []string{"cluster.shutdown.grace: must be positive"}},
		{"no workload", []string{"workload.command="}, []string{"workload: must set package or command"}},
		{"both workloads", []string{"workload.package=./w"}, []string{"workload: sets both"}},
		{"unknown checker", []string{"checkers.enabled=crash,hang,lin"}, []string{`checkers.enabled[2]: unknown name "lin"`, `"linearizability"`}},
		{"log ignore", []string{"checkers.log_ignore=slow fdatasync,lost leader [0-9a-f]+"}, nil},
		{"bad log ignore", []string{"checkers.log_ignore=ok,took (too long"}, []string{"checkers.log_ignore[1]: is not a valid regular expression", "missing closing )"}},
		{"bad log downgraded", []string{"checkers.log_downgraded=(by the node"}, []string{"checkers.log_downgraded[0]: is not a valid regular expression", "missing closing )"}},
		{"unknown kind", []string{"faults.kinds=error,cut"}, []string{`faults.kinds[1]: unknown name "cut"`, `"corrupt", "crash", "crash-after", "delay", "disconnect", "error", "leadercut", "oneway", "partition", "pause", "powerloss", "powerloss-after", "reboot", "rot", "split", "stop", "torn"`}},
		{"partition shapes", []string{"faults.kinds=[oneway, split, leadercut]"}, nil},
		{"leader cut moments", []string{"faults.kinds=[leadercut]", "faults.partition.leader_at=[wal.(*WAL).Save]"}, nil},
		{"leader cut moments without the kind", []string{"faults.kinds=[partition]", "faults.partition.leader_at=[wal.(*WAL).Save]"},
			[]string{"faults.partition.leader_at: chooses where a leader cut starts, but faults.kinds does not list leadercut"}},
		{"an empty leader cut moment", []string{"faults.kinds=[leadercut]", "faults.partition.leader_at=[x, ' ']"}, []string{"faults.partition.leader_at[1]: is empty"}},
		{"held cuts", []string{"faults.kinds=[partition]", "faults.partition.hold=[leader, requests=64, site=SaveSnap]"}, nil},
		{"held arc cuts", []string{"faults.kinds=[disconnect, oneway]", "faults.partition.hold=[requests=20]"}, nil},
		{"a hold without a cut", []string{"faults.kinds=[crash, delay]", "faults.partition.hold=[leader]"},
			[]string{"faults.partition.hold: holds a cut, but faults.kinds lists none"}},
		{"a held cut until no site", []string{"faults.kinds=[partition]", "faults.partition.hold=[leader, site=]"},
			[]string{`faults.partition.hold[1]: hold condition "site=" names no site`}},
		{"an unknown hold", []string{"faults.kinds=[partition]", "faults.partition.hold=[snapshot]"},
			[]string{`faults.partition.hold[0]: unknown hold condition "snapshot" (want leader, requests=K with K at least 1, site=S, or behind=N with N at least 1)`}},
		{"held cuts until a member fell behind", []string{"faults.kinds=[partition, oneway]", "faults.partition.hold=[behind=100]"}, nil},
		{"behind no entries", []string{"faults.kinds=[partition]", "faults.partition.hold=[behind=0]"},
			[]string{`faults.partition.hold[0]: hold condition "behind=0" needs a whole number of entries, at least 1 (want behind=N, e.g. behind=100)`, `"behind=100"`}},
		{"behind a malformed count", []string{"faults.kinds=[delay]", "faults.delay_hold=[leader, behind=lots]"},
			[]string{`faults.delay_hold[1]: hold condition "behind=lots" needs a whole number of entries`, `"behind=20"`}},
		{"held delays", []string{"faults.kinds=[delay]", "faults.delay_hold=[leader, requests=20, site=SaveSnap, behind=20]", "faults.delay_hold_cap=8s"}, nil},
		{"a held delay without delays", []string{"faults.kinds=[crash, partition]", "faults.delay_hold=[leader]"},
			[]string{"faults.delay_hold: holds a delay, but faults.kinds does not list delay"}},
		{"an unknown delay hold", []string{"faults.kinds=[delay]", "faults.delay_hold=[leader, requests=0]"},
			[]string{`faults.delay_hold[1]: `}},
		{"a negative delay hold cap", []string{"faults.kinds=[delay]", "faults.delay_hold_cap=-1s"},
			[]string{"faults.delay_hold_cap: must be positive (got -1s)"}},
		{"a shape misspelt", []string{"faults.kinds=[split, one-way]"}, []string{`faults.kinds[1]: unknown name "one-way"`, `"oneway"`}},
		{"disk kinds", []string{"faults.kinds=corrupt,torn", "faults.files=log,snapshot"}, nil},
		{"unknown file role", []string{"faults.kinds=corrupt", "faults.files=log,wal"}, []string{`faults.files[1]: unknown name "wal"`, `"data", "log", "metadata", "snapshot"`}},
		{"unknown policy", []string{"policy.name=bsr"}, []string{`policy.name: unknown name "bsr"; valid names: "bsrr", "none", "random"`}},
		{"per trial", []string{"policy.per_trial=-1"}, []string{"policy.per_trial: must be at least 1"}},
		{"parallel", []string{"trials.parallel=-1"}, []string{"trials.parallel: must be at least 1 or auto (got -1)"}},
		{"parallel auto", []string{"trials.parallel=auto"}, nil},
		{"parallel 4", []string{"trials.parallel=4"}, nil},
		{"trial shorter than workload", []string{"trials.timeout=10s"}, []string{"trials.timeout: must be longer than workload.timeout 30s (got 10s)"}},
		{"baseline none", []string{"checkers.baseline=-1"}, nil},
		{"generic sites off", []string{"checkers.generic_sites=-1"}, nil},
		{"bad generic sites", []string{"checkers.generic_sites=-2"}, []string{`checkers.generic_sites: must be -1 or more (got -2); set e.g. "generic_sites: 3"`}},
		{"no re-runs", []string{"checkers.rerun_fault_free=-1"}, nil},
		{"bad re-runs", []string{"checkers.rerun_fault_free=-5"}, []string{`checkers.rerun_fault_free: must be -1 or more (got -5); set e.g. "rerun_fault_free: 2"`}},
		{"waits for slow", []string{"checkers.waits_for_slow=[{kind: delay, role: StateLeader, reason: writes need every replica's ack}]"}, nil},
		{"waits for slow at a site", []string{"checkers.waits_for_slow=[{kind: partition, site: 'raft.(*Raft).x#1', reason: a quorum of two}]"}, nil},
		{"waits for slow on a member", []string{"checkers.waits_for_slow=[{kind: partition, node: n1, reason: the static leader}]"}, nil},
		{"waits for slow without a reason", []string{"checkers.waits_for_slow=[{kind: delay}, {kind: delay, reason: ' '}]"}, []string{
			`checkers.waits_for_slow[0].reason: is missing; say why the design waits`, `checkers.waits_for_slow[1].reason: is missing`}},
		{"waits for slow: a kind that does not slow", []string{"checkers.waits_for_slow=[{kind: crash, reason: x}]"}, []string{
			`checkers.waits_for_slow[0].kind: unknown kind "crash"; use delay, pause, stop, partition, disconnect, oneway, split or leadercut`}},
		{"waits for slow: a split", []string{"checkers.waits_for_slow=[{kind: split, reason: the minority waits}]"}, nil},
		{"waits for slow on no member", []string{"checkers.waits_for_slow=[{kind: delay, node: n7, reason: x}]"}, []string{
			`checkers.waits_for_slow[0].node: unknown member "n7"; name a member, n1 to n3, or leave it out`}},
		{"waits for slow without a kind", []string{"checkers.waits_for_slow=[{role: StateLeader, reason: x}]"}, []string{
			`checkers.waits_for_slow[0].kind: is missing; set e.g. "kind: delay"`}},
		{"several errors", []string{"cluster.nodes=-1", "policy.budget=-3"}, []string{"cluster.nodes:", "policy.budget:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(base), tt.set...)
			if err != nil {
				t.Fatal(err)
			}
			c.Defaults()
			err = c.Validate(known)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseSignal(t *testing.T) {
	for _, s := range []string{"SIGTERM", "TERM", "sigterm", "15"} {
		if sig, err := ParseSignal(s); err != nil || sig != 15 {
			t.Errorf("ParseSignal(%q) = %v, %v", s, sig, err)
		}
	}
	if _, err := ParseSignal("SIGNOPE"); err == nil {
		t.Error("SIGNOPE: no error")
	}
}

func TestTemplate(t *testing.T) {
	c, err := Parse(Template("etcd"))
	if err != nil {
		t.Fatalf("template does not parse: %v", err)
	}
	if c.Name != "etcd" {
		t.Errorf("name = %q", c.Name)
	}
	// Editors find the schema on the first line (yaml-language-server).
	if first, _, _ := strings.Cut(string(Template("etcd")), "\n"); first != "# yaml-language-server: $schema="+SchemaURL {
		t.Errorf("first line %q does not name the schema", first)
	}
	c.Defaults()
	err = c.Validate(known)
	if err == nil || !strings.Contains(err.Error(), "cluster.command: must be set") || !strings.Contains(err.Error(), "workload: must set") {
		t.Errorf("unfilled template: want errors for cluster.command and workload, got %v", err)
	}
	c, err = Parse(Template("x: y"), `cluster.command=["{{.Bin}}", "--data={{.Dir}}", "--port={{.Port.client}}"]`, "workload.package=./workload")
	if err != nil {
		t.Fatal(err)
	}
	c.Defaults()
	if err := c.Validate(known); err != nil {
		t.Errorf("filled template: %v", err)
	}
	if c.Name != "x: y" {
		t.Errorf("name not quoted: %q", c.Name)
	}
	// The example command in the comments is a valid template.
	ex, err := Parse(Template("x"), `cluster.command=["{{.Bin}}", "--peers={{range $i, $n := .Nodes}}{{if $i}},{{end}}{{$n.Name}}=http://{{$n.Host}}:{{$n.Port.peer}}{{end}}"]`, "workload.package=./w")
	if err != nil {
		t.Fatal(err)
	}
	ex.Defaults()
	if err := ex.Validate(known); err != nil {
		t.Errorf("example command: %v", err)
	}
}

func TestHash(t *testing.T) {
	parse := func(set ...string) string {
		c, err := Parse([]byte(base), set...)
		if err != nil {
			t.Fatal(err)
		}
		c.Defaults()
		return c.Hash()
	}
	h := parse()
	if h != parse() || len(h) != 32 {
		t.Fatalf("hash unstable or wrong length: %q", h)
	}
	for _, s := range []string{"trials.count=7", "trials.parallel=2", "store.db=x.db", "checkers.progress=1s"} {
		if parse(s) != h {
			t.Errorf("%s changed the hash", s)
		}
	}
	for _, s := range []string{"cluster.nodes=5", "target.version=v1.0.0", "policy.seed=9", "policy.name=bsrr", "cluster.env.B=2", "workload.timeout=1m"} {
		if parse(s) == h {
			t.Errorf("%s did not change the hash", s)
		}
	}
}

func TestFields(t *testing.T) {
	f := Fields()
	for _, want := range []string{"name", "cluster.nodes", "cluster.ready.timeout", "checkers.linearizability_timeout", "store.db", "workdir"} {
		found := false
		for _, g := range f {
			found = found || g == want
		}
		if !found {
			t.Errorf("Fields lacks %q", want)
		}
	}
	for _, g := range f {
		if g == "dir" {
			t.Error("Fields lists the yaml:\"-\" field Dir")
		}
	}
}

func TestOverridesFlag(t *testing.T) {
	var o Overrides
	for _, s := range []string{"cluster.nodes=5", "target.version=v3.5.16"} {
		if err := o.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"nodes", "=5"} {
		if err := o.Set(bad); err == nil {
			t.Errorf("Set(%q): no error", bad)
		}
	}
	c, err := Parse([]byte(base), o...)
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster.Nodes != 5 || c.Target.Version != "v3.5.16" || o.String() != "cluster.nodes=5 target.version=v3.5.16" {
		t.Errorf("nodes %d version %q string %q", c.Cluster.Nodes, c.Target.Version, o.String())
	}
}

// TestDocExample checks that the annotated example in docs/config.md is a
// valid config.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Annotated example")
	if !ok {
		t.Fatal("docs/config.md has no annotated example")
	}
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	example, _, _ := strings.Cut(rest, "```")
	c, err := Parse([]byte(example))
	if err != nil {
		t.Fatalf("example does not parse: %v", err)
	}
	c.Defaults()
	if err := c.Validate(Known{Policies: []string{"bsrr"}, Checkers: DefaultCheckers}); err != nil {
		t.Errorf("example does not validate: %v", err)
	}
	// Every field of the schema is documented.
	for _, f := range Fields() {
		name := f[strings.LastIndex(f, ".")+1:]
		d := string(doc)
		if !strings.Contains(d, "`"+name+"`") && !strings.Contains(d, "`"+name+".") && !strings.Contains(d, "."+name+"`") {
			t.Errorf("docs/config.md does not document %s", f)
		}
	}
}

func TestClosest(t *testing.T) {
	for _, tc := range []struct {
		s     string
		valid []string
		want  string
	}{
		{"faults.kind", Fields(), "faults.kinds"},
		{"faults.dely", Fields(), "faults.delay"},
		{"trial.count", Fields(), "trials.count"}, // no section "trial.": all paths
		{"nodes", Fields(), "cluster.nodes"},      // the last element alone
		{"afected", []string{"id", "affected", "fixed"}, "affected"},
		{"x", nil, ""},
	} {
		if got := Closest(tc.s, tc.valid); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestParallel(t *testing.T) {
	for _, tt := range []struct {
		yaml     string
		sets     []string
		want     Parallel
		wantAuto bool
	}{
		{base, nil, 0, true},
		{base + "trials:\n  parallel: auto\n", nil, 0, true},
		{base + "trials:\n  parallel: 3\n", nil, 3, false},
		{base + "trials:\n  parallel: 3\n", []string{"trials.parallel=auto"}, 0, true},
		{base, []string{"trials.parallel=2"}, 2, false},
	} {
		c, err := Parse([]byte(tt.yaml), tt.sets...)
		if err != nil {
			t.Fatal(err)
		}
		c.Defaults()
		if c.Trials.Parallel != tt.want || c.Trials.Parallel.Auto() != tt.wantAuto {
			t.Errorf("%q %v: parallel %s, want %s", tt.yaml, tt.sets, c.Trials.Parallel, tt.want)
		}
	}
	if _, err := Parse([]byte(base), "trials.parallel=many"); err == nil || !strings.Contains(err.Error(), `trials.parallel: want a number such as 2, or "auto", got "many"`) {
		t.Errorf("trials.parallel=many: %v", err)
	}
	for _, tt := range []struct {
		in      string
		want    Parallel
		wantErr bool
	}{{"auto", 0, false}, {"AUTO", 0, false}, {"4", 4, false}, {"0", 0, true}, {"-2", 0, true}, {"x", 0, true}} {
		got, err := ParseParallel(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseParallel(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestAdaptiveEndDefaultOn(t *testing.T) {
	for _, tt := range []struct {
		yaml    string
		sets    []string
		want    bool
		wantMin time.Duration
	}{
		{base, nil, true, DefaultMinDuration},
		{base, []string{"workload.adaptive_end=false"}, false, DefaultMinDuration},
		{base + "  adaptive_end: false\n  min_duration: 3s\n", nil, false, 3 * time.Second},
		{base, []string{"workload.min_duration=2s"}, true, 2 * time.Second},
		// null is unset, the default: a bundle's gofault.yaml writes it so.
		{base + "  adaptive_end: null\n", nil, true, DefaultMinDuration},
	} {
		c, err := Parse([]byte(tt.yaml), tt.sets...)
		if err != nil {
			t.Fatal(err)
		}
		c.Defaults()
		if got := c.Workload.AdaptiveEndOn(); got != tt.want || c.Workload.MinDuration != tt.wantMin {
			t.Errorf("%q %v: adaptive_end %v, min %s; want %v, %s", tt.yaml, tt.sets, got, c.Workload.MinDuration, tt.want, tt.wantMin)
		}
	}
}

func TestCoverageDefaultOn(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		sets []string
		want bool
	}{
		{base, nil, true},
		{base, []string{"faults.coverage=false"}, false},
		{base + "faults:\n  coverage: false\n", nil, false},
		{base + "faults:\n  coverage: true\n", nil, true},
	} {
		c, err := Parse([]byte(tt.yaml), tt.sets...)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Faults.CoverageOn(); got != tt.want {
			t.Errorf("%q %v: coverage %v, want %v", tt.yaml, tt.sets, got, tt.want)
		}
	}
}
