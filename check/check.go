// Package check holds gofault's checkers: each judges one recorded trial
// (record.Trial) and returns a record.Verdict with a short stable Symptom,
// used to cluster findings across trials, and evidence lines.
//
// The checkers are built to avoid false positives, the main failure of
// published fault-injection tools: what a fault is expected to cause (the
// clients of a node gofault killed fail, a delayed node is slow, a node logs
// the error it was given) is excused, and a result the checker cannot
// establish (a linearizability search that timed out, a log checker with no
// baseline) is Unknown, never Failed.
package check

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/gofault/gofault/record"
)

// Defaults of Input's tunables.
const (
	DefaultProgress               = 3 * time.Second
	DefaultLinearizabilityTimeout = 10 * time.Second
	DefaultRecoveryBound          = 5 * time.Second
)

// Input is what a checker judges.
type Input struct {
	Trial *record.Trial
	// Baseline holds the log templates of fault-free trials; the log
	// checker returns Unknown without one.
	Baseline *record.LogBaseline
	// Progress is how long a client may go without progress before the
	// hang, gray and slow checkers count it as stalled (config
	// checkers.progress); DefaultProgress when zero.
	Progress time.Duration
	// LinearizabilityTimeout bounds the porcupine search (config
	// checkers.linearizability_timeout); DefaultLinearizabilityTimeout when
	// zero.
	LinearizabilityTimeout time.Duration
	// RecoveryBound is how long after the last fault ended every live
	// member must serve the workload again (config
	// checkers.recovery_bound); DefaultRecoveryBound when zero.
	RecoveryBound time.Duration
	// WorkloadTimedOut is set by the runner when it had to kill the
	// workload at its timeout.
	WorkloadTimedOut bool
	// Visualize makes the linearizability checker write porcupine's HTML
	// visualization of a failing key into Trial.Dir.
	Visualize bool
	// LogIgnore are extra regular expressions; log lines matching one are
	// never reported as new.
	LogIgnore []string
	// LogDowngraded are regular expressions of the marks a target's own
	// program appends to the errors it logs below warning because it knows
	// their cause (raft's node program during an admin call): the log
	// checker lists the lines carrying one as dismissed (RuleDowngraded),
	// so that the report shows what the program hid.
	LogDowngraded []string
	// NetSites holds the stable IDs of the catalog's network sites
	// (catalog.Site.IO "net"): any error injected at one breaks that
	// connection, whatever its value (an EOF on a route's read as much
	// as an EPIPE), which the log checker needs to know.
	NetSites map[string]bool
	// SlowWaits are the profile's statements that the target's design
	// waits for a slowed member (config checkers.waits_for_slow): a fault
	// one covers counts in every client's allowance, and the checkers
	// show what it excused.
	SlowWaits []SlowWait
}

func (in *Input) progress() time.Duration {
	if in.Progress > 0 {
		return in.Progress
	}
	return DefaultProgress
}

// Checker judges a trial.
type Checker interface {
	// Name is the checker's registry name, e.g. "crash".
	Name() string
	// Check judges in.Trial. It must not modify the trial.
	Check(ctx context.Context, in *Input) record.Verdict
}

var registry = map[string]Checker{}

// Register adds c to the registry under c.Name(), replacing any checker of
// that name.
func Register(c Checker) { registry[c.Name()] = c }

// Lookup returns the registered checker called name.
func Lookup(name string) (Checker, bool) {
	c, ok := registry[name]
	return c, ok
}

// Names returns the names of the registered checkers, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Built-in checker names.
const (
	NameCrash           = "crash"
	NameHang            = "hang"
	NameGray            = "gray"
	NameLog             = "log"
	NameLinearizability = "linearizability"
	NameViolations      = "violations"
	NameReplicas        = "replicas"
	NameRecovery        = "recovery"
	NameSlow            = "slow"
)

func init() {
	Register(Crash{})
	Register(Hang{})
	Register(Gray{})
	Register(Log{})
	Register(Linearizability{})
	Register(Violations{})
	Register(Replicas{})
	Register(Recovery{})
	Register(Slow{})
}

// Run runs the named checkers (all registered ones when names is empty) on
// in, in the order given, and returns their verdicts. An unknown name is an
// error and no checker runs.
func Run(ctx context.Context, in *Input, names []string) ([]record.Verdict, error) {
	if in == nil || in.Trial == nil {
		return nil, fmt.Errorf("check: no trial")
	}
	if len(names) == 0 {
		names = Names()
	}
	cs := make([]Checker, 0, len(names))
	for _, n := range names {
		c, ok := Lookup(n)
		if !ok {
			return nil, fmt.Errorf("check: unknown checker %q (known: %v)", n, Names())
		}
		cs = append(cs, c)
	}
	out := make([]record.Verdict, 0, len(cs))
	for _, c := range cs {
		v := c.Check(ctx, in)
		v.Checker = c.Name()
		out = append(out, v)
	}
	return out, nil
}

// Failed reports whether any verdict failed.
func Failed(vs []record.Verdict) bool {
	for _, v := range vs {
		if v.Failed {
			return true
		}
	}
	return false
}

// pass is the verdict of a checker that found nothing.
func pass(name string) record.Verdict { return record.Verdict{Checker: name} }

// maxEvidence bounds the evidence lines of a verdict.
const maxEvidence = 20

func capEvidence(ev []string) []string {
	if len(ev) > maxEvidence {
		more := len(ev) - maxEvidence
		ev = append(ev[:maxEvidence:maxEvidence], fmt.Sprintf("… and %d more", more))
	}
	return ev
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }
