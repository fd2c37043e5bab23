package gofaulttest

import (
	"strings"
	"testing"

	"github.com/gofault/gofault/campaign"
)

func TestVerdict(t *testing.T) {
	tests := []struct {
		name string
		sum  campaign.Summary
		want []string // substrings, one per failure
	}{
		{"clean", campaign.Summary{Trials: 20, FailedTrials: 0}, nil},
		{"fault-free failures are not findings", campaign.Summary{Trials: 20, FaultFreeFailures: 1}, nil},
		{"findings", campaign.Summary{Trials: 20, FailedTrials: 3, Findings: 2}, []string{"2 findings in 20 trials"}},
		{"trials that could not run", campaign.Summary{Trials: 5, ErrorTrials: 5}, []string{"5 of 5 trials could not run"}},
		{"stopped", campaign.Summary{Trials: 3, Findings: 1, Stopped: true}, []string{"1 findings", "stopped after 3 trials"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Verdict(&tt.sum)
			if len(got) != len(tt.want) {
				t.Fatalf("Verdict = %q, want %d failures like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("failure %d = %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}

func TestCampaignBadConfig(t *testing.T) {
	rec := &Recorder{TB: t}
	rec.Do(func() { Run(rec, "testdata/no-such.yaml", Trials(1)) })
	if !rec.FailedNow || !strings.Contains(strings.Join(rec.Errors, "\n"), "gofault config") {
		t.Errorf("a missing config: fatal %v, errors %q; want a fatal config error", rec.FailedNow, rec.Errors)
	}
}
