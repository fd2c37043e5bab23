package workload

import (
	"math/rand/v2"
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

// TestPickWeighted: each index is drawn about as often as its weight, and
// one of weight 0 never.
func TestPickWeighted(t *testing.T) {
	weights := []int{3, 0, 1}
	rng := rand.New(rand.NewPCG(1, 2))
	got := make([]int, len(weights))
	for range 4000 {
		got[PickWeighted(rng, weights)]++
	}
	if got[1] != 0 || got[0] < 2800 || got[0] > 3200 || got[2] < 800 || got[2] > 1200 {
		t.Errorf("4000 draws by weights %v: %v", weights, got)
	}
}

func TestDeck(t *testing.T) {
	for _, tc := range []struct {
		weights, times []int
		opening        []int // counts of each index in the opening
	}{
		{[]int{3, 0, 1}, nil, []int{1, 0, 1}},
		{[]int{3, 0, 1}, []int{0, 5, 4}, []int{1, 0, 4}},
		{[]int{90, 5, 2, 3}, []int{1, 1}, []int{1, 1, 1, 1}},
	} {
		for seed := range uint64(20) {
			d := NewDeck(rand.New(rand.NewPCG(seed, 2)), tc.weights, tc.times)
			n := 0
			for _, c := range tc.opening {
				n += c
			}
			got := make([]int, len(tc.weights))
			for range n {
				got[d.Next()]++
			}
			if !slices.Equal(got, tc.opening) {
				t.Fatalf("weights %v times %v seed %d: opening %v, want %v", tc.weights, tc.times, seed, got, tc.opening)
			}
			for range 200 {
				if i := d.Next(); tc.weights[i] == 0 {
					t.Fatalf("weights %v: drew %d after the opening", tc.weights, i)
				}
			}
		}
	}
	// The opening's order is random: over 20 seeds the first card differs.
	first := map[int]bool{}
	for seed := range uint64(20) {
		first[NewDeck(rand.New(rand.NewPCG(seed, 2)), []int{1, 1, 1, 1}, nil).Next()] = true
	}
	if len(first) < 2 {
		t.Errorf("the opening always starts with %v", first)
	}
}
