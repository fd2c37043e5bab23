package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
)

// Run is one campaign of a bench: a bug on one side, one policy, one seed.
type Run struct {
	Bug    string `json:"bug"`
	Side   Side   `json:"side"`
	Policy string `json:"policy"`
	Seed   int64  `json:"seed"`
}

// String names the run for progress lines: "split affected, policy
// random, seed 1".
func (r Run) String() string {
	return fmt.Sprintf("%s %s, policy %s, seed %d", r.Bug, r.Side, r.Policy, r.Seed)
}

// Matrix lists a bench's runs: for each bug, the affected release, then the
// fixed one; for each policy, seeds 1..seeds.
func Matrix(bugs []Bug, policies []string, seeds int) []Run {
	var out []Run
	for _, b := range bugs {
		for _, s := range []Side{Affected, Fixed} {
			for _, p := range policies {
				for seed := int64(1); seed <= int64(seeds); seed++ {
					out = append(out, Run{Bug: b.ID, Side: s, Policy: p, Seed: seed})
				}
			}
		}
	}
	return out
}

// Spec is what a run does, stored with it: a resumed run must do the same.
type Spec struct {
	// Overrides are every config override of the run (--set, then the
	// scenario, then the release's).
	Overrides []string `json:"overrides"`
	Match     Matcher  `json:"match"`
	// Trials is the cap on the run's fault trials.
	Trials int `json:"trials"`
	// StopAtMatch: the campaign ends at its first matching finding.
	StopAtMatch bool `json:"stop_at_match"`
	// Test is a test bug's test section (absent for a cluster bug).
	Test *Test `json:"test,omitempty"`
}

// Key returns the spec as a string, equal for equal specs.
func (s Spec) Key() string {
	b, _ := json.Marshal(s) // plain data always marshals
	return string(b)
}

// Name returns the default name of a bench: a hash of everything that
// decides its results — the config file, the --set overrides, the
// known-bug file, the bugs chosen and the policies, seeds and trials — so
// the same command resumes the same bench and a changed one starts afresh.
// --parallel does not enter it.
func Name(configData, bugsData []byte, sets, bugs, policies []string, seeds, trials int) string {
	h := sha256.New()
	for _, part := range [][]byte{configData, bugsData} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	v, _ := json.Marshal(struct {
		Sets, Bugs, Policies []string
		Seeds, Trials        int
	}{sets, bugs, policies, seeds, trials})
	h.Write(v)
	return "bench-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// Hit is the first trial of a campaign in which a bug's finding showed.
type Hit struct {
	// Trial counts the fault trials run up to and including it (1-based;
	// baseline trials do not count).
	Trial int `json:"trial"`
	// TrialID is its ID ("3-7").
	TrialID string `json:"trial_id"`
	// Minutes is the campaign's time from its first trial's start to that
	// trial's end.
	Minutes float64 `json:"minutes"`
	// Symptom is the finding's "checker: symptom".
	Symptom string `json:"symptom"`
}

// Result is what one run of a bench amounts to.
type Result struct {
	Campaign int64 `json:"campaign"`
	// Trials is the number of fault trials run; Injected how many of them
	// injected a fault.
	Trials   int `json:"trials"`
	Injected int `json:"injected"`
	// Minutes is the campaign's time, first trial start to last trial end.
	Minutes float64 `json:"minutes"`
	// Hit is the first matching finding; nil when none showed.
	Hit *Hit `json:"hit,omitempty"`
	// FaultFree is the number of trials without an injected fault (the
	// baseline's and fault trials that injected nothing) whose failure
	// matches: the scenario shows the bug, or an unrelated one with the
	// same symptom, without any fault.
	FaultFree int `json:"fault_free,omitempty"`
	// BaselineFails is set when the campaign stopped before any fault
	// because a baseline trial failed again in every re-run (whatever
	// its symptom): the scenario fails without faults.
	BaselineFails bool `json:"baseline_fails,omitempty"`
}

// baselinePolicy is the policy of a campaign's fault-free baseline trials.
const baselinePolicy = record.BaselinePolicy

// Score sums up a campaign's trials for a bench run: the fault trials run,
// how many injected, and the first finding that matches m (report.New's
// findings: faults' findings only, neither generic consequences nor
// fault-free failures).
func Score(campaign int64, trials []*record.Trial, m Matcher, opts report.Options) (Result, error) {
	re, err := regexp.Compile(m.Symptom)
	if err != nil {
		return Result{}, fmt.Errorf("match.symptom: %w", err)
	}
	ev, err := regexp.Compile(m.Evidence)
	if err != nil {
		return Result{}, fmt.Errorf("match.evidence: %w", err)
	}
	res := Result{Campaign: campaign}
	ts := slices.Clone(trials)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Index < ts[j].Index })
	if len(ts) == 0 {
		return res, nil
	}
	start, end := ts[0].Start, ts[0].End
	for _, t := range ts {
		if t.Start.Before(start) {
			start = t.Start
		}
		if t.End.After(end) {
			end = t.End
		}
	}
	res.Minutes = end.Sub(start).Minutes()
	type at struct {
		n       int
		minutes float64
	}
	when := map[string]at{}
	for _, t := range ts {
		if t.Policy == baselinePolicy {
			continue
		}
		res.Trials++
		if len(t.Injections) > 0 {
			res.Injected++
		}
		when[t.ID] = at{res.Trials, t.End.Sub(start).Minutes()}
	}
	signed := func(id string) bool { return true }
	if m.Evidence != "" {
		byID := make(map[string]*record.Trial, len(ts))
		for _, t := range ts {
			byID[t.ID] = t
		}
		signed = func(id string) bool { return hasEvidence(byID[id], m.Checker, ev) }
	}
	rep := report.New(ts, opts)
	for _, f := range rep.FaultFree {
		for id := range matching(f, m.Checker, re) {
			if signed(id) {
				res.FaultFree++
			}
		}
	}
	for _, f := range rep.Findings {
		for id, symptom := range matching(f, m.Checker, re) {
			if !signed(id) {
				continue
			}
			w, ok := when[id]
			if ok && (res.Hit == nil || w.n < res.Hit.Trial) {
				res.Hit = &Hit{Trial: w.n, TrialID: id, Minutes: w.minutes, Symptom: symptom}
			}
		}
	}
	return res, nil
}

