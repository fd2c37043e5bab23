package campaign

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gofault/gofault/report"
)

// WriteText prints what the campaign did, as gofault run does: its
// trials, failures and findings, then what to look at next; kinds are its
// config's faults.kinds (named when the policy had nothing to try).
func (s *Summary) WriteText(w io.Writer, kinds []string) {
	fmt.Fprintf(w, "campaign %d (%s): %d trials (%d with faults, injection rate %.0f%%, %d injections), %d baseline trials\n",
		s.Campaign, s.Policy, s.Trials, s.InjectedTrials, 100*s.InjectionRate, s.Injections, s.BaselineTrials)
	fmt.Fprintf(w, "  %d failed, %d could not run, %d not judged; %d findings\n", s.FailedTrials, s.ErrorTrials, s.NotJudgedTrials, s.Findings)
	if s.NotJudgedWarning != "" {
		fmt.Fprintf(w, "  %s\n", s.NotJudgedWarning)
	}
	if s.NotInjectedWarning != "" {
		fmt.Fprintf(w, "  warning: %s\n", s.NotInjectedWarning)
	}
	if s.FaultFreeFailures > 0 {
		fmt.Fprintf(w, "  %d fault-free failures (no fault injected; not findings): gofault report --fault-free --db %s\n", s.FaultFreeFailures, s.DB)
	}
	if s.GenericConsequences > 0 {
		fmt.Fprintf(w, "  %d generic consequences of faults (new log lines after faults at many unrelated sites; informational): gofault report --generic --db %s\n", s.GenericConsequences, s.DB)
	}
	if s.ProgressHow != "" {
		fmt.Fprintf(w, "  progress bound %s (%s)\n", time.Duration(s.ProgressBound*float64(time.Second)).Round(time.Millisecond), s.ProgressHow)
	}
	if s.States > 0 {
		fmt.Fprintf(w, "  %d of %d abstract states entered\n", s.StatesEntered, s.States)
	}
	if s.Blocks > 0 {
		fmt.Fprintf(w, "  %s\n", coverageText(s.CoverageBlocks, s.Blocks, -1))
	}
	if s.Templates > 0 {
		fmt.Fprintf(w, "  template start: %d cluster templates formed (%.1fs each), every trial started from one\n", s.Templates, s.TemplateSeconds/float64(s.Templates))
	}
	fmt.Fprintf(w, "  %.0fs (build %.0fs, median trial %.1fs); store %s; work dir %.0f MB\n",
		s.Seconds, s.BuildSeconds, s.MedianTrial, s.DB, float64(s.WorkDirBytes)/(1<<20))
	if s.Findings > 0 {
		fmt.Fprintf(w, "  see them with: gofault report --db %s\n", s.DB)
	}
	switch {
	case s.Exhausted && s.Trials == 0:
		fmt.Fprintf(w, "  nothing to try: policy %s has no fault it may inject at these sites with faults.kinds %v (docs/policies.md says which kinds each policy injects)\n", s.Policy, kinds)
	case s.Exhausted:
		fmt.Fprintln(w, "  explored everything: the policy has nothing left to try, so the campaign ended early")
	}
}

// ProgressBar draws campaign progress on a terminal and stays silent
// otherwise.
type ProgressBar struct {
	w     io.Writer
	tty   bool
	start time.Time
	drawn bool
}

// NewProgressBar returns a progress bar that draws on f when f is a
// terminal.
func NewProgressBar(f *os.File) *ProgressBar {
	fi, err := f.Stat()
	return &ProgressBar{w: f, tty: err == nil && fi.Mode()&os.ModeCharDevice != 0, start: time.Now()}
}

// Update draws the campaign's progress after a trial (Options.AfterTrial).
func (p *ProgressBar) Update(pr Tally) {
	if !p.tty {
		return
	}
	const width = 30
	if pr.Baseline {
		fmt.Fprintf(p.w, "\r\033[Kbaseline trial %s: %s", pr.Trial.ID, pr.Trial.Status)
		p.drawn = true
		return
	}
	filled := 0
	if pr.Total > 0 {
		filled = width * pr.Done / pr.Total
	}
	per := time.Since(p.start) / time.Duration(max(pr.Done, 1))
	eta := per * time.Duration(pr.Total-pr.Done)
	cov := ""
	if pr.Blocks > 0 {
		cov = ", " + coverageText(pr.Covered, pr.Blocks, pr.RecentNew)
	}
	nj := ""
	if pr.NotJudged > 0 {
		nj = fmt.Sprintf(", %d not judged", pr.NotJudged)
	}
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d trials, %d failed%s%s, ETA %s",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), pr.Done, pr.Total, pr.Failed, nj, cov, eta.Round(time.Second))
	p.drawn = true
}

