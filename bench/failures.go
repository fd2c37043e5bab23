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
// not fail for it.
func (s *Summary) Failures(all bool) []string {
	var got []string
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
		if n := r.FaultFreeAffected + r.FaultFreeFixed; n > 0 {
			got = append(got, fmt.Sprintf("%s: the symptom without faults in %s", row, report.Plural(n, "campaign")))
		}
		if n := len(r.BaselineFails); n > 0 {
			got = append(got, fmt.Sprintf("%s: %s whose baseline failed", row, report.Plural(n, "campaign")))
		}
	}
	return got
}
