package record

import "testing"

func TestTrialID(t *testing.T) {
	for _, tc := range []struct {
		id       string
		campaign int64
		index    int
		ok       bool
	}{
		{TrialID(3, 17), 3, 17, true},
		{TrialID(1, 0), 1, 0, true},
		{"12-x", 0, 0, false},
		{"x-1", 0, 0, false},
		{"7", 0, 0, false},
		{"-1-2", 0, 0, false},
		{"", 0, 0, false},
	} {
		c, i, ok := ParseTrialID(tc.id)
		if c != tc.campaign || i != tc.index || ok != tc.ok {
			t.Errorf("ParseTrialID(%q) = %d, %d, %v; want %d, %d, %v", tc.id, c, i, ok, tc.campaign, tc.index, tc.ok)
		}
	}
	if TrialID(3, 17) != "3-17" {
		t.Errorf("TrialID(3, 17) = %q", TrialID(3, 17))
	}
}