// coverageText says how many blocks the campaign covered, e.g. "coverage
// 1234/5678 blocks (21.7%, +12 in the last 10 trials)"; recent < 0 leaves
// the last part out.
func coverageText(covered, blocks, recent int) string {
	s := fmt.Sprintf("coverage %d/%d blocks (%.1f%%", covered, blocks, 100*float64(covered)/float64(max(blocks, 1)))
	if recent >= 0 {
		s += fmt.Sprintf(", +%d in the last 10 trials", recent)
	}
	return s + ")"
}

// Finish ends the progress line, if one was drawn.
func (p *ProgressBar) Finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}

// WriteText prints the comparison as gofault compare does: one row per
// finding and a column per policy of names.
func (cmp *Comparison) WriteText(w io.Writer, names []string) {
	fmt.Fprintf(w, "%d seeds × %d trials per policy; store %s\n\n", cmp.Seeds, cmp.Trials, cmp.DB)
	all := map[string]bool{}
	for _, r := range cmp.Policies {
		for f := range r.MedianTrialsToFinding {
			all[f] = true
		}
	}
	findings := make([]string, 0, len(all))
	for f := range all {
		findings = append(findings, f)
	}
	sort.Strings(findings)
	fmt.Fprintf(w, "%-16s", "policy")
	for _, n := range names {
		fmt.Fprintf(w, " %18s", n)
	}
	fmt.Fprintf(w, "\n%-16s", "findings")
	for _, n := range names {
		fmt.Fprintf(w, " %18d", cmp.Policies[n].Findings)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "\nmedian trials to each finding (found in seeds/all; > trials means missed by most seeds):")
	for _, f := range findings {
		fmt.Fprintf(w, "  %s\n  %-14s", f, "")
		for _, n := range names {
			r := cmp.Policies[n]
			if found := r.FoundIn[f]; found > 0 {
				cell := fmt.Sprintf("%.1f (%d/%d)", r.MedianTrialsToFinding[f], found, cmp.Seeds)
				if m := r.MedianMinutesToFinding[f]; m != nil {
					cell += fmt.Sprintf(" %.1fm", *m)
				}
				fmt.Fprintf(w, " %18s", cell)
			} else {
				fmt.Fprintf(w, " %18s", "-")
			}
		}
		fmt.Fprintln(w)
	}
}

// WriteText says what Restore made of trial id in dest, as gofault report
// --restore does: the data dirs' files, and the files of members that were
// not kept.
func (r *Restored) WriteText(w io.Writer, id, dest string) {
	fmt.Fprintf(w, "restored trial %s into %s: %d files of the data dirs, and its logs\n", id, dest, len(r.Files))
	if len(r.Omitted) > 0 {
		names := slices.Sorted(maps.Keys(r.Omitted))
		fmt.Fprintf(w, "not kept (members the faults did not hit; only their file list): %d files\n", len(names))
		for _, n := range names {
			fmt.Fprintf(w, "  %12d  %s\n", r.Omitted[n], n)
		}
	}
}

// Failures names the results of the campaign that gofault run --fail-on
// findings fails on (its findings), and with all, --fail-on failures
// (every other failure too: failed trials, fault-free failures, generic
// consequences, trials that could not run); nil for none.
func (s *Summary) Failures(all bool) []string {
	var got []string
	if s.Findings > 0 {
		got = append(got, report.Plural(s.Findings, "finding"))
	}
	if !all {
		return got
	}
	// Failed trials include those that made the findings; name the rest
	// by what they are.
	if n := s.FailedTrials; n > 0 {
		got = append(got, report.Plural(n, "failed trial"))
	}
	if n := s.FaultFreeFailures; n > 0 {
		got = append(got, report.Plural(n, "fault-free failure"))
	}
	if n := s.GenericConsequences; n > 0 {
		got = append(got, report.Plural(n, "generic consequence"))
	}
	if n := s.ErrorTrials; n > 0 {
		got = append(got, report.Plural(n, "trial that could not run", "trials that could not run"))
	}
	return got
}
