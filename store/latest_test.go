package store

import "testing"

func TestLatestCampaign(t *testing.T) {
	camp := func(id int64, policy string) *Campaign { return &Campaign{ID: id, Policy: policy} }
	tests := []struct {
		name  string
		camps []*Campaign
		ran   map[int64]int
		want  int64
	}{
		{"none", nil, nil, 0},
		{"newest with trials", []*Campaign{camp(1, "bsrr"), camp(2, "bsrr")}, map[int64]int{1: 5, 2: 3}, 2},
		{"failed before any trial ran is skipped", []*Campaign{camp(1, "bsrr"), camp(2, "bsrr")}, map[int64]int{1: 5}, 1},
		{"replays are skipped", []*Campaign{camp(1, "bsrr"), camp(2, "replay")}, map[int64]int{1: 5, 2: 1}, 1},
		{"no campaign has trials: the newest", []*Campaign{camp(1, "bsrr"), camp(2, "random"), camp(3, "replay")}, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Latest(tt.camps, tt.ran); got != tt.want {
				t.Errorf("Latest = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestReportDismissed: gofault report --dismissed lists what each log rule
// dismissed in the campaign's stored trials, as text and as JSON.
