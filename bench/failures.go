package bench

import "fmt"

// Failures names the results of the bench that gofault bench --fail-on
// findings fails on (false positives: a matching finding on a fixed
// release), and with all, --fail-on failures (also a seed that missed its
// bug, the symptom without faults, a baseline that failed); nil for none.
func (s *Summary) Failures(all bool) []string {
	var got []string
	for _, r := range s.Rows {
		row := r.Bug + "/" + r.Policy
		if r.FalsePositives > 0 {
			got = append(got, fmt.Sprintf("%s: %s on the fixed release", row, plural(r.FalsePositives, "false positive")))
		}
		if !all {
			continue
		}
		if r.Found < r.Seeds {
			got = append(got, fmt.Sprintf("%s: missed in %d of %d seeds", row, r.Seeds-r.Found, r.Seeds))
		}
		if n := r.FaultFreeAffected + r.FaultFreeFixed; n > 0 {
			got = append(got, fmt.Sprintf("%s: the symptom without faults in %s", row, plural(n, "campaign")))
		}
		if n := len(r.BaselineFails); n > 0 {
			got = append(got, fmt.Sprintf("%s: %s whose baseline failed", row, plural(n, "campaign")))
		}
	}
	return got
}

// plural says "1 finding" or "3 findings"; a second form is the plural
// where adding "s" is wrong.
func plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}
