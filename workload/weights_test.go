package workload

import (
	"slices"
	"strings"
	"testing"
)

func TestParseWeights(t *testing.T) {
	ops := []string{"get", "put", "snapshot"}
	for _, tc := range []struct {
		value string
		want  []int
		err   string
	}{
		{value: "get=3,put=2,snapshot=1", want: []int{3, 2, 1}},
		{value: " put=5 , get=0", want: []int{0, 5, 0}},
		{value: "get=1,get=4", want: []int{4, 0, 0}},
		{value: "get=0,put=0", err: "all weights are 0"},
		{value: "restore=1", err: "with ops get, put, snapshot"},
		{value: "get=-1", err: "want op=weight"},
		{value: "get", err: "want op=weight"},
		{value: "get=x", err: "want op=weight"},
	} {
		w, err := ParseWeights("MIX", tc.value, ops)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.value, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(w, tc.want)):
			t.Errorf("%q = %v, %v, want %v", tc.value, w, err, tc.want)
		}
	}
	if got := FormatWeights(ops, []int{3, 0, 1}); got != "get=3,snapshot=1" {
		t.Errorf("FormatWeights = %q", got)
	}
}
