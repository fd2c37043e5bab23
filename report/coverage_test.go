package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gofault/gofault/record"
)

func TestCoverage(t *testing.T) {
	var trials []*record.Trial
	for i, n := range []int{100, 20, 0, 5, 1, 0, 0, 2, 0, 0, 0, 3} {
		trials = append(trials, &record.Trial{ID: fmt.Sprint("t", i), Blocks: 150 + n, NewBlocks: n})
	}
	steps := CoverageSteps(trials)
	if len(steps) != 12 || steps[1].Covered != 120 || steps[11].Covered != 131 || steps[11].NewBlocks != 3 {
		t.Errorf("steps %+v", steps)
	}
	var b strings.Builder
	if err := WriteCoverage(&b, trials, 1000); err != nil {
		t.Fatal(err)
	}
	// The last 10 trials added 0+5+1+0+0+2+0+0+0+3.
	if want := "coverage: 131 of 1000 blocks (13.1%) over 12 trials, +11 in the last 10\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := WriteCoverage(&b, []*record.Trial{{ID: "x"}}, 0); err != nil || b.Len() != 0 || CoverageSteps([]*record.Trial{{ID: "x"}}) != nil {
		t.Errorf("no counters: wrote %q", b.String())
	}
}
