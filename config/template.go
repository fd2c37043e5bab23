package config

import (
	"bytes"
	"strconv"
	"strings"
	"text/template"
)

// Starter is what a starting gofault.yaml is made of: the target's name and
// what "gofault init" learnt of its module. The zero Starter (but a name)
// gives the generic template.
type Starter struct {
	Name string
	// Module is target.module ("." by default), Main target.main ("."),
	// OtherMains the module's other main packages (listed in a comment).
	Module     string
	Main       string
	OtherMains []string
	// Packages are target.packages (default [./...]).
	Packages []string
	// Library names the consensus or replication library the module
	// uses (e.g. "hashicorp/raft"), "" when none is known; LibraryNotes are
	// comment lines about it above target.packages.
	Library      string
	LibraryNotes []string
	// Ports are cluster.ports (default client, peer), Command the example
	// command line in the comments (YAML list items), ReadyTCP and
	// ReadyHTTP the readiness probes (YAML scalars; the HTTP one is
	// commented out).
	Ports     []string
	Command   []string
	ReadyTCP  string
	ReadyHTTP string
	// Workload is workload.package when a workload skeleton was written
	// ("" leaves the section to fill in).
	Workload string
	// Read are what "gofault init" guessed from the module, each with why
	// and the runner-up, as comment lines at the top of target.
	Read []string
}

// Template returns a commented starting gofault.yaml for a target called
// name, as written by "gofault init" outside a Go module. Every section is
// explained; it parses as is and validates once cluster.command and the
// workload are filled in.
func Template(name string) []byte { return Starter{Name: name}.YAML() }

// YAML renders the starting gofault.yaml. Unset fields take the generic
// template's values.
func (s Starter) YAML() []byte {
	if s.Name == "" {
		s.Name = "mytarget"
	}
	if s.Module == "" {
		s.Module = "."
	}
	if s.Main == "" {
		s.Main = "."
	}
	if len(s.Packages) == 0 {
		s.Packages = []string{"./..."}
	}
	if len(s.Ports) == 0 {
		s.Ports = []string{"client", "peer"}
	}
	if len(s.Command) == 0 {
		s.Command = []string{
			`"{{.Bin}}"`,
			`"--name={{.Name}}"`,
			`"--data-dir={{.Dir}}"`,
			`"--listen=http://{{.Host}}:{{.Port.client}}"`,
			`"--peers={{range $i, $n := .Nodes}}{{if $i}},{{end}}{{$n.Name}}=http://{{$n.Host}}:{{$n.Port.peer}}{{end}}"`,
		}
	}
	if s.ReadyTCP == "" {
		s.ReadyTCP = `"{{.Host}}:{{.Port.` + s.Ports[0] + `}}"`
	}
	if s.ReadyHTTP == "" {
		s.ReadyHTTP = `"http://{{.Host}}:{{.Port.` + s.Ports[0] + `}}/health"`
	}
	var b bytes.Buffer
	if err := starterTemplate.Execute(&b, s); err != nil {
		panic("config: starter template: " + err.Error()) // the template and its data are ours
	}
	return b.Bytes()
}

// starterTemplate's actions use [[ ]], so the node templates ({{.Bin}},
// {{.Port.client}}) in its comments and values stay as they are.
var starterTemplate = template.Must(template.New("gofault.yaml").Delims("[[", "]]").Funcs(template.FuncMap{
	"quote": strconv.Quote,
	"flow":  func(xs []string) string { return "[" + strings.Join(xs, ", ") + "]" },
}).Parse(starterText))

