package report

import (
	"fmt"
	"io"

	"github.com/gofault/gofault/record"
)

// CoverageStep is the campaign's coverage after one trial, in the order
// the trials were saved.
type CoverageStep struct {
	Trial string `json:"trial"`
	// Blocks the trial covered, NewBlocks of them first, Covered the
	// union after it.
	Blocks    int `json:"blocks"`
	NewBlocks int `json:"new_blocks"`
	Covered   int `json:"covered"`
}

// CoverageSteps returns the coverage over trials: the running union of
// the trials' new blocks, in trial order (nil when no trial covered any
// block: a build without counters).
func CoverageSteps(trials []*record.Trial) []CoverageStep {
	var out []CoverageStep
	covered, any := 0, false
	for _, t := range trials {
		covered += t.NewBlocks
		any = any || t.Blocks > 0
		out = append(out, CoverageStep{Trial: t.ID, Blocks: t.Blocks, NewBlocks: t.NewBlocks, Covered: covered})
	}
	if !any {
		return nil
	}
	return out
}

// WriteCoverage writes one line on the campaign's coverage, e.g.
// "coverage: 1234 of 5678 blocks (21.7%) over 40 trials, +12 in the last
// 10"; total is the number of blocks the build counts (0 if unknown).
// It writes nothing when no trial covered any block.
func WriteCoverage(w io.Writer, trials []*record.Trial, total int) error {
	steps := CoverageSteps(trials)
	if len(steps) == 0 {
		return nil
	}
	last := steps[len(steps)-1].Covered
	of := ""
	if total > 0 {
		of = fmt.Sprintf(" of %d", total)
	}
	recent := last
	if n := len(steps); n > 10 {
		recent = last - steps[n-11].Covered
	}
	pct := ""
	if total > 0 {
		pct = fmt.Sprintf(" (%.1f%%)", 100*float64(last)/float64(total))
	}
	_, err := fmt.Fprintf(w, "\ncoverage: %d%s blocks%s over %d trials, +%d in the last %d\n", last, of, pct, len(steps), recent, min(10, len(steps)))
	return err
}
