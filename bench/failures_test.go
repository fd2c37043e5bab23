package bench

import (
	"slices"
	"testing"
)

// TestFailuresCannot: a policy that never injects for a bug while another
// policy does is not a failure (it has no fault for the scenario); a
// policy that injected in some seeds only, or a bug no policy injected
// for, is (a broken injection looks like that).
func TestFailuresCannot(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows []Row
		want []string
	}{
		{"one policy without faults for the scenario",
			[]Row{{Bug: "b", Policy: "random", Seeds: 5, Found: 5}, {Bug: "b", Policy: "sieve", Seeds: 5, Cannot: 5, Outcomes: seeds(0, 5, 0)}},
			nil},
		{"some seeds injected, some not",
			[]Row{{Bug: "b", Policy: "random", Seeds: 5, Found: 3, Cannot: 2, Outcomes: seeds(3, 2, 0)}},
			[]string{"b/random: no fault injected in 2 of 5 seeds (the others injected)"}},
		{"a failed baseline is said once",
			[]Row{{Bug: "b", Policy: "random", Seeds: 5, Found: 4, Cannot: 1, Outcomes: seeds(4, 1, 1), BaselineFails: []string{"affected seed 5, campaign 5", "fixed seed 2, campaign 12"}}},
			[]string{"b/random: 2 campaigns whose baseline failed"}},
		{"no policy injected for the bug",
			[]Row{{Bug: "b", Policy: "random", Seeds: 5, Cannot: 5, Outcomes: seeds(0, 5, 0)}, {Bug: "b", Policy: "fuzz", Seeds: 5, Cannot: 5, Outcomes: seeds(0, 5, 0)},
				{Bug: "c", Policy: "random", Seeds: 5, Found: 5}},
			[]string{"b/fuzz: no fault injected in any seed, by any policy of the bench", "b/random: no fault injected in any seed, by any policy of the bench"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := (&Summary{Rows: tc.rows}).Failures(true)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("failures %q, want %q", got, tc.want)
			}
		})
	}
}

// seeds are a row's outcomes as Summarise makes them: found seeds (at
// trial 1), then cannot ones, the last baseline of them with a failed
// baseline.
func seeds(found, cannot, baseline int) []Outcome {
	var out []Outcome
	for range found {
		out = append(out, Outcome{Seed: int64(len(out) + 1), Trial: 1})
	}
	for i := range cannot {
		out = append(out, Outcome{Seed: int64(len(out) + 1), Cannot: true, BaselineFailed: i >= cannot-baseline})
	}
	return out
}
