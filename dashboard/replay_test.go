package dashboard

import (
	"testing"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/gotest"
)

// TestReplayShown: the Replay button shows the verdict and what ran (the
// last and first lines gofault replay prints), all the output, and whether
// every failure recurred.
func TestReplayShown(t *testing.T) {
	text := "replayed 1-7 as 2-7: failed, 1 injections (original: failed, 1 injections)\n  [hang] client n* made no progress\n  logs /w/trials/2-7\nreproduced\n"
	for _, tt := range []struct {
		name       string
		r          *campaign.Replayed
		text, all  string
		summary    string
		reproduced bool
	}{
		{"reproduced", &campaign.Replayed{Results: []campaign.ReplayRun{{Reproduced: true}}}, text, "level=INFO msg=built\n" + text,
			"reproduced: replayed 1-7 as 2-7: failed, 1 injections (original: failed, 1 injections)", true},
		{"not reproduced", &campaign.Replayed{Results: []campaign.ReplayRun{{NotReproduced: []string{"hang: x"}}}},
			"replayed 1-7 as 2-7: ok, 0 injections (original: failed, 1 injections)\nnot reproduced: did not recur: hang: x\n", "all",
			"not reproduced: did not recur: hang: x: replayed 1-7 as 2-7: ok, 0 injections (original: failed, 1 injections)", false},
		{"failed before running", nil, "", "level=ERROR msg=boom\n", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := replayShown(tt.r, tt.text, tt.all)
			if got.Summary != tt.summary || got.Reproduced != tt.reproduced || got.Output != tt.all {
				t.Errorf("replayShown = %+v; want summary %q, reproduced %v, output %q", got, tt.summary, tt.reproduced, tt.all)
			}
		})
	}
}

// TestTestReplayShown: the Replay button on a gofault test trial says how
// often the test failed again, that it did not, and that the rebuilt test
// binary lacks sites of the trial's faults.
func TestTestReplayShown(t *testing.T) {
	for _, tt := range []struct {
		name       string
		r          *gotest.ReplayResult
		summary    string
		reproduced bool
	}{
		{"recurred", &gotest.ReplayResult{Trial: "1-7", Test: "TestSaveLoad", Outcomes: []string{"failed"}, Recurred: 1},
			"TestSaveLoad failed again in 1 of 1 runs", true},
		{"some runs", &gotest.ReplayResult{Trial: "1-7", Test: "TestSaveLoad", Outcomes: []string{"failed", ""}, Recurred: 1},
			"TestSaveLoad failed again in 1 of 2 runs", false},
		{"did not recur", &gotest.ReplayResult{Trial: "1-7", Test: "TestSaveLoad", Outcomes: []string{""}},
			"TestSaveLoad did not fail again: passed in 1 of 1 runs", false},
		{"source changed", &gotest.ReplayResult{Trial: "1-7", Test: "TestSaveLoad", Outcomes: []string{""}, Missing: 1},
			"TestSaveLoad did not fail again: passed in 1 of 1 runs; 1 of its injections name sites the rebuilt test binary no longer has (the source changed)", false},
		{"failed before running", nil, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := testReplayShown(tt.r, "out\n")
			if got.Summary != tt.summary || got.Reproduced != tt.reproduced || got.Output != "out\n" {
				t.Errorf("testReplayShown = %+v; want summary %q, reproduced %v", got, tt.summary, tt.reproduced)
			}
		})
	}
}
