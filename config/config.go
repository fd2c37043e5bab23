// Package config defines gofault.yaml: the target to analyse and build, the
// cluster to run, the workload, checkers, faults, policy and trial limits of
// a campaign.
package config

import "time"

// Config is one gofault.yaml.
type Config struct {
	// Name names the campaign's target, e.g. "etcd".
	Name string `yaml:"name"`
	// Dir is the directory of the config file; relative paths in the config
	// are resolved against it. Set by Load, not read from YAML.
	Dir string `yaml:"-"`

	Target   Target   `yaml:"target"`
	Cluster  Cluster  `yaml:"cluster"`
	Workload Workload `yaml:"workload"`
	Checkers Checkers `yaml:"checkers"`
	Faults   Faults   `yaml:"faults"`
	Policy   Policy   `yaml:"policy"`
	Trials   Trials   `yaml:"trials"`
	Store    Store    `yaml:"store"`
	// Test is read by gofault test only (config/test.go).
	Test Test `yaml:"test"`
	// WorkDir holds builds, trial data and logs; default ".gofault" next to
	// the config file.
	WorkDir string `yaml:"workdir"`
	// Releases are parts of the config for some releases of the target
	// only (config/release.go): the first whose versions match
	// target.version is laid over the rest, e.g. the package paths and
	// flags of an older release line.
	Releases []Release `yaml:"releases"`
	// Release names the versions of the Releases entry that was applied
	// ("" for none). Set by Parse, not read from YAML.
	Release string `yaml:"-"`
}

// Target says what to analyse, instrument and build.
type Target struct {
	// Module is the directory of the Go module holding Main (relative to
	// the config file).
	Module string `yaml:"module"`
	// Main is the main package to build, relative to Module, e.g. "./node".
	Main string `yaml:"main"`
	// Packages are the package patterns to analyse and instrument, e.g.
	// "go.etcd.io/etcd/server/v3/...". Packages of dependency modules are
	// copied into the work dir before they are instrumented.
	Packages []string `yaml:"packages"`
	// Version, when set, is the release of the modules in Versioned to
	// build, e.g. "v3.5.16": the node is built with that release's own
	// dependency graph (the versioned modules' go.mod files at Version),
	// not with go.mod's pins (docs/build.md).
	Version string `yaml:"version"`
	// Versioned are the module paths that Version applies to.
	Versioned []string `yaml:"versioned"`
	// BuildFlags are extra flags for go build, e.g. ["-tags", "foo"].
	BuildFlags []string `yaml:"build_flags"`
	// Role names the struct field holding a node's role (leader,
	// follower, ...) as "pkg/path.Type.field", e.g.
	// "go.etcd.io/etcd/raft/v3.raft.state": an integer or named integer
	// type with constants, a string or named string type written or
	// compared with constants ("leader", "follower"), or a bool whose
	// name says leader (isLeader); or a method that returns or compares
	// one, "pkg/path.(*Type).IsLeader" or "pkg/path.Type.IsLeader"; "none"
	// turns role tracking off. Empty lets the analysis find an integer
	// role (docs/analysis.md, "Node role").
	Role string `yaml:"role"`
}

// Cluster says how to run one node of the target.
type Cluster struct {
	// Nodes is the number of node processes (default 3).
	Nodes int `yaml:"nodes"`
	// Ports names the ports each node gets, e.g. ["client", "peer"]; every
	// trial allocates fresh free loopback ports (with Template, every
	// trial of a parallel slot the same ones).
	Ports []string `yaml:"ports"`
	// Command is the node's command line, a list of Go text/template strings
	// over cluster.NodeVars, e.g. "--listen-client-urls=http://127.0.0.1:{{.Port.client}}".
	Command []string `yaml:"command"`
	// Env adds environment variables (templates too).
	Env map[string]string `yaml:"env"`
	// Ready is how to tell a node is up.
	Ready Ready `yaml:"ready"`
	// Shutdown is how to stop a node at the end of a trial.
	Shutdown Shutdown `yaml:"shutdown"`
	// Template starts every trial from a copy of the members' data dirs
	// as a fault-free start left them (the formed, empty cluster) instead
	// of an empty dir: one bootstrap per parallel slot of a campaign, whose
	// trials then keep that slot's ports, since targets such as etcd keep
	// their peers' addresses in their data. Faults never strike the
	// bootstrap itself with it (docs/performance.md, "Template start").
	Template bool `yaml:"template"`
}