// hasEvidence reports whether trial t has a failed verdict of checker with
// an evidence line that re matches.
func hasEvidence(t *record.Trial, checker string, re *regexp.Regexp) bool {
	if t == nil {
		return false
	}
	for _, v := range t.Verdicts {
		if v.Checker != checker || !v.Failed {
			continue
		}
		for _, line := range v.Evidence {
			if re.MatchString(line) {
				return true
			}
		}
	}
	return false
}

// matching returns the trials of finding f that show a symptom of checker
// whose text matches re, with that symptom ("checker: symptom"): the
// finding's primary symptom in all its trials, or a co-occurring one in
// the trials that showed it. A known bug's symptom may be secondary to a
// worse one that the same fault caused (a lost write also breaks order),
// and the bug is found all the same.
func matching(f report.Finding, checker string, re *regexp.Regexp) map[string]string {
	out := map[string]string{}
	for _, co := range f.CoOccurring {
		if co.Checker == checker && re.MatchString(co.Symptom) {
			for _, id := range co.Trials {
				out[id] = co.Checker + ": " + co.Symptom
			}
		}
	}
	if f.Checker == checker && re.MatchString(f.Symptom) {
		for _, id := range f.Trials {
			out[id] = f.Checker + ": " + f.Symptom
		}
	}
	return out
}

