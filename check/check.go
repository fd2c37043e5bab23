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
	"io/fs"
	"path/filepath"
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

// Input is what a checker judges: the recorded trial and the nodes' logs,
// as values and a file system. A checker reads nothing else and writes
// nothing: what it draws of its evidence comes back in Judgement.Visuals.
type Input struct {
	Trial *record.Trial
	// Logs holds the nodes' logs, each under the base name of its path
	// (record.Node.Log: "n1.log"): the runner passes os.DirFS of the
	// trial's directory, a test an fstest.MapFS. A node whose Log is ""
	// has no log; with Logs nil, a node's log cannot be read (the crash
	// checker quotes nothing, the log checker says it could not read it).
	Logs fs.FS
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
	// LogFormat is the nodes' log format (config checkers.log_format, one
	// of LogFormats); "" detects each line's (LogAuto).
	LogFormat string
	// WorkloadTimedOut is set by the runner when it had to kill the
	// workload at its timeout.
	WorkloadTimedOut bool
	// Visualize makes the linearizability checker draw porcupine's HTML
	// visualization of a failing key (Judgement.Visuals) for the caller
	// to write into Trial.Dir, where its evidence points; nothing is drawn
	// for a trial without a Dir.
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

// A drawer is a checker that also draws its evidence when Input.Visualize
// is set: Run calls check instead of Check.
type drawer interface {
	check(ctx context.Context, in *Input) (record.Verdict, []Visual)
}

// Visual is a drawing of a checker's evidence (porcupine's HTML of a key's
// history that cannot be linearized), for the caller of Run to write as
// the file Name of the trial's directory: the verdict's evidence names
// that file.
type Visual struct {
	// Checker is the name of the checker that drew it.
	Checker string
	// Name is the file's name in Trial.Dir, e.g. "linearizability-k0.html".
	Name string
	// Data is the file's content.
	Data []byte
}

// visualLine is the evidence line that names the file of a drawing in dir.
func visualLine(dir string, vis Visual) string {
	return "visualization: " + filepath.Join(dir, vis.Name)
}

// Unwritten tells the verdicts that vis, drawn of the evidence of one of
// them, could not be written into the trial's directory dir: the evidence
// line that names its file says why instead.
func Unwritten(verdicts []record.Verdict, dir string, vis Visual, err error) {
	for i, v := range verdicts {
		if v.Checker != vis.Checker {
			continue
		}
		for k, line := range v.Evidence {
			if line == visualLine(dir, vis) {
				verdicts[i].Evidence[k] = "visualization failed: " + err.Error()
			}
		}
	}
}

// Judgement is what Run makes of a trial: the checkers' verdicts, in the
// order they ran, and the drawings of their evidence.
type Judgement struct {
	Verdicts []record.Verdict
	Visuals  []Visual
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
// in, in the order given, and returns their verdicts and drawings. An
// unknown name is an error and no checker runs.
func Run(ctx context.Context, in *Input, names []string) (Judgement, error) {
	if in == nil || in.Trial == nil {
		return Judgement{}, fmt.Errorf("check: no trial")
	}
	if len(names) == 0 {
		names = Names()
	}
	cs := make([]Checker, 0, len(names))
	for _, n := range names {
		c, ok := Lookup(n)
		if !ok {
			return Judgement{}, fmt.Errorf("check: unknown checker %q (known: %v)", n, Names())
		}
		cs = append(cs, c)
	}
	j := Judgement{Verdicts: make([]record.Verdict, 0, len(cs))}
	for _, c := range cs {
		var v record.Verdict
		if d, ok := c.(drawer); ok {
			var vis []Visual
			v, vis = d.check(ctx, in)
			j.Visuals = append(j.Visuals, vis...)
		} else {
			v = c.Check(ctx, in)
		}
		v.Checker = c.Name()
		j.Verdicts = append(j.Verdicts, v)
	}
	return j, nil
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