// Ready is a readiness probe.
type Ready struct {
	// TCP is a template for host:port that accepts connections when ready.
	TCP string `yaml:"tcp"`
	// HTTP is a template for a URL that answers 2xx when ready.
	HTTP string `yaml:"http"`
	// Timeout bounds the wait for every node to be ready (default 30s).
	Timeout time.Duration `yaml:"timeout"`
}

// Shutdown is how nodes are stopped.
type Shutdown struct {
	Signal string        `yaml:"signal"` // default "SIGTERM"
	Grace  time.Duration `yaml:"grace"`  // then SIGKILL; default 5s
	// Order is "parallel" (default: signal every node at once),
	// "sequential" (one node at a time, in index order, each getting its
	// own grace) or "leader-last" (every node but the leader at once, then
	// the leader, by the catalog's role hooks; sequential when no leader
	// is known). Consensus systems often stop faster so: a leader stopping
	// while its peers stop too may wait out a leadership transfer.
	Order string `yaml:"order"`
}

// Workload is what drives the cluster during a trial.
type Workload struct {
	// Package is a Go main package (relative to Target.Module) built once
	// per campaign and run as the workload; or
	Package string `yaml:"package"`
	// Command is an external command line (templates over TrialVars).
	Command []string `yaml:"command"`
	// Env adds environment variables to the workload.
	Env map[string]string `yaml:"env"`
	// Timeout bounds the workload; past it the trial ends as hung
	// (default 30s).
	Timeout time.Duration `yaml:"timeout"`
	// AdaptiveEnd lets the runner end the workload's load early (default
	// on): once the trial's last fault struck and ended and the cluster
	// served on for the recovery bound and then a progress bound (so a
	// consequence that outlasts the fault's window shows), or at once
	// when no fault can strike (policy none).
	// A trial whose fault has not struck, and a fault-free baseline trial,
	// run the load's full length. The workload must use workload.T.Load
	// (a command workload: end its load when the file GOFAULT_LOAD_END
	// names appears); docs/performance.md.
	AdaptiveEnd *bool `yaml:"adaptive_end"`
	// MinDuration is the shortest load before an early end (default 1s):
	// the work every trial does, fault or not.
	MinDuration time.Duration `yaml:"min_duration"`
}

// AdaptiveEndOn reports whether workload.adaptive_end is on (the default).
func (w Workload) AdaptiveEndOn() bool { return w.AdaptiveEnd == nil || *w.AdaptiveEnd }