// starterText's first line names the JSON Schema for editors that read
// it (yaml-language-server: VS Code's YAML extension, Neovim, Helix...).
const starterText = "# yaml-language-server: $schema=" + SchemaURL + "\n" + `# gofault.yaml — a gofault campaign: what to build, how to run one cluster,
# how to drive it, which faults to inject and how to judge each trial.
# Reference: docs/config.md. Any field can be overridden on the command line
# with --set path=value, e.g. --set cluster.nodes=5 --set trials.timeout=3m.
# Relative paths are relative to this file's directory.

# name names the target; campaigns in the store are listed under it.
name: [[quote .Name]]

# target: the Go code gofault analyses, instruments and builds. Your source
# tree is never modified: rewritten files go to an overlay in workdir.
target:
[[- if .Read]]
  # gofault init read the module (check each guess):
[[- range .Read]]
  #   [[.]]
[[- end]]
[[- end]]
  # module is the directory of the Go module holding the main package.
  module: [[.Module]]
  # main is the main package of one node, relative to module.
[[- range .OtherMains]]
  # (another main package of the module: [[.]])
[[- end]]
  main: [[.Main]]
  # packages are the package patterns to analyse for fault sites; they may
  # name packages of dependency modules (these are copied, then rewritten).
[[- range .LibraryNotes]]
  # [[.]]
[[- end]]
  packages:
[[- range .Packages]]
    - [[.]]
[[- end]]
  # version, with versioned, pins dependency modules for the build without
  # editing go.mod, e.g. version: v3.5.16, versioned: [go.etcd.io/etcd/server/v3].
  # version: ""
  # versioned: []
  # build_flags are extra go build flags, e.g. [-tags, netgo].
  build_flags: []

# cluster: how one trial's cluster is started. Every trial gets fresh
# loopback ports and a fresh data dir per node. command, env and the ready
# probe are Go text/templates over the node's variables:
#   .Index (1-based)  .Name ("n1")  .Bin (the instrumented binary)
#   .Dir (the node's data dir)  .Host (127.0.0.1)  .Port.<name> (see ports)
#   .Trial (trial ID)  .TrialDir  .Nodes (all nodes, each with the same fields)
cluster:
  # nodes is the number of node processes.
  nodes: 3
  # ports names the ports each node needs; each gets a free port per trial.
  ports: [[flow .Ports]]
  # command is one node's command line. Fill it in[[if .Library]] (the flags are
  # your program's; the peer list is how [[.Library]] services usually take it)[[end]], e.g.:
  # command:
[[- range .Command]]
  #   - [[.]]
[[- end]]
  command: []
  # env adds environment variables to every node (values are templates).
  # The agent's GOFAULT_CONTROLLER, GOFAULT_NODE and GOFAULT_TRIAL are set
  # by gofault.
  env: {}
  # ready tells when a node is up: tcp (host:port accepting connections) or
  # http (a URL answering 2xx), within timeout. Without either, a node is
  # ready as soon as it has started.
  ready:
    tcp: [[.ReadyTCP]]
    # http: [[.ReadyHTTP]]
    timeout: 30s
  # shutdown stops each node at the end of a trial: signal, then SIGKILL of
  # its process group after grace. order: parallel stops all nodes at once;
  # sequential stops one at a time (often faster for consensus systems,
  # whose leader may wait for a leadership transfer while peers stop).
  shutdown:
    signal: SIGTERM
    grace: 5s
    order: parallel

# workload drives the cluster during a trial, one client per node. Set
# either package (a Go main package, relative to target.module, written with
# github.com/gofault/gofault/workload) or command (an external program that
# gets the same environment, see docs/workloads.md).
workload:
[[- if .Workload]]
  # [[.Workload]] is a skeleton that gofault init wrote: one client per node,
  # events as JSON lines; fill in its requests and checks.
  package: [[.Workload]]
[[- else]]
  # package: ./workload
  command: []
[[- end]]
  env: {}
  # timeout bounds the workload; past it the trial counts as hung.
  timeout: 30s

# checkers judge every trial. enabled lists them (default: crash, hang,
# gray, log, linearizability, violations, replicas, recovery, slow).
checkers:
  # enabled: [crash, hang, gray, log, linearizability, violations, replicas, recovery, slow]
  # progress: how long a client may go without progress before "hang";
  # also the bound within which "slow" wants the other members' clients to
  # make progress again while one member is slowed or cut off;
  # auto (the default) measures a failover at the start of the campaign and
  # takes twice its longest client stall, at least 3s.
  progress: auto
  # baseline: fault-free trials the log checker learns from (-1: none).
  baseline: 3
  # linearizability_timeout bounds the linearizability check of a trial.
  linearizability_timeout: 10s
  # recovery_bound: after the last fault ends, every live member must serve
  # the workload again within this (a few election timeouts).
  recovery_bound: 5s
  # log_ignore: regular expressions of log lines the log checker never
  # reports (harmless warnings the baseline trials did not happen to see).
  # log_ignore: ['slow fdatasync']
  # log_downgraded: regular expressions of the marks your node program
  # appends to errors it logs below warning because it knows their cause;
  # the report lists the marked lines (rule downgraded).
  # log_downgraded: ['\(logged at info by the node program\)']
  # generic_sites: a new log line that followed faults at this many
  # unrelated sites is a generic consequence of faults, not a finding
  # (-1: report every new log line).
  generic_sites: 3
  # rerun_fault_free: a trial that fails without any fault is run again
  # this many times to tell flaky from reproducible (-1: never).
  rerun_fault_free: 2
  # waits_for_slow: where the system's documented design waits for a slow
  # or cut member (a quorum that needs it, a static leader), say so here
  # with the reason; the slow, hang and gray checkers then excuse the other
  # members' stalls during such a fault and show each one with the reason.
  # kind: delay, partition, disconnect, oneway, split or leadercut; role and site narrow it.
  # waits_for_slow:
  #   - kind: delay
  #     role: StateLeader
  #     reason: "the leader is static: writes wait for it, by design"

# faults: which kinds may be injected (error, delay, crash), and the delay
# used where no timeout was observed at the site.
faults:
  kinds: [error, delay, crash]
  delay: 3s

# policy chooses the fault of each trial; seed makes it reproducible.
# per_trial is the number of injections per trial; budget is bsrr's
# per-state budget.
policy:
  name: random
  seed: 1
  per_trial: 1
  budget: 5

# trials bounds the campaign: count trials, parallel clusters at once (auto:
# as many as the cores hold, as memory allows), and timeout for one whole
# trial (start, workload, checks, stop).
trials:
  count: 100
  parallel: auto
  timeout: 2m

# workdir holds builds, trial data and logs.
workdir: .gofault

# store: the SQLite database of campaigns, trials and findings
# (default <workdir>/gofault.db). Trials keep their logs; a passing trial's
# data dirs are deleted once it is judged, and only the newest keep_failed
# failed trials keep theirs, so disk use stays bounded.
store:
  db: .gofault/gofault.db
  keep_failed: 20
`