// Row is one bug and policy of a bench's results.
type Row struct {
	Bug    string `json:"bug"`
	Policy string `json:"policy"`
	// Seeds is the number of seeds run; Found how many of them found the
	// bug on the affected release; Cannot how many could not find it
	// there (Outcome.Cannot), neither a find nor a miss.
	Seeds  int `json:"seeds"`
	Found  int `json:"found"`
	Cannot int `json:"cannot"`
	// CannotWhy says why, when Cannot > 0.
	CannotWhy string `json:"cannot_why,omitempty"`
	// MedianTrials is the median over the seeds that could find the bug
	// of the fault trials to the first matching finding, a miss counting
	// as the cap (Trials); MedianMinutes the same in minutes, a miss
	// counting as its whole campaign's minutes. Both are lower bounds when
	// half those seeds or more missed (Lower); 0 when no seed could.
	MedianTrials  float64 `json:"median_trials"`
	MedianMinutes float64 `json:"median_minutes"`
	// TrialsCI is a confidence interval for the median fault trials to
	// the finding (Interval); nil when no seed could find the bug.
	TrialsCI *Interval `json:"trials_ci,omitempty"`
	// Outcomes are the seeds' campaigns on the affected release, by seed:
	// what the interval and the comparisons between policies (Pair) rest
	// on.
	Outcomes []Outcome `json:"outcomes"`
	// InjectionRate is the share of the fault trials on both releases
	// that injected a fault; FaultTrials is their number. No fault trial
	// at all means the policy had nothing to inject in the scenario (e.g.
	// sieve, which only delays, under faults.kinds=[crash]).
	InjectionRate float64 `json:"injection_rate"`
	FaultTrials   int     `json:"fault_trials"`
	// FalsePositives is the number of seeds whose campaign on the fixed
	// release showed a matching finding; FalsePositiveTrials their first
	// matching trials' IDs.
	FalsePositives      int      `json:"false_positives"`
	FalsePositiveTrials []string `json:"false_positive_trials,omitempty"`
	// FaultFreeAffected and FaultFreeFixed are the number of seeds whose
	// campaign on that release showed the matching symptom in a trial
	// without faults (Result.FaultFree): a bug the scenario shows without
	// gofault's help, or a symptom not specific to the bug.
	FaultFreeAffected int `json:"fault_free_affected"`
	FaultFreeFixed    int `json:"fault_free_fixed"`
	// BaselineFails lists the campaigns of the row (as "affected seed 2,
	// campaign 7") that stopped before any fault because their baseline
	// failed in every re-run.
	BaselineFails []string `json:"baseline_fails,omitempty"`
	// Campaigns are the store's campaigns of the row, affected then fixed.
	Campaigns []int64 `json:"campaigns"`
}

// Lower reports whether half the row's seeds that could find the bug or
// more missed it, so that its medians are (partly) a miss counted as the
// cap: lower bounds.
func (r Row) Lower() bool { return 2*r.Found <= r.Seeds-r.Cannot }

// AllCannot reports whether no seed of the row could find the bug
// (Outcome.Cannot): the table says "cannot", with no median.
func (r Row) AllCannot() bool { return r.Seeds > 0 && r.Cannot == r.Seeds }

// Outcome is one seed's campaign of a bug on its affected release.
type Outcome struct {
	Seed int64 `json:"seed"`
	// Trial is the fault trial that first showed the bug (Hit.Trial); 0
	// when the seed missed it (right-censored: not within the campaign's
	// fault trials) or could not find it.
	Trial int `json:"trial,omitempty"`
	// Cannot: the campaign injected no fault at all (no fault trial ran,
	// as when the policy has no fault of the scenario's kinds — sieve,
	// which only delays, under faults.kinds=[crash] — or the baseline
	// failed; or none of its fault trials injected one). A finding is a
	// fault's, so such a campaign could not find the bug: it is no miss,
	// and is left out of the medians, the interval and the comparisons.
	Cannot bool `json:"cannot,omitempty"`
	// BaselineFailed marks a Cannot seed whose campaign stopped before
	// any fault because its baseline failed (Row.BaselineFails names it).
	BaselineFailed bool `json:"baseline_failed,omitempty"`
}

// missed reports whether the seed could find the bug and did not.
func (o Outcome) missed() bool { return !o.Cannot && o.Trial == 0 }

// Summary is a bench's results.
type Summary struct {
	Name string `json:"name"`
	// Trials is the cap on each campaign's fault trials.
	Trials int    `json:"trials"`
	Seeds  int    `json:"seeds"`
	Rows   []Row  `json:"rows"`
	DB     string `json:"db"`
	// Pairs compare every two policies over the bugs (Compare).
	Pairs []Pair `json:"pairs,omitempty"`
	// Minutes is the campaigns' time, summed.
	Minutes float64 `json:"minutes"`
}

