package config

import (
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

// Shutdown orders (cluster.shutdown.order).
const (
	ShutdownParallel   = "parallel"
	ShutdownSequential = "sequential"
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
// after a disk call returned: its bytes written, its sync done; a default)
// and powerloss-after (a power loss right after it).
var FaultKinds = []string{"error", "delay", "crash", "partition", "disconnect", "oneway", "split", "leadercut", "powerloss", "reboot", "corrupt", "torn", "crash-after", "powerloss-after"}

// FileRoles are the roles of the files faults.files may name, as the
// analysis classifies a disk fault site's file (catalog.FileLog, ...).
var FileRoles = []string{"log", "snapshot", "metadata", "data"}

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
	if c.Target.Module == "" {
		c.Target.Module = "."
	}
	if c.Target.Main == "" {
		c.Target.Main = "."
	}
	if c.Cluster.Nodes == 0 {
		c.Cluster.Nodes = DefaultNodes
	}
	if c.Cluster.Ready.Timeout == 0 {
		c.Cluster.Ready.Timeout = DefaultReadyTimeout
	}
	if c.Cluster.Shutdown.Signal == "" {
		c.Cluster.Shutdown.Signal = DefaultSignal
	}
	if c.Cluster.Shutdown.Grace == 0 {
		c.Cluster.Shutdown.Grace = DefaultGrace
	}
	if c.Cluster.Shutdown.Order == "" {
		c.Cluster.Shutdown.Order = DefaultShutdownOrder
	}
	if c.Workload.Timeout == 0 {
		c.Workload.Timeout = DefaultWorkloadTimeout
	}
	if c.Workload.MinDuration == 0 {
		c.Workload.MinDuration = DefaultMinDuration
	}
	if len(c.Checkers.Enabled) == 0 {
		c.Checkers.Enabled = slices.Clone(DefaultCheckers)
	}
	if c.Checkers.Baseline == 0 {
		c.Checkers.Baseline = DefaultBaseline
	}
	if c.Checkers.Linearizability == 0 {
		c.Checkers.Linearizability = DefaultLinearizability
	}
	if c.Checkers.GenericSites == 0 {
		c.Checkers.GenericSites = DefaultGenericSites
	}
	if c.Checkers.RerunFaultFree == 0 {
		c.Checkers.RerunFaultFree = DefaultRerunFaultFree
	}
	if c.Checkers.RecoveryBound == 0 {
		c.Checkers.RecoveryBound = DefaultRecoveryBound
	}
	if len(c.Faults.Kinds) == 0 {
		c.Faults.Kinds = slices.Clone(DefaultFaultKinds)
	}
	if c.Faults.Delay == 0 {
		c.Faults.Delay = DefaultDelay
	}
	if c.Faults.Partition.Duration == 0 {
		c.Faults.Partition.Duration = DefaultPartition
	}
	if c.Policy.Name == "" {
		c.Policy.Name = DefaultPolicy
	}
	if c.Policy.PerTrial == 0 {
		c.Policy.PerTrial = DefaultPerTrial
	}
	if c.Policy.Budget == 0 {
		c.Policy.Budget = DefaultBudget
	}
	if c.Trials.Count == 0 {
		c.Trials.Count = DefaultTrials
	}
	if c.Trials.Timeout == 0 {
		c.Trials.Timeout = DefaultTrialTimeout
	}
	if c.Trials.StopAfterErrors == 0 {
		c.Trials.StopAfterErrors = DefaultStopAfterErrors
	}
	if c.WorkDir == "" {
		c.WorkDir = DefaultWorkDir
	}
	if c.Store.DB == "" {
		c.Store.DB = filepath.Join(c.WorkDir, DefaultDBName)
	}
	if c.Store.KeepFailed == 0 {
		c.Store.KeepFailed = DefaultKeepFailed
	}
}