// Checkers selects and tunes the checkers.
type Checkers struct {
	// Enabled lists checker names; default DefaultCheckers.
	Enabled []string `yaml:"enabled"`
	// Progress is how long a client may go without progress before the
	// hang, gray and slow checkers count it as stalled. Unset or "auto" (the
	// default): measured at the start of the campaign from a failover on
	// the target (a calibration trial kills the leader), twice the
	// longest stall it causes and at least 3s.
	Progress Bound `yaml:"progress"`
	// Baseline is the number of fault-free trials the log checker learns
	// from (default 3; -1 for none).
	Baseline int `yaml:"baseline"`
	// Linearizability bounds the porcupine check of a trial's history
	// (default 10s).
	Linearizability time.Duration `yaml:"linearizability_timeout"`
	// RecoveryBound is how long after the last fault ended every live
	// member must serve the workload again (the recovery checker; default
	// 5s, a few election timeouts).
	RecoveryBound time.Duration `yaml:"recovery_bound"`
	// LogFormat is the nodes' log format: "auto" (the default: each line's
	// detected — zap/slog/logrus JSON, glog/klog, zap console, logfmt or
	// a bracketed level, else a level word), or one of "json", "klog",
	// "zap-console", "logfmt", "stdlog" (Go's log package, which has no
	// levels: only panics and fatal errors count), whose other lines the
	// log checker skips.
	LogFormat string `yaml:"log_format"`
	// LogIgnore are regular expressions (Go syntax) of log lines the log
	// checker never reports: warnings known to be harmless that the
	// baseline trials happened not to see.
	LogIgnore []string `yaml:"log_ignore"`
	// LogDowngraded are regular expressions (Go syntax) of the marks the
	// target's own program appends to errors it logs below warning because
	// it knows their cause (the raft target's node program during an admin
	// call): the log checker lists the marked lines as dismissed (rule
	// downgraded), so the report shows what the program hid.
	LogDowngraded []string `yaml:"log_downgraded"`
	// GenericSites: a new log line that followed faults at this many
	// unrelated sites or more is a generic consequence of faults
	// (informational in the report), not a finding (default 3; -1 never).
	GenericSites int `yaml:"generic_sites"`
	// RerunFaultFree is how many times a trial that failed without an
	// injected fault is run again, fault-free, to tell a flaky failure
	// from a reproducible one (default 2; -1 never).
	RerunFaultFree int `yaml:"rerun_fault_free"`
	// WaitsForSlow says where the target's documented design waits for
	// a slowed or cut member (a quorum that needs it, a static leader):
	// the other members' clients may stall as long as such a fault lasts.
	// The slow, hang and gray checkers excuse those stalls and show them
	// in their evidence with the reason. Empty (the default): a healthy
	// cluster routes around one slow member within the progress bound.
	WaitsForSlow []SlowWait `yaml:"waits_for_slow"`
}

// SlowWait is one entry of checkers.waits_for_slow: the faults of one kind
// (optionally in one role, at one site, on one member) that the design
// waits for, and why.
type SlowWait struct {
	// Kind is the fault kind: delay, pause, stop, partition, disconnect,
	// oneway, split or leadercut.
	Kind string `yaml:"kind"`
	// Role limits the entry to faults that struck a member in this role
	// (the catalog's role name that reports show, e.g. "StateLeader");
	// empty: any role.
	Role string `yaml:"role"`
	// Site limits the entry to faults at this site (its stable ID, as
	// reports show it); empty: any site.
	Site string `yaml:"site"`
	// Node limits the entry to faults that struck this member (e.g. "n1"),
	// for a design whose leader is fixed by configuration rather than
	// elected; empty: any member.
	Node string `yaml:"node"`
	// Reason says why the design waits (required): it is shown with every
	// stall the entry excuses.
	Reason string `yaml:"reason"`
}

// SlowWaitKinds are the fault kinds checkers.waits_for_slow may name: the
// faults that slow, pause, stop or cut a member for a while.
var SlowWaitKinds = []string{"delay", "pause", "stop", "partition", "disconnect", "oneway", "split", "leadercut"}

