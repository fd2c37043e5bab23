package wire

import (
	"net"
	"strconv"
	"strings"
)

// The environment variables through which gofault tells the processes it
// starts where to report and what they are; defined here once, for the
// agent, the cluster runner and workloads alike.
const (
	// EnvController is the controller's address, "unix:/path" or
	// "tcp:host:port". Empty or absent: the agent stays off (the program
	// runs as built without gofault) and a workload writes its events to
	// stdout as JSON lines.
	EnvController = "GOFAULT_CONTROLLER"
	// EnvNode is a node's name ("n1"), set for every node.
	EnvNode = "GOFAULT_NODE"
	// EnvTrial is the trial ID, set for nodes and workloads and echoed in
	// their Hello.
	EnvTrial = "GOFAULT_TRIAL"
	// EnvNodes is the JSON array of the cluster's nodes, for workloads.
	EnvNodes = "GOFAULT_NODES"
	// EnvDeadline is the RFC 3339 (nano) time by which a workload must
	// have finished.
	EnvDeadline = "GOFAULT_DEADLINE"
	// EnvSeed is a decimal int64 that makes a workload's choices
	// deterministic.
	EnvSeed = "GOFAULT_SEED"
	// EnvLoadEnd is the path of a file the runner creates when the
	// workload may end its load early (workload.adaptive_end): the trial's
	// fault struck and the cluster served on for the recovery bound and a
	// progress bound past it, or no fault can strike. Absent: the load runs
	// its full length.
	EnvLoadEnd = "GOFAULT_LOAD_END"
	// EnvLoadMin is the shortest load (a Go duration, e.g. "2s") a
	// workload runs before it may end early through EnvLoadEnd.
	EnvLoadMin = "GOFAULT_LOAD_MIN"
	// EnvLoadFull is, when set, the longest load the runner asks for (a
	// Go duration): a workload loads for the longer of this and its own
	// length, and still ends early through EnvLoadEnd. The calibration
	// trial sets it, so that the load outlasts the failover it measures
	// whatever the workload's own length; it is set only with EnvLoadEnd.
	EnvLoadFull = "GOFAULT_LOAD_FULL"
	// EnvCluster is a random token, one per cluster gofault starts, set
	// for its nodes and so inherited by whatever they start: the cluster
	// runner finds and kills by it the processes a node left behind in a
	// session of their own.
	EnvCluster = "GOFAULT_CLUSTER"
	// EnvPowerLoss is a node's data dir, set when the campaign may inject
	// power-loss crashes: the agent keeps a durable image of the dir
	// (agent/durable) that the runner rolls the dir back to before a
	// restart.
	EnvPowerLoss = "GOFAULT_POWERLOSS"
	// EnvSyncSites lists, comma-separated, the indices of the fault sites
	// that sync a file or directory (fsync, fdatasync); the agent records
	// the durable image just before each runs.
	EnvSyncSites = "GOFAULT_SYNC_SITES"
	// EnvStrikes, when "1", makes the agent write StrikeLine to its
	// process's stdout at every fault it carries out (an error, a delay, a
	// held delay): gofault test sets it for a test process that runs its
	// test twice (-test.count=2), and tells from the line's place among the
	// testing package's own lines which run a fault struck.
	EnvStrikes = "GOFAULT_STRIKES"
	// EnvLeftBase holds, for a fault trial of gofault test, the keys
	// (LeftKey) of the goroutines the test's fault-free runs left running,
	// joined by LeftBaseSep: agent.Ran waits longer for a goroutine of
	// another key to end before it reports it.
	EnvLeftBase = "GOFAULT_LEFT_BASE"
)

// LeftBaseSep separates the keys of EnvLeftBase (no function name holds
// it).
const LeftBaseSep = "\n"

// Node is one node of the cluster under test as a workload sees it: an
// element of the EnvNodes array, which the cluster runner writes and the
// workload SDK reads, e.g.
//
//	{"name":"n1","host":"127.0.0.1","ports":{"client":2379,"peer":2380}}
type Node struct {
	Name string `json:"name"`
	// Host is the node's host; empty means 127.0.0.1.
	Host string `json:"host,omitempty"`
	// Ports maps the port names of the cluster config to port numbers.
	Ports map[string]int `json:"ports"`
}

// Addr returns host:port of the named port, or "" if the node has no such
// port.
func (n Node) Addr(port string) string {
	p, ok := n.Ports[port]
	if !ok {
		return ""
	}
	h := n.Host
	if h == "" {
		h = "127.0.0.1"
	}
	return net.JoinHostPort(h, strconv.Itoa(p))
}

// IgnoredPrefix starts the line an instrumented test binary writes to its
// stdout when a test discarded the error an injected fault returned to one
// of its calls (agent.Ignored): the prefix, the call's "file:line", ": "
// and the error. gofault test reads it back (a test that fails after
// ignoring the injected error made an assumption, not a finding). It
// starts no line the testing package writes.
const IgnoredPrefix = "gofault: a test ignored the injected error at "

// StrikeLine is the line (newline included) the agent writes to stdout at
// every fault it carries out when EnvStrikes is set. It starts no line the
// testing package writes.
const StrikeLine = "gofault: a fault struck here\n"

// LeftPrefix starts a line an instrumented test binary writes to its
// stdout, after its tests ran and passed (agent.Ran), for each kind of
// goroutine still running that the code under test started, and each file
// still open: the prefix, the key (LeftKey, LeftFileKey), a tab and what
// it was doing ("[chan send] pkg.f at f.go:12; created by pkg.g at
// g.go:30", "[open file] /tmp/x/0.wal"). gofault test compares the keys
// with those its fault-free runs left: a goroutine or file a fault left
// behind is a leak. It starts no line the testing package writes.
const LeftPrefix = "gofault: left running after the tests: "

// LeftDonePrefix starts the line agent.Ran writes once it checked what
// was left running and open after the tests, with how many goroutines
// and files that were ("gofault: checked what the tests left running and
// open: 0 left"): a run with this line and no LeftPrefix line left none.
const LeftDonePrefix = "gofault: checked what the tests left running and open: "

// LeftKey is the key of a goroutine left running: the function it was in
// (its first frame outside the runtime) and the function that started it,
// with no file, line or goroutine number, so that the same goroutine left
// in two runs has the same key.
func LeftKey(top, creator string) string { return top + leftKeySep + creator }

// leftKeySep separates a goroutine's function from its creator in its key.
const leftKeySep = " <- "

// LeftTop is the function a goroutine's key (LeftKey) names it by.
func LeftTop(key string) string {
	top, _, _ := strings.Cut(key, leftKeySep)
	return top
}

// LeftFilePrefix starts the key of a file left open after the tests
// (LeftFileKey).
const LeftFilePrefix = "file "

// LeftFileKey is the key of a file left open after the tests: its path
// with the process's temp dir written $TMPDIR and every run of digits N,
// so that the same file left open in two runs has one key.
func LeftFileKey(path string) string { return LeftFilePrefix + path }
