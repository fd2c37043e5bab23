package gotest

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteTestSummary checks that the summary says which test got how
// many trials and why, what a resume took over, and how many ran at once.
func TestWriteTestSummary(t *testing.T) {
	s := &Summary{
		Campaign: 3, Binary: "pkg.test", Sites: 4, Trials: 20, Injected: 19, Parallel: 2, ParallelHow: "set by --parallel",
		ResumedTests: 3, ResumedTrials: 7, Bundle: "/w/bundle", BundleBytes: 9, RemoteTrials: 20,
		Workers: map[string]int{"w1": 8, "w0": 12}, Findings: 1, FaultFreeFailures: 2, Twice: 1, TooSlowTwice: 1,
		Selection: Selection{Chosen: []Measure{{Test: "TestSaveLoad", Again: true}, {Test: "TestLoadMissing"}}},
		Shares: []Share{
			{Test: "TestSaveLoad", Sites: 2, Own: 1, Weight: 1.5, Trials: 15},
			{Test: "TestLoadMissing", Sites: 1, Own: 0, Weight: 0.5, Trials: 5},
		},
	}
	var out bytes.Buffer
	s.WriteText(&out)
	for _, want := range []string{
		"resumed: 3 tests measured and 7 fault trials stored by earlier runs",
		"each site it reached counts 1/k",
		"TestSaveLoad                              15 trials  weight  1.50  2 sites, 1 its own",
		"TestLoadMissing                            5 trials  weight  0.50  1 sites, 0 its own",
		"fault trials: 20 (19 with a fault), 0 failed (0 with a fault); 2 at once here (set by --parallel)",
		"bundle /w/bundle (9 bytes); 20 fault trials ran on workers (w0 12, w1 8)\n",
		"  1 finding, 2 fault-free failures (no fault injected: not findings)\n",
		"  2 of the 2 chosen tests passed twice in one process: their fault trials run them twice, the second run with no fault (--once: once); 1 of them run once, slower than --twice-max\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