// Summarise aggregates the results of a bench's runs (every run of the
// matrix must have one) per bug and policy, in the order of bugs and
// policies, and compares the policies pairwise (Compare).
func Summarise(name string, bugs []Bug, policies []string, seeds, trials int, results map[Run]Result) (*Summary, error) {
	s := &Summary{Name: name, Trials: trials, Seeds: seeds}
	for _, b := range bugs {
		for _, p := range policies {
			row := Row{Bug: b.ID, Policy: p, Seeds: seeds}
			var ts, ms []float64
			var cannot cannotSeeds
			run, injected := 0, 0
			for _, side := range []Side{Affected, Fixed} {
				for seed := int64(1); seed <= int64(seeds); seed++ {
					r := Run{Bug: b.ID, Side: side, Policy: p, Seed: seed}
					res, ok := results[r]
					if !ok {
						return nil, fmt.Errorf("no result for %s", r)
					}
					s.Minutes += res.Minutes
					row.Campaigns = append(row.Campaigns, res.Campaign)
					run += res.Trials
					injected += res.Injected
					if res.BaselineFails {
						row.BaselineFails = append(row.BaselineFails, fmt.Sprintf("%s seed %d, campaign %d", side, seed, res.Campaign))
					}
					if res.FaultFree > 0 && side == Affected {
						row.FaultFreeAffected++
					} else if res.FaultFree > 0 {
						row.FaultFreeFixed++
					}
					switch {
					case side == Fixed && res.Hit != nil:
						row.FalsePositives++
						row.FalsePositiveTrials = append(row.FalsePositiveTrials, res.Hit.TrialID)
					case side == Affected && res.Hit != nil:
						row.Found++
						row.Outcomes = append(row.Outcomes, Outcome{Seed: seed, Trial: res.Hit.Trial})
						ts = append(ts, float64(res.Hit.Trial))
						ms = append(ms, res.Hit.Minutes)
					case side == Affected && res.Injected == 0:
						row.Cannot++
						row.Outcomes = append(row.Outcomes, Outcome{Seed: seed, Cannot: true, BaselineFailed: res.BaselineFails})
						cannot.add(res)
					case side == Affected:
						row.Outcomes = append(row.Outcomes, Outcome{Seed: seed})
						ts = append(ts, float64(trials))
						ms = append(ms, res.Minutes)
					}
				}
			}
			row.MedianTrials, row.MedianMinutes = median(ts), median(ms)
			row.TrialsCI = trialsCI(row.Outcomes, trials)
			row.CannotWhy = cannot.why(b.DeclaredKinds())
			row.FaultTrials = run
			if run > 0 {
				row.InjectionRate = float64(injected) / float64(run)
			}
			s.Rows = append(s.Rows, row)
		}
	}
	s.Pairs = Compare(s.Rows, policies)
	return s, nil
}

// cannotSeeds counts the campaigns on the affected release that injected
// no fault (Outcome.Cannot), by why.
type cannotSeeds struct {
	baseline int // stopped before any fault: the baseline fails
	none     int // no fault trial ran: the policy had nothing to inject
	empty    int // fault trials ran and injected nothing
}

// add counts a campaign that injected no fault.
func (c *cannotSeeds) add(res Result) {
	switch {
	case res.BaselineFails:
		c.baseline++
	case res.Trials == 0:
		c.none++
	default:
		c.empty++
	}
}

// why says why the seeds could not find the bug, naming the fault kinds
// the bug file declares (none: the config's); "" when every seed could.
func (c cannotSeeds) why(kinds []string) string {
	var out []string
	if c.none > 0 {
		k := "the config's fault kinds"
		if len(kinds) > 0 {
			k = "the fault kinds " + strings.Join(kinds, ", ")
		}
		out = append(out, fmt.Sprintf("%s ran no fault trial: the policy has no fault to inject under %s", report.Plural(c.none, "campaign"), k))
	}
	if c.empty > 0 {
		out = append(out, fmt.Sprintf("%s injected nothing in any fault trial", report.Plural(c.empty, "campaign")))
	}
	if c.baseline > 0 {
		out = append(out, fmt.Sprintf("%s stopped before any fault: the baseline fails without faults", report.Plural(c.baseline, "campaign")))
	}
	return strings.Join(out, "; ")
}

