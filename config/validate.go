package config

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/template"
)

// MaxNodes is the most nodes a cluster may have: every trial starts them
// all on one machine, and a typo such as 100000 should fail at once, not
// after the build.
const MaxNodes = 64

// Known lists the names defined by other packages, so config need not
// import them: the policy registry, the checker registry and the fault kinds.
// An empty Policies or Checkers list is not checked; an empty FaultKinds
// means FaultKinds.
type Known struct {
	Policies   []string
	Checkers   []string
	FaultKinds []string
}

// FieldError is one invalid setting: the field's path, what is wrong and how
// to fix it.
type FieldError struct {
	Field string // e.g. "cluster.nodes"
	Msg   string // e.g. "must be at least 1 (got 0)"
	Fix   string // e.g. `set e.g. "nodes: 3"`
}

func (e *FieldError) Error() string {
	if e.Fix == "" {
		return e.Field + ": " + e.Msg
	}
	return e.Field + ": " + e.Msg + "; " + e.Fix
}

// isMemberName reports whether name is one of the names a cluster of n
// nodes gives its members: "n1" to "n<n>".
func isMemberName(name string, n int) bool {
	for i := 1; i <= n; i++ {
		if name == fmt.Sprintf("n%d", i) {
			return true
		}
	}
	return false
}

// signals maps the accepted shutdown signal names to signals.
var signals = map[string]syscall.Signal{
	"SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT,
	"SIGHUP": syscall.SIGHUP, "SIGKILL": syscall.SIGKILL, "SIGUSR1": syscall.SIGUSR1,
	"SIGUSR2": syscall.SIGUSR2,
}

// ParseSignal returns the signal named s ("SIGTERM", "TERM", "sigterm", "15").
func ParseSignal(s string) (syscall.Signal, error) {
	n := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(n, "SIG") {
		n = "SIG" + n
	}
	if sig, ok := signals[n]; ok {
		return sig, nil
	}
	for _, sig := range signals {
		if fmt.Sprint(int(sig)) == strings.TrimSpace(s) {
			return sig, nil
		}
	}
	keys := make([]string, 0, len(signals))
	for k := range signals {
		keys = append(keys, k)
	}
	return 0, fmt.Errorf("unknown signal %q (valid: %s)", s, names(keys))
}

// roleField matches target.role's "pkg/path.Type.field", or a role
// method's "pkg/path.Type.Method" or "pkg/path.(*Type).Method".
var roleField = regexp.MustCompile(`^[^\s]*[^\s./][.](?:[A-Za-z_][A-Za-z0-9_]*|\(\*?[A-Za-z_][A-Za-z0-9_]*\))[.][A-Za-z_][A-Za-z0-9_]*$`)

