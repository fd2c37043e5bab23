package gotest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/gofault/gofault/report"
)

// WriteText prints what the campaign did, as gofault test does.
func (s *Summary) WriteText(w io.Writer) {
	sel := s.Selection
	reused := ""
	if s.Reused {
		reused = "; reused, inputs unchanged"
	}
	fmt.Fprintf(w, "campaign %d: test binary %s (%d fault sites%s)\n", s.Campaign, s.Binary, s.Sites, reused)
	if s.HelperSites > 0 {
		fmt.Fprintf(w, "  %d sites in test helper files left out (--helpers keeps them): %s\n", s.HelperSites, strings.Join(s.HelperFiles, ", "))
	}
	fmt.Fprintf(w, "  fault-free pass: %d tests measured; %d chosen, %d flaky, %d failing, %d skipped, %d reached no site\n",
		len(s.Measured), len(sel.Chosen), len(sel.Flaky), len(sel.Failing), len(sel.Skipped), len(sel.NoSites))
	for _, group := range []struct {
		what string
		ms   []Measure
	}{{"flaky (left out)", sel.Flaky}, {"failing fault-free (left out)", sel.Failing}, {"skipped (left out)", sel.Skipped}, {"reached no site (left out)", sel.NoSites}} {
		if len(group.ms) == 0 {
			continue
		}
		var names []string
		for _, m := range group.ms {
			names = append(names, fmt.Sprintf("%s (%d/%d passed)", m.Test, m.Passed, m.Runs))
		}
		fmt.Fprintf(w, "  %s: %s\n", group.what, strings.Join(names, ", "))
	}
	if s.Twice > 0 || s.TooSlowTwice > 0 {
		fmt.Fprintf(w, "  %d of the %d chosen tests passed twice in one process: their fault trials run them twice, the second run with no fault (--once: once)", s.Twice+s.TooSlowTwice, len(sel.Chosen))
		if s.TooSlowTwice > 0 {
			fmt.Fprintf(w, "; %d of them run once, slower than --twice-max", s.TooSlowTwice)
		}
		fmt.Fprintln(w)
	}
	if s.ResumedTests > 0 || s.ResumedTrials > 0 {
		fmt.Fprintf(w, "  resumed: %d tests measured and %d fault trials stored by earlier runs\n", s.ResumedTests, s.ResumedTrials)
	}
	if len(s.Shares) > 0 {
		fmt.Fprintf(w, "  trials by test (weight: each site it reached counts 1/k, k the chosen tests that reached it):\n")
		for _, sh := range s.Shares {
			fmt.Fprintf(w, "    %-40s %3d trials  weight %5.2f  %d sites, %d its own\n", sh.Test, sh.Trials, sh.Weight, sh.Sites, sh.Own)
		}
	}
	fmt.Fprintf(w, "  fault trials: %d (%d with a fault), %d failed (%d with a fault); %d at once here (%s)\n", s.Trials, s.Injected, s.Failed, s.FaultFailed, s.Parallel, s.ParallelHow)
	if s.Bundle != "" {
		fmt.Fprintf(w, "  bundle %s (%d bytes); %d fault trials ran on workers%s\n", s.Bundle, s.BundleBytes, s.RemoteTrials, byWorker(s.Workers))
	}
	if s.Member != "" {
		fmt.Fprintf(w, "  members (%s, %d methods hooked): %d requests named a member (the policy was asked %d times; a request of no member is the process's, n0), at most %d members in a run\n",
			s.Member, s.MemberMethods, s.MemberRequests, s.Requests, s.MostMembers)
	}
	if s.Sends > 0 {
		fmt.Fprintf(w, "  transport: %d send methods hooked; %d sends named the member sending and the member sent to\n", s.Sends, s.MemberSends)
	}
	if len(s.Setup) > 0 {
		fmt.Fprintf(w, "  setup (%s): %d functions of the test files hooked; no fault strikes while one runs\n", strings.Join(s.Setup, ", "), s.SetupFuncs)
	}
	if s.SetupRequests > 0 {
		fmt.Fprintf(w, "  %d requests made under a test helper got no fault (--helpers offers them)\n", s.SetupRequests)
	}
	if s.Findings > 0 || s.FaultFreeFailures > 0 {
		fmt.Fprintf(w, "  %s, %s (no fault injected: not findings)\n", report.Plural(s.Findings, "finding"), report.Plural(s.FaultFreeFailures, "fault-free failure"))
	}
	if s.Assumptions > 0 {
		fmt.Fprintf(w, "  %s: the test failed reporting the error injected into it, which the code under test surfaced as it should, or after ignoring it (not findings; gofault report --db %s --trials shows them)\n", report.Plural(s.Assumptions, "test assumption"), s.DB)
	}
	if s.FailStops > 0 {
		fmt.Fprintf(w, "  %s: the code under test stopped the test process on the error injected into it, on purpose (not findings)\n", report.Plural(s.FailStops, "fail-stop"))
	}
	if s.Timing > 0 {
		fmt.Fprintf(w, "  %s: the test's own wait ran out while an injected delay held the call (not findings)\n", report.Plural(s.Timing, "timing assumption"))
	}
	fmt.Fprintf(w, "  %.0fs (build %.0fs, fault-free pass %.0fs, fault trials %.0fs); store %s\n", s.Seconds, s.BuildSecs, s.MeasureSecs, s.FaultSecs, s.DB)
	if s.Failed > 0 {
		fmt.Fprintf(w, "  see them with: gofault report --db %s\n", s.DB)
	}
}

// byWorker says how many fault trials each worker ran, " (w0 12, w1 8)"
// in the workers' order, "" for none.
func byWorker(workers map[string]int) string {
	if len(workers) == 0 {
		return ""
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(workers)) {
		parts = append(parts, fmt.Sprintf("%s %d", name, workers[name]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
