package bench

import (
	"fmt"

	"github.com/gofault/gofault/report"
)

// Failures names the results of the bench that gofault bench --fail-on
// findings fails on (false positives: a matching finding on a fixed
// release), and with all, --fail-on failures (also a seed that missed its
// bug, the symptom without faults, a baseline that failed); nil for none.
// A seed that could not find its bug (Outcome.Cannot: its campaign
// injected no fault) did not miss it: the policy has nothing for the
// scenario, which the table says, and a bench of several policies need
// not fail for it. Two patterns of cannot are failures all the same, as
// they are what a broken injection looks like rather than a policy
// without faults for the scenario: a policy that could inject in some
// seeds of a bug and not in others, and a bug no policy of the bench
// could inject for.
func (s *Summary) Failures(all bool) []string {
	var got []string
	injected := map[string]bool{} // bug -> some policy injected in some seed
	for _, r := range s.Rows {
		if r.Cannot < r.Seeds {
			injected[r.Bug] = true
		}
	}
	for _, r := range s.Rows {
		row := r.Bug + "/" + r.Policy
		if r.FalsePositives > 0 {
			got = append(got, fmt.Sprintf("%s: %s on the fixed release", row, report.Plural(r.FalsePositives, "false positive")))
		}
		if !all {
			continue
		}
		if missed := r.Seeds - r.Found - r.Cannot; missed > 0 {
			got = append(got, fmt.Sprintf("%s: missed in %d of %d seeds", row, missed, r.Seeds))
		}
		// A seed whose baseline failed is cannot too, and said below.
		quiet := 0
		for _, o := range r.Outcomes {
			if o.Cannot && !o.BaselineFailed {
				quiet++
			}
		}
		switch {
		case quiet > 0 && r.Cannot < r.Seeds:
			got = append(got, fmt.Sprintf("%s: no fault injected in %d of %d seeds (the others injected)", row, quiet, r.Seeds))
		case r.Cannot > 0 && !injected[r.Bug]:
			got = append(got, fmt.Sprintf("%s: no fault injected in any seed, by any policy of the bench", row))
		}
		if n := r.FaultFreeAffected + r.FaultFreeFixed; n > 0 {
			got = append(got, fmt.Sprintf("%s: the symptom without faults in %s", row, report.Plural(n, "campaign")))
		}
		if n := len(r.BaselineFails); n > 0 {
			got = append(got, fmt.Sprintf("%s: %s whose baseline failed", row, report.Plural(n, "campaign")))
		}
	}
	return got
}