var portName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks a config after Defaults and returns every problem found,
// joined; each is a *FieldError that names the field and says how to fix
// it, e.g. `cluster.nodes: must be at least 1 (got 0); set e.g. "nodes: 3"`.
func (c *Config) Validate(known Known) error {
	var errs []error
	bad := func(field, fix, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix})
	}
	oneOf := func(field, value string, valid []string) {
		if len(valid) > 0 && !slices.Contains(valid, value) {
			bad(field, "valid names: "+names(valid), "unknown name %q", value)
		}
	}

	if c.Name == "" {
		bad("name", `set e.g. "name: etcd"`, "must be set")
	}
	// Target.
	if len(c.Target.Packages) == 0 {
		bad("target.packages", `set e.g. "packages: [./...]" (the packages to analyse and instrument)`, "must list at least one package pattern")
	}
	if c.Target.Version != "" {
		if !strings.HasPrefix(c.Target.Version, "v") {
			bad("target.version", `set e.g. "version: v3.5.16"`, "must be a module version starting with v (got %q)", c.Target.Version)
		}
		if len(c.Target.Versioned) == 0 {
			bad("target.versioned", `set e.g. "versioned: [go.etcd.io/etcd/server/v3]"`, "must list the module paths that target.version %s applies to", c.Target.Version)
		}
	}
	if r := c.Target.Role; r != "" && r != "none" && !roleField.MatchString(r) {
		bad("target.role", `set it to "pkg/path.Type.field" of the struct field holding the node's role, e.g. "role: go.etcd.io/etcd/raft/v3.raft.state", to "pkg/path.(*Type).Method" of a method that returns or compares it, e.g. "role: github.com/x/raft.(*server).IsLeader", or "role: none"`, "must be pkg/path.Type.field, pkg/path.(*Type).Method or none (got %q)", r)
	}
	if err := c.Test.Validate(); err != nil {
		errs = append(errs, err)
	}
	// Cluster.
	if c.Cluster.Nodes < 1 {
		bad("cluster.nodes", `set e.g. "nodes: 3"`, "must be at least 1 (got %d)", c.Cluster.Nodes)
	} else if c.Cluster.Nodes > MaxNodes {
		bad("cluster.nodes", `set e.g. "nodes: 3" (faults need few nodes; every trial starts them all on this machine)`, "must be at most %d (got %d)", MaxNodes, c.Cluster.Nodes)
	}
	seen := map[string]bool{}
	for i, p := range c.Cluster.Ports {
		switch {
		case !portName.MatchString(p):
			bad(fmt.Sprintf("cluster.ports[%d]", i), `use letters, digits and _, e.g. "ports: [client, peer]"`, "port name %q is not an identifier usable as {{.Port.%s}}", p, p)
		case seen[p]:
			bad(fmt.Sprintf("cluster.ports[%d]", i), "remove the duplicate", "port %q is listed twice", p)
		}
		seen[p] = true
	}
	if len(c.Cluster.Command) == 0 {
		bad("cluster.command", `set the node's command line, e.g. command: ["{{.Bin}}", "--data-dir={{.Dir}}", "--port={{.Port.client}}"]`, "must be set")
	}
	for i, s := range c.Cluster.Command {
		c.checkTemplate(&errs, fmt.Sprintf("cluster.command[%d]", i), s)
	}
	for _, k := range sortedKeys(c.Cluster.Env) {
		c.checkTemplate(&errs, "cluster.env."+k, c.Cluster.Env[k])
	}
	if c.Cluster.Ready.TCP != "" && c.Cluster.Ready.HTTP != "" {
		bad("cluster.ready", "keep only one of tcp and http", "sets both tcp and http")
	}
	c.checkTemplate(&errs, "cluster.ready.tcp", c.Cluster.Ready.TCP)
	c.checkTemplate(&errs, "cluster.ready.http", c.Cluster.Ready.HTTP)
	if c.Cluster.Ready.HTTP != "" && !strings.HasPrefix(c.Cluster.Ready.HTTP, "http://") && !strings.HasPrefix(c.Cluster.Ready.HTTP, "https://") {
		bad("cluster.ready.http", `set e.g. "http: http://{{.Host}}:{{.Port.client}}/health"`, "must be an http:// or https:// URL (got %q)", c.Cluster.Ready.HTTP)
	}
	if c.Cluster.Ready.Timeout <= 0 {
		bad("cluster.ready.timeout", `set e.g. "timeout: 30s"`, "must be positive (got %s)", c.Cluster.Ready.Timeout)
	}
	if _, err := ParseSignal(c.Cluster.Shutdown.Signal); err != nil {
		bad("cluster.shutdown.signal", `set e.g. "signal: SIGTERM"`, "%v", err)
	}
	if c.Cluster.Shutdown.Grace <= 0 {
		bad("cluster.shutdown.grace", `set e.g. "grace: 5s"`, "must be positive (got %s)", c.Cluster.Shutdown.Grace)
	}
	if o := c.Cluster.Shutdown.Order; o != ShutdownParallel && o != ShutdownSequential && o != ShutdownLeaderLast {
		bad("cluster.shutdown.order", `set "order: parallel", "order: sequential" or "order: leader-last"`, "unknown order %q", o)
	}
	// Workload.
	switch {
	case c.Workload.Package == "" && len(c.Workload.Command) == 0:
		bad("workload", `set "package: ./workload" (a Go main package using github.com/gofault/gofault/workload) or "command: [./load.sh]"`, "must set package or command")
	case c.Workload.Package != "" && len(c.Workload.Command) > 0:
		bad("workload", "remove one of them", "sets both package and command")
	}
	if c.Workload.MinDuration < 0 || (c.Workload.Timeout > 0 && c.Workload.MinDuration >= c.Workload.Timeout) {
		bad("workload.min_duration", `set e.g. "min_duration: 1s"`, "must be positive and below workload.timeout %s (got %s)", c.Workload.Timeout, c.Workload.MinDuration)
	}
	if c.Workload.Timeout <= 0 {
		bad("workload.timeout", `set e.g. "timeout: 30s"`, "must be positive (got %s)", c.Workload.Timeout)
	}
	// Checkers.
	for i, n := range c.Checkers.Enabled {
		oneOf(fmt.Sprintf("checkers.enabled[%d]", i), n, known.Checkers)
	}
	if c.Checkers.Progress < 0 {
		bad("checkers.progress", `set e.g. "progress: 3s", or "progress: auto" to measure it`, "must be positive (got %s)", c.Checkers.Progress.Duration())
	}
	if c.Checkers.Baseline < -1 {
		bad("checkers.baseline", `set e.g. "baseline: 3", or -1 for no baseline trials`, "must be -1 or more (got %d)", c.Checkers.Baseline)
	}
	if c.Checkers.GenericSites < -1 {
		bad("checkers.generic_sites", `set e.g. "generic_sites: 3", or -1 to report every new log line`, "must be -1 or more (got %d)", c.Checkers.GenericSites)
	}
	if c.Checkers.RerunFaultFree < -1 {
		bad("checkers.rerun_fault_free", `set e.g. "rerun_fault_free: 2", or -1 for no re-runs`, "must be -1 or more (got %d)", c.Checkers.RerunFaultFree)
	}
	if c.Checkers.LogFormat != "" {
		oneOf("checkers.log_format", c.Checkers.LogFormat, LogFormats)
	}
	if c.Checkers.RecoveryBound < 0 {
		bad("checkers.recovery_bound", `set e.g. "recovery_bound: 5s" (a few election timeouts)`, "must be positive (got %s)", c.Checkers.RecoveryBound)
	}
	if c.Checkers.Linearizability <= 0 {
		bad("checkers.linearizability_timeout", `set e.g. "linearizability_timeout: 10s"`, "must be positive (got %s)", c.Checkers.Linearizability)
	}
	for _, f := range []struct {
		field, fix string
		patterns   []string
	}{
		{"checkers.log_ignore", `write a Go regular expression, e.g. 'slow fdatasync', and quote it in YAML`, c.Checkers.LogIgnore},
		{"checkers.log_downgraded", `write a Go regular expression of the mark, e.g. '\(logged at info by the node program\)', and quote it in YAML`, c.Checkers.LogDowngraded},
	} {
		for i, p := range f.patterns {
			if _, err := regexp.Compile(p); err != nil {
				bad(fmt.Sprintf("%s[%d]", f.field, i), f.fix, "is not a valid regular expression: %v", err)
			}
		}
	}
	for i, w := range c.Checkers.WaitsForSlow {
		at := fmt.Sprintf("checkers.waits_for_slow[%d]", i)
		switch {
		case w.Kind == "":
			bad(at+".kind", `set e.g. "kind: delay" (delay, pause, stop, partition, disconnect, oneway, split or leadercut)`, "is missing")
		case !slices.Contains(SlowWaitKinds, w.Kind):
			bad(at+".kind", "use delay, pause, stop, partition, disconnect, oneway, split or leadercut: the faults that slow, pause, stop or cut a member", "unknown kind %q", w.Kind)
		}
		if w.Node != "" && !isMemberName(w.Node, c.Cluster.Nodes) {
			bad(at+".node", fmt.Sprintf(`name a member, n1 to n%d, or leave it out`, c.Cluster.Nodes), "unknown member %q", w.Node)
		}
		if strings.TrimSpace(w.Reason) == "" {
			bad(at+".reason", `say why the design waits for the slowed member, e.g. "reason: writes need every replica's ack"; it is shown with every stall it excuses`, "is missing")
		}
	}
	// Faults.
	kinds := known.FaultKinds
	if len(kinds) == 0 {
		kinds = FaultKinds
	}
	if len(c.Faults.Kinds) == 0 {
		bad("faults.kinds", `set e.g. "kinds: [error, delay, crash]"`, "must list at least one fault kind")
	}
	for i, k := range c.Faults.Kinds {
		oneOf(fmt.Sprintf("faults.kinds[%d]", i), k, kinds)
	}
	for i, s := range c.Faults.Partition.LeaderAt {
		if strings.TrimSpace(s) == "" {
			bad(fmt.Sprintf("faults.partition.leader_at[%d]", i), `write part of a site ID, e.g. "wal.(*WAL).Save", as reports and gofault analyze show them`, "is empty")
		}
	}
	if len(c.Faults.Partition.LeaderAt) > 0 && !slices.Contains(c.Faults.Kinds, "leadercut") {
		bad("faults.partition.leader_at", "add leadercut to faults.kinds, or leave leader_at out", "chooses where a leader cut starts, but faults.kinds does not list leadercut")
	}
	for i, r := range c.Faults.Files {
		oneOf(fmt.Sprintf("faults.files[%d]", i), r, FileRoles)
	}
	for i, n := range c.Faults.Nodes {
		if !isMemberName(n, c.Cluster.Nodes) {
			bad(fmt.Sprintf("faults.nodes[%d]", i), fmt.Sprintf(`name members "n1" to "n%d" (cluster.nodes)`, c.Cluster.Nodes), "%q is no member of the cluster", n)
		}
	}
	for i, h := range c.Faults.Partition.Hold {
		if err := checkHold(h); err != nil {
			bad(fmt.Sprintf("faults.partition.hold[%d]", i), `write "leader", "requests=64", "site=SaveSnap" or "behind=100"`, "%v", err)
		}
	}
	if len(c.Faults.Partition.Hold) > 0 && !slices.ContainsFunc(c.Faults.Kinds, heldKind) {
		bad("faults.partition.hold", "add a cut (partition, leadercut, disconnect, oneway or split) to faults.kinds, or leave hold out", "holds a cut, but faults.kinds lists none")
	}
	if c.Faults.Partition.HoldCap < 0 {
		bad("faults.partition.hold_cap", `set e.g. "hold_cap: 15s"`, "must be positive (got %s)", c.Faults.Partition.HoldCap)
	}
	for i, h := range c.Faults.DelayHold {
		if err := checkHold(h); err != nil {
			bad(fmt.Sprintf("faults.delay_hold[%d]", i), `write "leader", "requests=20", "site=SaveSnap" or "behind=20"`, "%v", err)
		}
	}
	if len(c.Faults.DelayHold) > 0 && !slices.Contains(c.Faults.Kinds, "delay") {
		bad("faults.delay_hold", "add delay to faults.kinds, or leave delay_hold out", "holds a delay, but faults.kinds does not list delay")
	}
	if c.Faults.DelayHoldCap < 0 {
		bad("faults.delay_hold_cap", `set e.g. "delay_hold_cap: 15s"`, "must be positive (got %s)", c.Faults.DelayHoldCap)
	}
	if c.Faults.Partition.Duration < 0 {
		bad("faults.partition.duration", `set e.g. "duration: 3s"`, "must be positive (got %s)", c.Faults.Partition.Duration)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Faults.Timers)) {
		if c.Faults.Timers[name] <= 0 {
			bad("faults.timers."+name, `set the target's timer, e.g. "election: 1s"`, "must be positive (got %s)", c.Faults.Timers[name])
		}
	}
	if c.Faults.MaxPerTrial < 0 {
		bad("faults.max_per_trial", `set e.g. "max_per_trial: 3"`, "must not be negative (got %d)", c.Faults.MaxPerTrial)
	}
	if c.Faults.Delay <= 0 {
		bad("faults.delay", `set e.g. "delay: 3s"`, "must be positive (got %s)", c.Faults.Delay)
	}
	// Policy.
	oneOf("policy.name", c.Policy.Name, known.Policies)
	if c.Policy.PerTrial < 1 {
		bad("policy.per_trial", `set e.g. "per_trial: 1"`, "must be at least 1 (got %d)", c.Policy.PerTrial)
	}
	if c.Policy.Budget < 1 {
		bad("policy.budget", `set e.g. "budget: 5"`, "must be at least 1 (got %d)", c.Policy.Budget)
	}
	switch c.Policy.Key {
	case "", "state", "state+site", "state+site+stack":
	default:
		bad("policy.key", `set "key: state", "key: state+site" or "key: state+site+stack"`, "unknown injection key %q", c.Policy.Key)
	}
	switch c.Policy.Memory {
	case "", MemoryOn, MemoryOff:
	default:
		bad("policy.memory", `set "memory: on" (the default) or "memory: off"`, "unknown value %q", c.Policy.Memory)
	}
	// Trials.
	if c.Trials.Count < 1 {
		bad("trials.count", `set e.g. "count: 100"`, "must be at least 1 (got %d)", c.Trials.Count)
	}
	if c.Trials.Parallel < 0 {
		bad("trials.parallel", `set e.g. "parallel: 2", or "parallel: auto"`, "must be at least 1 or auto (got %d)", int(c.Trials.Parallel))
	}
	if c.Trials.StopAfterErrors < 1 {
		bad("trials.stop_after_errors", `set e.g. "stop_after_errors: 3"`, "must be at least 1 (got %d)", c.Trials.StopAfterErrors)
	}
	if c.Trials.Timeout <= 0 {
		bad("trials.timeout", `set e.g. "timeout: 2m"`, "must be positive (got %s)", c.Trials.Timeout)
	} else if c.Workload.Timeout > 0 && c.Trials.Timeout <= c.Workload.Timeout {
		bad("trials.timeout", fmt.Sprintf("set it above workload.timeout plus start-up, e.g. %q", "timeout: "+(c.Workload.Timeout+c.Cluster.Ready.Timeout+c.Cluster.Shutdown.Grace).String()),
			"must be longer than workload.timeout %s (got %s)", c.Workload.Timeout, c.Trials.Timeout)
	}
	if c.WorkDir == "" {
		bad("workdir", `set e.g. "workdir: .gofault"`, "must be set")
	}
	if c.Store.DB == "" {
		bad("store.db", `set e.g. "db: .gofault/gofault.db"`, "must be set")
	}
	if c.Store.KeepFailed < 0 {
		bad("store.keep_failed", `set e.g. "keep_failed: 20" (failed trials that keep their data dirs)`, "must be at least 1 (got %d)", c.Store.KeepFailed)
	}
	return errors.Join(errs...)
}

