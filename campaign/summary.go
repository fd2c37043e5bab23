package campaign

// A run's summary: the counts of the campaign's trials.

import (
	"sort"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
)

// Summary is the outcome of a run.
type Summary struct {
	Campaign       int64  `json:"campaign"`
	Policy         string `json:"policy"`
	Trials         int    `json:"trials"`
	BaselineTrials int    `json:"baseline_trials"`
	InjectedTrials int    `json:"injected_trials"`
	Injections     int    `json:"injections"`
	FailedTrials   int    `json:"failed_trials"`
	ErrorTrials    int    `json:"error_trials"`
	// NotJudgedTrials counts the trials (baselines included) that ran but
	// that their workload could not judge (record.StatusNotJudged); they
	// are neither ok nor failed. NotJudgedWarning is set when they are
	// most of the campaign's trials.
	NotJudgedTrials  int    `json:"not_judged_trials"`
	NotJudgedWarning string `json:"not_judged_warning,omitempty"`
	// NotInjected are the kinds of faults.kinds that no fault trial
	// injected, each with the sites that could take it and those reached;
	// NotInjectedWarning says so when there is any (not for policy none).
	NotInjected        []KindReach `json:"not_injected,omitempty"`
	NotInjectedWarning string      `json:"not_injected_warning,omitempty"`
	Findings           int         `json:"findings"`
	// FaultFreeFailures counts the clusters of failures in trials in which
	// no fault was injected; they are never findings of a fault.
	FaultFreeFailures int `json:"fault_free_failures"`
	// GenericConsequences counts the new log lines that followed faults
	// at many unrelated sites (report.Options.GenericSites): informational,
	// never findings.
	GenericConsequences int `json:"generic_consequences"`
	// InjectionRate is InjectedTrials over Trials (baselines excluded): the
	// share of fault trials in which the policy injected anything.
	InjectionRate float64 `json:"injection_rate"`
	// States is the number of abstract states in the catalog;
	// StatesEntered how many of them some trial's node entered.
	States        int     `json:"states"`
	StatesEntered int     `json:"states_entered"`
	Seconds       float64 `json:"seconds"`
	BuildSeconds  float64 `json:"build_seconds"`
	MedianTrial   float64 `json:"median_trial_seconds"`
	// Parallel is the number of clusters run at once, and ParallelHow how
	// it was chosen (trials.parallel auto: the machine's cores and memory).
	Parallel    int    `json:"parallel"`
	ParallelHow string `json:"parallel_how"`
	DB          string `json:"db"`
	// WorkDirBytes is the size of the work dir (builds, trial logs, the
	// data dirs failed trials keep, the store) after the run.
	WorkDirBytes int64 `json:"workdir_bytes"`
	Stopped      bool  `json:"stopped,omitempty"` // interrupted; resume with --resume
	Exhausted    bool  `json:"exhausted,omitempty"`
	// Ended: Options.Until ended the campaign before its trial count.
	Ended bool `json:"ended,omitempty"`
	// ProgressBound is the hang and gray checkers' bound in seconds, and
	// ProgressHow how it was chosen (see calibrate).
	ProgressBound float64 `json:"progress_bound_seconds"`
	ProgressHow   string  `json:"progress_how"`
	// CalibrationFrom is the campaign whose calibration trial measured the
	// bound this run reused (same build and scenario); 0 when it was not
	// reused.
	CalibrationFrom int64 `json:"calibration_from,omitempty"`
	// CoverageBlocks is the number of basic blocks the campaign's trials
	// covered (the union, an earlier run's included); Blocks the number
	// the build counts (0 with faults.coverage off). Each trial's own
	// counts are in its record (gofault report --trials --json).
	CoverageBlocks int `json:"coverage_blocks"`
	Blocks         int `json:"blocks"`
	// Templates is the number of cluster templates formed (cluster.template:
	// one per parallel slot), TemplateSeconds how long forming them took
	// in all.
	Templates       int     `json:"templates,omitempty"`
	TemplateSeconds float64 `json:"template_seconds,omitempty"`
}

// countBaseline counts the baseline trials among trials.
func countBaseline(trials []*record.Trial) int {
	n := 0
	for _, t := range trials {
		if t.Policy == baselinePolicy {
			n++
		}
	}
	return n
}

// summarise fills the counts of a summary from the campaign's trials.
func summarise(sum *Summary, trials []*record.Trial, opts report.Options) {
	var durations []float64
	sum.Trials, sum.BaselineTrials = 0, 0
	type stateKey struct{ task, state uint32 }
	entered := map[stateKey]bool{}
	for _, t := range trials {
		for _, v := range t.States {
			entered[stateKey{v.Task, v.State}] = true
		}
		if t.Policy == baselinePolicy {
			sum.BaselineTrials++
		} else {
			sum.Trials++
		}
		if len(t.Injections) > 0 {
			sum.InjectedTrials++
			sum.Injections += len(t.Injections)
		}
		switch t.Status {
		case record.StatusFailed:
			sum.FailedTrials++
		case record.StatusError:
			sum.ErrorTrials++
		case record.StatusNotJudged:
			sum.NotJudgedTrials++
		}
		durations = append(durations, t.End.Sub(t.Start).Seconds())
	}
	if sum.Trials > 0 {
		sum.InjectionRate = float64(sum.InjectedTrials) / float64(sum.Trials)
	}
	sort.Float64s(durations)
	if n := len(durations); n > 0 {
		sum.MedianTrial = durations[n/2]
	}
	rep := report.New(trials, opts)
	sum.Findings = len(rep.Findings)
	sum.FaultFreeFailures = len(rep.FaultFree)
	sum.GenericConsequences = len(rep.Generic)
	sum.StatesEntered = len(entered)
	sum.NotJudgedWarning = report.NotJudgedWarning(sum.NotJudgedTrials, sum.Trials+sum.BaselineTrials)
}
