package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gofault/gofault/campaign"
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
	p := &progressBar{w: &b, tty: true}
	p.update(campaign.Tally{Done: 3, Total: 10, Trial: &record.Trial{ID: "1-3"}, Covered: 150, Blocks: 261, RecentNew: 14})
	if !strings.Contains(b.String(), "3/10 trials, 0 failed, coverage 150/261 blocks (57.5%, +14 in the last 10 trials), ETA") {
		t.Errorf("progress line %q", b.String())
	}
	b.Reset()
	p.update(campaign.Tally{Done: 3, Total: 10, Trial: &record.Trial{ID: "1-3"}})
	if strings.Contains(b.String(), "coverage") {
		t.Errorf("progress line without counters %q", b.String())
	}
}

// TestParallelFlag: run's --parallel takes 0 only with --queue (the
// workers run the trials), and never a negative count.
func TestParallelFlag(t *testing.T) {
	for _, tc := range []struct {
		value   string
		queue   bool
		wantErr bool
	}{
		{"0", true, false},
		{"0", false, true},
		{"3", false, false},
		{"3", true, false},
		{"-1", true, true},
		{"two", true, true},
	} {
		var p parallelFlag
		err := p.Set(tc.value)
		if err == nil {
			err = p.check(tc.queue)
		}
		if (err != nil) != tc.wantErr {
			t.Errorf("--parallel %s (queue %v): %v, want error %v", tc.value, tc.queue, err, tc.wantErr)
		}
	}
	var unset parallelFlag
	if err := unset.check(false); err != nil {
		t.Errorf("--parallel not given: %v", err)
	}
}