// sampleVars mirrors cluster.NodeVars so templates can be checked without
// importing the runner; missing keys (e.g. an undeclared port) are errors.
func (c *Config) sampleVars() map[string]any {
	ports := map[string]int{}
	for i, p := range c.Cluster.Ports {
		ports[p] = 20000 + i
	}
	node := func(i int) map[string]any {
		return map[string]any{
			"Index": i, "Name": fmt.Sprintf("n%d", i), "Bin": "/bin/node", "Dir": "/tmp/n",
			"Port": ports, "Host": "127.0.0.1", "Trial": "t1", "TrialDir": "/tmp",
		}
	}
	// As many nodes as the cluster has (at least two: a template may
	// name its peers), so a template may index .Nodes up to them.
	nodes := []map[string]any{}
	for i := 1; i <= max(c.Cluster.Nodes, 2); i++ {
		nodes = append(nodes, node(i))
	}
	v := node(1)
	v["Nodes"] = nodes
	return v
}

func (c *Config) checkTemplate(errs *[]error, field, text string) {
	if text == "" || !strings.Contains(text, "{{") {
		return
	}
	t, err := template.New(field).Option("missingkey=error").Parse(text)
	if err == nil {
		err = t.Execute(new(strings.Builder), c.sampleVars())
	}
	if err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "template:") {
			msg = msg[i+2:]
		}
		*errs = append(*errs, &FieldError{
			Field: field,
			Msg:   fmt.Sprintf("bad template %q: %s", text, msg),
			Fix:   "use the node variables .Index .Name .Bin .Dir .Host .Trial .TrialDir .Port.<name> (ports: " + names(c.Cluster.Ports) + ") and .Nodes",
		})
	}
}