// Faults selects the fault kinds a campaign may inject.
type Faults struct {
	// Kinds are the fault kinds to inject (default DefaultFaultKinds:
	// error, delay, crash).
	Kinds []string `yaml:"kinds"`
	// Delay is the injected delay where no timeout was observed (default
	// 3s).
	Delay time.Duration `yaml:"delay"`
	// DelayHold adds, for each condition, a variant of every delay that
	// holds the delayed call until something happened in the protocol
	// rather than for delay: the conditions of partition.hold, the
	// delayed member counting as the cut one — "leader" (another member
	// took the leader role), "requests=K" (the other members' clients made
	// K more requests that succeeded: the cluster moved on while the call,
	// often under a lock, was stuck), "site=S" (another member reached a
	// site whose stable ID contains S) or "behind=N" (the delayed member
	// fell N entries behind the others' commit index). partition.hold
	// holds cuts only.
	DelayHold []string `yaml:"delay_hold"`
	// DelayHoldCap bounds a held delay whose condition never comes
	// (default 15s).
	DelayHoldCap time.Duration `yaml:"delay_hold_cap"`
	// TargetErrors also injects the errors the target creates itself
	// (sentinels, errors.New, custom types) rather than only errors of
	// I/O. Off by default: such an error is a computed result, not a fault
	// of the environment, and injecting it where the target's own logic
	// rules it out (an apply error on one replica of a deterministic state
	// machine, ErrCompacted from an in-memory raft log) makes findings that
	// cannot happen.
	TargetErrors bool `yaml:"target_errors"`
	// Timers are the target's own timers, by name (e.g. "election: 1s",
	// "heartbeat: 100ms", "backoff: 1s"): a pause lasts, and a stopped
	// member stays down, half of, as long as and twice each of them (one
	// fault variant each), so that each shape is tried shorter than,
	// around and longer than the timer it races. Empty: faults.delay.
	Timers map[string]time.Duration `yaml:"timers"`
	// Partition tunes the partition fault kind.
	Partition Partition `yaml:"partition"`
	// PowerLossPaths limits what a power-loss crash rolls back to the
	// files of the node's data dir that match one of these path.Match
	// patterns, slash-separated and relative to the data dir (a pattern
	// naming a directory covers its files); empty: every file. Leave out
	// files whose syncs are not fault sites (a dependency that is not
	// instrumented): their syncs go unseen (docs/config.md).
	PowerLossPaths []string `yaml:"powerloss_paths"`
	// Files limits the corrupt and torn faults to the reads and writes of
	// files of these roles, as the analysis classified them (FileRoles:
	// log, snapshot, metadata, data); empty: every role.
	Files []string `yaml:"files"`
	// Roles limits every fault to the requests of members in these roles,
	// as the catalog's role type names them (e.g. "StateFollower" on etcd,
	// "Follower" on hashicorp/raft): a campaign about what a follower's
	// crash does, not the leader's. Empty: every role. Needs the analysis
	// to have found the role field (target.role).
	Roles []string `yaml:"roles"`
	// Nodes limits every fault to the requests of these members ("n1" to
	// "n<cluster.nodes>"): a campaign about the followers of a target with
	// a static leader, or about one member. Empty: every member.
	Nodes []string `yaml:"nodes"`
	// MaxPerTrial bounds the faults of one trial's sequence (the fuzz
	// policy; default 3).
	MaxPerTrial int `yaml:"max_per_trial"`
	// Coverage puts a coverage counter at the start of every basic block
	// of the target packages (default on; docs/performance.md measures
	// its cost). The campaign reports blocks covered over trials and the
	// fuzz policy scores sequences by the new blocks their trials cover.
	Coverage *bool `yaml:"coverage"`
}

// CoverageOn reports whether faults.coverage is on (the default).
func (f Faults) CoverageOn() bool { return f.Coverage == nil || *f.Coverage }

