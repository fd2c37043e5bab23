package config

import (
	"cmp"
	"path/filepath"
	"slices"
	"time"
)

// Default values filled in by Defaults.
const (
	DefaultNodes           = 3
	DefaultReadyTimeout    = 30 * time.Second
	DefaultSignal          = "SIGTERM"
	DefaultGrace           = 5 * time.Second
	DefaultShutdownOrder   = ShutdownParallel
	DefaultWorkloadTimeout = 30 * time.Second
	DefaultMinDuration     = time.Second
	DefaultTrialTimeout    = 2 * time.Minute
	DefaultBaseline        = 3
	DefaultLinearizability = 10 * time.Second
	DefaultRecoveryBound   = 5 * time.Second
	DefaultDelay           = 3 * time.Second
	DefaultPolicy          = "random"
	DefaultPerTrial        = 1
	DefaultBudget          = 5
	DefaultTrials          = 100
	DefaultWorkDir         = ".gofault"
	DefaultDBName          = "gofault.db"
	DefaultKeepFailed      = 20
	DefaultGenericSites    = 3
	DefaultStopAfterErrors = 3
	DefaultRerunFaultFree  = 2
)

// Settings of policy.memory.
const (
	MemoryOn  = "on"
	MemoryOff = "off"
)

// Shutdown orders (cluster.shutdown.order).
const (
	ShutdownParallel   = "parallel"
	ShutdownSequential = "sequential"
	ShutdownLeaderLast = "leader-last"
)

// DefaultFaultKinds are the fault kinds a campaign injects unless
// faults.kinds says otherwise, and the kinds Validate accepts when
// Known.FaultKinds is empty.
var DefaultFaultKinds = []string{"error", "delay", "crash", "crash-after"}

// FaultKinds are all the fault kinds faults.kinds may name: the defaults
// and those a campaign opts into: partition, disconnect (one pair of
// members cut apart), oneway (one member cannot reach another, which
// still reaches it), split (a minority side cut from the rest), leadercut
// (the leader partitioned right after one of its calls), powerloss (a
// crash that also loses what the node did not sync), reboot (a clean
// restart), corrupt (a file read returns its bytes with one bit or one
// sector changed) and torn (a file write keeps only a prefix cut at a
// sector boundary, then the node crashes), crash-after (a crash right
// after a disk call returned: its bytes written, its sync done; a default),
// powerloss-after (a power loss right after it), pause (the whole process
// stopped for a while, then let go on) and stop (killed, and started again
// only a while later; their lengths come from faults.timers) and rot (a
// file write reaches the disk whole but changed — corruption at rest —,
// then the node crashes and its restart reads it back).
var FaultKinds = []string{"error", "delay", "crash", "partition", "disconnect", "oneway", "split", "leadercut", "powerloss", "reboot", "corrupt", "torn", "crash-after", "powerloss-after", "pause", "stop", "rot"}

// LogFormats are the values of checkers.log_format (check.LogFormats).
var LogFormats = []string{"auto", "json", "klog", "zap-console", "logfmt", "stdlog"}

// FileRoles are the roles of the files faults.files may name, as the
// analysis classifies a disk fault site's file (catalog.FileLog, ...).
var FileRoles = []string{"log", "snapshot", "metadata", "data"}

// DefaultHoldCap bounds a cut or delay held until a condition unless
// faults.partition.hold_cap or faults.delay_hold_cap says otherwise.
const DefaultHoldCap = 15 * time.Second

// DefaultPartition is how long a partition lasts unless
// faults.partition.duration says otherwise.
const DefaultPartition = 3 * time.Second

// DefaultCheckers are the checkers enabled unless checkers.enabled says
// otherwise. The check package may replace this list from an init function.
var DefaultCheckers = []string{"crash", "hang", "gray", "log", "linearizability", "violations", "replicas", "recovery", "slow"}

// Defaults fills every unset field with its default. It is idempotent.
// Zero values that are valid settings (policy.seed 0, checkers.baseline 0
// once set) cannot be told from unset ones; Defaults treats them as unset
// only where zero is never useful.
func (c *Config) Defaults() {
	if c.Name == "" && c.Dir != "" {
		c.Name = filepath.Base(c.Dir)
	}
	c.Target.Module = cmp.Or(c.Target.Module, ".")
	c.Target.Main = cmp.Or(c.Target.Main, ".")
	c.Cluster.Nodes = cmp.Or(c.Cluster.Nodes, DefaultNodes)
	c.Cluster.Ready.Timeout = cmp.Or(c.Cluster.Ready.Timeout, DefaultReadyTimeout)
	c.Cluster.Shutdown.Signal = cmp.Or(c.Cluster.Shutdown.Signal, DefaultSignal)
	c.Cluster.Shutdown.Grace = cmp.Or(c.Cluster.Shutdown.Grace, DefaultGrace)
	c.Cluster.Shutdown.Order = cmp.Or(c.Cluster.Shutdown.Order, DefaultShutdownOrder)
	c.Workload.Timeout = cmp.Or(c.Workload.Timeout, DefaultWorkloadTimeout)
	c.Workload.MinDuration = cmp.Or(c.Workload.MinDuration, DefaultMinDuration)
	if len(c.Checkers.Enabled) == 0 {
		c.Checkers.Enabled = slices.Clone(DefaultCheckers)
	}
	c.Checkers.Baseline = cmp.Or(c.Checkers.Baseline, DefaultBaseline)
	c.Checkers.Linearizability = cmp.Or(c.Checkers.Linearizability, DefaultLinearizability)
	c.Checkers.GenericSites = cmp.Or(c.Checkers.GenericSites, DefaultGenericSites)
	c.Checkers.RerunFaultFree = cmp.Or(c.Checkers.RerunFaultFree, DefaultRerunFaultFree)
	c.Checkers.RecoveryBound = cmp.Or(c.Checkers.RecoveryBound, DefaultRecoveryBound)
	if len(c.Faults.Kinds) == 0 {
		c.Faults.Kinds = slices.Clone(DefaultFaultKinds)
	}
	c.Faults.Delay = cmp.Or(c.Faults.Delay, DefaultDelay)
	c.Faults.Partition.Duration = cmp.Or(c.Faults.Partition.Duration, DefaultPartition)
	c.Faults.Partition.HoldCap = cmp.Or(c.Faults.Partition.HoldCap, DefaultHoldCap)
	c.Faults.DelayHoldCap = cmp.Or(c.Faults.DelayHoldCap, DefaultHoldCap)
	c.Policy.Name = cmp.Or(c.Policy.Name, DefaultPolicy)
	c.Policy.PerTrial = cmp.Or(c.Policy.PerTrial, DefaultPerTrial)
	c.Policy.Budget = cmp.Or(c.Policy.Budget, DefaultBudget)
	c.Policy.Memory = cmp.Or(c.Policy.Memory, MemoryOn)
	c.Trials.Count = cmp.Or(c.Trials.Count, DefaultTrials)
	c.Trials.Timeout = cmp.Or(c.Trials.Timeout, DefaultTrialTimeout)
	c.Trials.StopAfterErrors = cmp.Or(c.Trials.StopAfterErrors, DefaultStopAfterErrors)
	c.WorkDir = cmp.Or(c.WorkDir, DefaultWorkDir)
	c.Store.DB = cmp.Or(c.Store.DB, filepath.Join(c.WorkDir, DefaultDBName))
	c.Store.KeepFailed = cmp.Or(c.Store.KeepFailed, DefaultKeepFailed)
}