// heldKind reports whether faults.partition.hold can hold a fault of kind
// k: every cut (a partition, leader cut, disconnect, one-way cut or
// split).
func heldKind(k string) bool {
	switch k {
	case "partition", "leadercut", "disconnect", "oneway", "split":
		return true
	}
	return false
}

// checkHold checks a hold condition of a cut or a delay
// (faults.partition.hold, faults.delay_hold):
// "leader", "requests=K" with K at least 1, "site=S" with S not empty or
// "behind=N" with N at least 1 (whether S names a site of the catalog,
// and whether the catalog observes a commit index that N entries can be
// counted by, is checked where the catalog is known, at the campaign's
// start).
func checkHold(s string) error {
	if s == "leader" {
		return nil
	}
	if sub, ok := strings.CutPrefix(s, "site="); ok {
		if strings.TrimSpace(sub) == "" {
			return fmt.Errorf("hold condition %q names no site (want site=S, S a part of a site's stable ID, e.g. site=SaveSnap)", s)
		}
		return nil
	}
	if k, ok := strings.CutPrefix(s, "requests="); ok {
		if n, err := strconv.Atoi(k); err == nil && n >= 1 {
			return nil
		}
	}
	if k, ok := strings.CutPrefix(s, "behind="); ok {
		if n, err := strconv.ParseInt(k, 10, 64); err != nil || n < 1 {
			return fmt.Errorf("hold condition %q needs a whole number of entries, at least 1 (want behind=N, e.g. behind=100)", s)
		}
		return nil
	}
	return fmt.Errorf("unknown hold condition %q (want leader, requests=K with K at least 1, site=S, or behind=N with N at least 1)", s)
}
