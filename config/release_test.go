package config

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// releasesYAML is shaped like the etcd profile: the current line at the
// top, the older line's package paths and flag in a release entry.
const releasesYAML = `
name: etcd
target:
  module: .
  main: ./node
  packages: [go.etcd.io/etcd/server/v3/storage/..., go.etcd.io/raft/v3]
  version: v3.7.4
  versioned: [go.etcd.io/etcd/server/v3]
cluster:
  nodes: 3
  command: ["{{.Bin}}", "--watch-progress-notify-interval=1s"]
  env: {A: top}
checkers:
  log_ignore: [top]
releases:
  - versions: [v3.5]
    target:
      packages: [go.etcd.io/etcd/server/v3/mvcc, go.etcd.io/etcd/raft/v3]
      versioned: [go.etcd.io/etcd/server/v3, go.etcd.io/etcd/raft/v3]
    cluster:
      command: ["{{.Bin}}", "--experimental-watch-progress-notify-interval=1s"]
      env: {B: old}
  - versions: [v3.6.0, v3.6.4]
    checkers:
      log_ignore: [early]
`

func TestReleases(t *testing.T) {
	tests := []struct {
		name      string
		set       []string
		release   string
		packages  string
		command   string
		env       map[string]string
		logIgnore []string
	}{
		{"the top's own release", nil, "",
			"go.etcd.io/etcd/server/v3/storage/... go.etcd.io/raft/v3", "--watch-progress-notify-interval=1s",
			map[string]string{"A": "top"}, []string{"top"}},
		{"another release of the top's line", []string{"target.version=v3.6.16"}, "",
			"go.etcd.io/etcd/server/v3/storage/... go.etcd.io/raft/v3", "--watch-progress-notify-interval=1s",
			map[string]string{"A": "top"}, []string{"top"}},
		{"an older line: lists and values replaced, mappings merged", []string{"target.version=v3.5.17"}, "v3.5",
			"go.etcd.io/etcd/server/v3/mvcc go.etcd.io/etcd/raft/v3", "--experimental-watch-progress-notify-interval=1s",
			map[string]string{"A": "top", "B": "old"}, []string{"top"}},
		{"a release named whole", []string{"target.version=v3.6.4"}, "v3.6.0, v3.6.4",
			"go.etcd.io/etcd/server/v3/storage/... go.etcd.io/raft/v3", "--watch-progress-notify-interval=1s",
			map[string]string{"A": "top"}, []string{"early"}},
		{"a release named whole matches only itself", []string{"target.version=v3.6.40"}, "",
			"go.etcd.io/etcd/server/v3/storage/... go.etcd.io/raft/v3", "--watch-progress-notify-interval=1s",
			map[string]string{"A": "top"}, []string{"top"}},
		{"a line is not a prefix of another", []string{"target.version=v3.50.1"}, "",
			"go.etcd.io/etcd/server/v3/storage/... go.etcd.io/raft/v3", "--watch-progress-notify-interval=1s",
			map[string]string{"A": "top"}, []string{"top"}},
		{"--set wins over the entry", []string{"target.version=v3.5.2", "cluster.env.B=mine", "target.packages=x"}, "v3.5",
			"x", "--experimental-watch-progress-notify-interval=1s",
			map[string]string{"A": "top", "B": "mine"}, []string{"top"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(releasesYAML), tc.set...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Release != tc.release {
				t.Errorf("release %q, want %q", c.Release, tc.release)
			}
			if got := strings.Join(c.Target.Packages, " "); got != tc.packages {
				t.Errorf("packages %q, want %q", got, tc.packages)
			}
			if got := c.Cluster.Command[1]; got != tc.command {
				t.Errorf("command %q, want %q", got, tc.command)
			}
			if len(c.Cluster.Env) != len(tc.env) {
				t.Errorf("env %v, want %v", c.Cluster.Env, tc.env)
			}
			for k, v := range tc.env {
				if c.Cluster.Env[k] != v {
					t.Errorf("env %v, want %v", c.Cluster.Env, tc.env)
				}
			}
			if !slices.Equal(c.Checkers.LogIgnore, tc.logIgnore) {
				t.Errorf("log_ignore %v, want %v", c.Checkers.LogIgnore, tc.logIgnore)
			}
		})
	}
}

func TestReleaseErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"no versions", "target: {version: v1.2.3}\nreleases:\n  - target: {packages: [x]}\n",
			[]string{"line 3", "releases[0] names no versions", `"versions: [v3.5]"`}},
		{"not a version", "target: {version: v1.2.3}\nreleases:\n  - versions: [3.5]\n",
			[]string{"line 3", `releases[0].versions: "3.5" is not a version`}},
		{"sets the version", "target: {version: v1.2.3}\nreleases:\n  - versions: [v1]\n    target: {version: v1.0.0}\n",
			[]string{"releases[0].target.version", "set target.version at the top"}},
		{"unknown field", "target: {version: v1.2.3}\nreleases:\n  - versions: [v1]\n    clustr: {nodes: 3}\n",
			[]string{"line 4", "clustr", "cluster"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestEtcdProfileLines loads the etcd profile on each of its release
// lines: target.version alone must choose the v3.5 layout (its packages,
// its raft module among the versioned ones, its flag name) or the current
// one.
func TestEtcdProfileLines(t *testing.T) {
	tests := []struct {
		version, release, raft, flag string
		raftVersioned                bool
	}{
		{"", "", "go.etcd.io/raft/v3", "--watch-progress-notify-interval=1s", false},
		{"v3.7.3", "", "go.etcd.io/raft/v3", "--watch-progress-notify-interval=1s", false},
		{"v3.6.16", "", "go.etcd.io/raft/v3", "--watch-progress-notify-interval=1s", false},
		{"v3.5.13", "v3.5", "go.etcd.io/etcd/raft/v3", "--experimental-watch-progress-notify-interval=1s", true},
	}
	for _, tc := range tests {
		t.Run(cmp.Or(tc.version, "default"), func(t *testing.T) {
			var set []string
			if tc.version != "" {
				set = append(set, "target.version="+tc.version)
			}
			c, err := Load("../targets/etcd/gofault.yaml", set...)
			if err != nil {
				t.Fatal(err)
			}
			c.Defaults()
			if err := c.Validate(Known{Policies: []string{"random"}, Checkers: DefaultCheckers}); err != nil {
				t.Fatal(err)
			}
			if c.Release != tc.release {
				t.Errorf("release entry %q, want %q", c.Release, tc.release)
			}
			if !slices.Contains(c.Target.Packages, tc.raft) {
				t.Errorf("packages %v lack %s", c.Target.Packages, tc.raft)
			}
			if got := slices.Contains(c.Target.Versioned, "go.etcd.io/etcd/raft/v3"); got != tc.raftVersioned {
				t.Errorf("versioned %v: etcd/raft/v3 listed %v, want %v", c.Target.Versioned, got, tc.raftVersioned)
			}
			if !slices.Contains(c.Cluster.Command, tc.flag) {
				t.Errorf("command %v lacks %s", c.Cluster.Command, tc.flag)
			}
		})
	}
}

// TestProfileLogIgnore: the log_ignore patterns added for the current
// releases dismiss the lines they were written for and not the same
// messages with another cause (planted: an injected EIO behind the same
// call must still be judged).
func TestProfileLogIgnore(t *testing.T) {
	tests := []struct {
		profile, line string
		ignored       bool
	}{
		{"../targets/etcd/gofault.yaml", `{"level":"warn","ts":"2026-12-06T06:59:07.895325Z","caller":"etcdserver/server.go:2206","msg":"Failed to detect schema version","error":"missing term information"}`, true},
		{"../targets/etcd/gofault.yaml", `{"level":"error","ts":"2026-12-06T06:56:24.876937Z","caller":"version/monitor.go:120","msg":"failed to update storage version","cluster-version":"3.7.0","error":"cannot detect storage schema version: missing term information"}`, true},
		{"../targets/etcd/gofault.yaml", `{"level":"error","ts":"2026-12-06T06:56:24.876937Z","caller":"version/monitor.go:120","msg":"failed to update storage version","cluster-version":"3.7.0","error":"cannot detect storage schema version: missing confstate information"}`, true},
		{"../targets/etcd/gofault.yaml", `{"level":"error","ts":"2026-12-06T06:56:24.876937Z","caller":"version/monitor.go:120","msg":"failed to update storage version","cluster-version":"3.7.0","error":"write /d/member/snap/db: input/output error"}`, false},
		{"../targets/etcd/gofault.yaml", `{"level":"warn","ts":"2026-12-06T06:59:07.895325Z","caller":"etcdserver/server.go:2206","msg":"Failed to detect schema version","error":"input/output error"}`, false},
		{"../targets/raft/gofault.yaml", `2026-12-06T07:19:37.005Z [ERROR] raft: failed to take snapshot: error="nothing new to snapshot"`, true},
		{"../targets/raft/gofault.yaml", `2026-12-06T07:19:37.005Z [ERROR] raft: failed to take snapshot: error="failed to write snapshot: input/output error"`, false},
	}
	for _, tc := range tests {
		c, err := Load(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		matched := slices.ContainsFunc(c.Checkers.LogIgnore, func(p string) bool { return regexp.MustCompile(p).MatchString(tc.line) })
		if matched != tc.ignored {
			t.Errorf("%s: log_ignore matches %q: %v, want %v", tc.profile, tc.line, matched, tc.ignored)
		}
	}
}