// Partition tunes partition faults: where the peer network is and how long
// a member stays cut off.
type Partition struct {
	// Packages are the target's peer-transport packages, whose network
	// calls a partition fails or stalls (import paths, "/..." patterns or
	// last path elements; default: packages named rafthttp, etcd's).
	Packages []string `yaml:"packages"`
	// Duration is how long a partition lasts before it heals (default
	// 3s).
	Duration time.Duration `yaml:"duration"`
	// Observe names CoFI's observation points by function, beside those
	// found by name (Send, Process, Step).
	Observe ObserveFuncs `yaml:"observe"`
	// LeaderAt chooses the protocol moments of a leader cut (fault kind
	// leadercut): it starts only right after a call of the leader at a
	// site whose stable ID contains one of these strings, e.g.
	// "wal.(*WAL).Save" (the leader's log append, before the entry can
	// commit); empty: at any site the leader reaches.
	LeaderAt []string `yaml:"leader_at"`
	// Hold adds, for each condition, a variant of every cut (partition,
	// leadercut, disconnect, oneway, split) that lasts until something
	// happened in the protocol rather than for duration: "leader"
	// (leadership moved: another member took the leader role),
	// "requests=K" (the clients of the members not cut made K more
	// requests that succeeded: the cluster moved on without the cut
	// members, enough for its leader to compact past them), "site=S" (a
	// member not cut reached a site whose stable ID contains S, e.g.
	// "site=SaveSnap": the leader took a snapshot; a campaign refuses an
	// S that no site of the catalog contains) or "behind=N" (the cut
	// members' log fell at least N entries behind: the commit index the
	// other members observe passed theirs at the cut by N; a campaign
	// refuses it when no observation point of the catalog observes a
	// commit index). The cut members are the cut node, both ends of a
	// disconnect, the struck member of a one-way cut, the struck side of
	// a split.
	Hold []string `yaml:"hold"`
	// HoldCap bounds a held cut whose condition never comes (default
	// 15s).
	HoldCap time.Duration `yaml:"hold_cap"`
}

// ObserveFuncs name the functions that send peer messages and those that
// handle one ("pkg/path.(*T).M", "pkg.(*T).M" with the last path element,
// or "(*T).M"; "F" for a function). Each must take a message (a struct
// with integer fields Type, From and To, a sender a slice of them; or a
// peer message struct the analysis found, docs/analysis.md).
type ObserveFuncs struct {
	Send    []string `yaml:"send"`
	Handled []string `yaml:"handled"`
}

// Policy selects and tunes the injection policy.
type Policy struct {
	// Name names the policy (default "random").
	Name string `yaml:"name"`
	// Seed seeds the policy's random choices.
	Seed int64 `yaml:"seed"`
	// PerTrial is the number of injections per trial (default 1).
	PerTrial int `yaml:"per_trial"`
	// Budget is bsrr's per-state budget (default 5).
	Budget int `yaml:"budget"`
	// Key is the injection key of bsrr and new-state-only: "state"
	// (default), "state+site" or "state+site+stack".
	Key string `yaml:"key"`
	// Memory is "on" (the default) or "off": with it on, a campaign
	// starts from what the earlier campaigns of the same target and
	// release line in the store learned about each fault (tried, quiet,
	// with a symptom), and random (alone and as the portfolio's arm) and
	// spread prefer the faults they tried least without a symptom.
	// gofault report --memory shows it; gofault forget starts it afresh.
	Memory string `yaml:"memory"`
}

// Trials bounds a campaign.
type Trials struct {
	// Count is the number of trials (default 100).
	Count int `yaml:"count"`
	// Parallel is the number of clusters run at once: a number, or "auto"
	// (the default): as many as the machine's cores and free memory allow
	// for the cluster's size (docs/performance.md).
	Parallel Parallel `yaml:"parallel"`
	// Timeout bounds one whole trial (default 2m).
	Timeout time.Duration `yaml:"timeout"`
	// StopAfterErrors stops a campaign after this many trials in a row
	// could not run (the cluster did not start; default 3).
	StopAfterErrors int `yaml:"stop_after_errors"`
}

// Store says where records go.
type Store struct {
	// DB is the SQLite database file; default "<workdir>/gofault.db".
	DB string `yaml:"db"`
	// KeepFailed is how many failed trials keep their members' data dirs
	// (the newest; default 20). Every trial keeps its logs and records; a
	// passing trial's data dirs are deleted as soon as it is judged.
	KeepFailed int `yaml:"keep_failed"`
}
