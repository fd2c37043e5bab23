package main

import (
	"strings"
	"testing"

	"github.com/gofault/gofault/campaign"
)

func TestParallelFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		zero    bool // accepted as 0: only with --queue (check)
		wantErr bool
	}{
		{"auto", campaign.ParallelAuto, false, false},
		{"Auto", campaign.ParallelAuto, false, false},
		{"3", 3, false, false},
		{"0", 0, true, false},
		{"-1", 0, false, true},
		{"two", 0, false, true},
	}
	for _, tc := range tests {
		var p parallel
		err := p.Set(tc.in)
		if (err != nil) != tc.wantErr || p.n != tc.want || p.zero != tc.zero {
			t.Errorf("--parallel %s: %+v, %v; want %d (zero %v), error %v", tc.in, p, err, tc.want, tc.zero, tc.wantErr)
		}
		if err == nil && p.String() != strings.ToLower(tc.in) {
			t.Errorf("--parallel %s prints as %q", tc.in, p.String())
		}
		if cerr := p.check(false); (cerr != nil) != tc.zero {
			t.Errorf("--parallel %s without --queue: %v", tc.in, cerr)
		}
		if cerr := p.check(true); cerr != nil {
			t.Errorf("--parallel %s with --queue: %v", tc.in, cerr)
		}
	}
	var unset parallel
	if err := unset.check(false); err != nil || unset.String() != "" {
		t.Errorf("--parallel not given: %v, %q", err, unset.String())
	}
	if p := (parallel{n: campaign.ParallelAuto}); p.String() != "auto" {
		t.Errorf("auto prints as %q", p.String())
	}
}