// median returns the median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// WriteTable prints the summary as a table with aligned columns, one row
// per bug and policy, the comparisons of the policies, and a legend.
func (s *Summary) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "bench %s: %d seeds × at most %d fault trials per campaign", s.Name, s.Seeds, s.Trials)
	if s.DB != "" {
		fmt.Fprintf(w, "; store %s", s.DB)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "bug\tpolicy\tfound\tmedian trials\tCI of median trials\tmedian minutes\tinjected\tfalse positives (fixed)\twithout faults (affected, fixed)")
	for _, r := range s.Rows {
		fp := fmt.Sprintf("%d/%d", r.FalsePositives, r.Seeds)
		if len(r.FalsePositiveTrials) > 0 {
			fp += " (" + strings.Join(r.FalsePositiveTrials, ", ") + ")"
		}
		found := fmt.Sprintf("%d/%d", r.Found, r.Seeds)
		mt, mm, ci := fmt.Sprintf("%.1f", r.MedianTrials), fmt.Sprintf("%.2f", r.MedianMinutes), "-"
		switch {
		case r.AllCannot():
			found, mt, mm = "cannot", "-", "-" // no seed could find it: no median to give
		case r.Lower():
			mt, mm = ">="+mt, ">="+mm // half the seeds or more missed: the median is (partly) a miss
		}
		if r.Cannot > 0 && !r.AllCannot() {
			found += fmt.Sprintf(", %d cannot", r.Cannot)
		}
		if r.TrialsCI != nil {
			ci = r.TrialsCI.String()
		}
		inj := fmt.Sprintf("%.0f%%", 100*r.InjectionRate)
		if r.FaultTrials == 0 {
			inj = "nothing" // the policy had no fault to inject in the scenario
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d, %d/%d\n", r.Bug, r.Policy, found, mt, ci, mm, inj, fp,
			r.FaultFreeAffected, r.Seeds, r.FaultFreeFixed, r.Seeds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range s.Rows {
		for _, c := range r.BaselineFails {
			fmt.Fprintf(w, "%s, %s: %s: stopped before any fault, its baseline fails without faults (gofault report --fault-free shows why)\n", r.Bug, r.Policy, c)
		}
	}
	for _, r := range s.Rows {
		if r.Cannot > 0 {
			fmt.Fprintf(w, "%s, %s: cannot find it in %d of %d seeds: %s\n", r.Bug, r.Policy, r.Cannot, r.Seeds, r.CannotWhy)
		}
	}
	if len(s.Pairs) > 0 {
		fmt.Fprintln(w)
		if err := writePairs(w, s.Pairs); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\nfound: seeds whose campaign on the affected release showed the bug's finding (each stops at its first); cannot: seeds whose campaign there injected no fault at all, so could not find it (no miss: left out of the medians, the CI and the comparisons).\n"+
		"median trials/minutes: to that finding; a seed that missed counts as the cap (%d trials, its whole campaign's minutes), so >= marks a median that is (partly) a miss.\n"+
		"CI of median trials: distribution-free confidence interval for the median from the seeds' order statistics (binomial), with the confidence it reaches (%.0f%% where the seeds allow; five give 94%%); a miss sorts after every find, so >%d is a bound beyond the cap.\n"+
		"injected: share of fault trials (both releases) that injected a fault; nothing: the policy has no fault it may inject in the scenario, so no fault trial ran.\n"+
		"false positives: seeds whose campaign of %d trials on the fixed release showed a matching finding (their first trials).\n"+
		"without faults: seeds whose campaign showed the matching symptom in a trial without any fault (the scenario shows it unaided, or the symptom is not specific to the bug).\n",
		s.Trials, 100*Confidence, s.Trials, s.Trials)
	if err != nil {
		return err
	}
	if len(s.Pairs) > 0 {
		fmt.Fprintf(w, "policies: each two over the (bug, seed) pairs both could run: which found the bug in fewer fault trials (a miss is worse than any find), the median difference where both found it, and the exact sign test's two-sided p over the pairs that differ (ties dropped); p < %.2f names the winner, else not more than noise.\n", 1-Confidence)
	}
	_, err = fmt.Fprintf(w, "%.1f campaign minutes in all.\n", s.Minutes)
	return err
}
