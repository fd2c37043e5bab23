package main

import (
	"testing"

	"github.com/gofault/gofault/campaign"
)

func TestParallelFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    parallel
		wantErr bool
	}{
		{"auto", campaign.ParallelAuto, false},
		{"Auto", campaign.ParallelAuto, false},
		{"3", 3, false},
		{"0", 0, true},
		{"-1", 0, true},
		{"two", 0, true},
	}
	for _, tc := range tests {
		var p parallel
		err := p.Set(tc.in)
		if (err != nil) != tc.wantErr || p != tc.want {
			t.Errorf("--parallel %s: %d, %v; want %d, error %v", tc.in, p, err, tc.want, tc.wantErr)
		}
	}
	if p := parallel(campaign.ParallelAuto); p.String() != "auto" {
		t.Errorf("auto prints as %q", p.String())
	}
}
