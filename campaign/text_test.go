package campaign

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gofault/gofault/record"
)

func TestCoverageText(t *testing.T) {
	for _, tt := range []struct {
		covered, blocks, recent int
		want                    string
	}{
		{1234, 5678, 12, "coverage 1234/5678 blocks (21.7%, +12 in the last 10 trials)"},
		{161, 261, -1, "coverage 161/261 blocks (61.7%)"},
		{0, 0, 0, "coverage 0/0 blocks (0.0%, +0 in the last 10 trials)"},
	} {
		if got := coverageText(tt.covered, tt.blocks, tt.recent); got != tt.want {
			t.Errorf("coverageText(%d, %d, %d) = %q, want %q", tt.covered, tt.blocks, tt.recent, got, tt.want)
		}
	}
}

func TestProgressBarShowsCoverage(t *testing.T) {
	var b bytes.Buffer
	p := &ProgressBar{w: &b, tty: true}
	p.Update(Tally{Done: 3, Total: 10, Trial: &record.Trial{ID: "1-3"}, Covered: 150, Blocks: 261, RecentNew: 14})
	if !strings.Contains(b.String(), "3/10 trials, 0 failed, coverage 150/261 blocks (57.5%, +14 in the last 10 trials), ETA") {
		t.Errorf("progress line %q", b.String())
	}
	b.Reset()
	p.Update(Tally{Done: 3, Total: 10, Trial: &record.Trial{ID: "1-3"}})
	if strings.Contains(b.String(), "coverage") {
		t.Errorf("progress line without counters %q", b.String())
	}
}
