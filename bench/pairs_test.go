package bench

import (
	"testing"
)

// outcomes turns a row's seeds, written as trials-to-find (0 a miss, -1
// cannot), into outcomes of seeds 1..n.
func outcomes(trials ...int) []Outcome {
	var out []Outcome
	for i, n := range trials {
		o := Outcome{Seed: int64(i + 1)}
		switch {
		case n < 0:
			o.Cannot = true
		default:
			o.Trial = n
		}
		out = append(out, o)
	}
	return out
}

// TestCompare checks the paired comparison of two policies: who is sooner,
// ties, misses worse than any find, cannot left out, the median difference
// where both found, and the sign test's verdict.
func TestCompare(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b map[string][]int // per bug, a policy's seeds
		want Pair
	}{
		{
			name: "a sooner in every pair of two bugs: 6 of 6 is more than noise",
			a:    map[string][]int{"x": {1, 2, 3}, "y": {4, 5, 6}},
			b:    map[string][]int{"x": {2, 0, 9}, "y": {8, 0, 7}},
			want: Pair{A: "a", B: "b", Pairs: 6, Bugs: 2, AWins: 6, AOnly: 2, BothFound: 4, MedianDiff: -2.5, P: 2.0 / 64, Winner: "a"},
		},
		{
			name: "five of five is not: p 0.0625",
			a:    map[string][]int{"x": {1, 2, 3, 4, 5}},
			b:    map[string][]int{"x": {0, 0, 0, 0, 0}},
			want: Pair{A: "a", B: "b", Pairs: 5, Bugs: 1, AWins: 5, AOnly: 5, P: 2.0 / 32},
		},
		{
			name: "b wins; ties and both-missed dropped from the test",
			a:    map[string][]int{"x": {9, 9, 9, 9, 9, 9, 0, 3, 0, 9}},
			b:    map[string][]int{"x": {1, 1, 1, 1, 1, 1, 0, 3, 2, 2}},
			// 8 pairs differ, all b's: p = 2/256.
			want: Pair{A: "a", B: "b", Pairs: 10, Bugs: 1, BWins: 8, BOnly: 1, Ties: 2, BothMissed: 1, BothFound: 8, MedianDiff: 8, P: 2.0 / 256, Winner: "b"},
		},
		{
			name: "cannot is left out, not a loss; a bug only one ran counts nowhere",
			a:    map[string][]int{"x": {-1, -1, -1, -1, -1}, "y": {3, 0, 2, 4, 1}, "z": {1}},
			b:    map[string][]int{"x": {1, 2, 3, 4, 5}, "y": {-1, 4, 1, 4, 2}},
			// y: seed 1 cannot; 0 vs 4 b; 2 vs 1 b; 4 vs 4 tie; 1 vs 2 a.
			want: Pair{A: "a", B: "b", Pairs: 4, Bugs: 1, Cannot: 6, AWins: 1, BWins: 2, BOnly: 1, Ties: 1, BothFound: 3, MedianDiff: 0, P: 1},
		},
		{
			name: "no pair both could run",
			a:    map[string][]int{"x": {-1, -1}},
			b:    map[string][]int{"x": {1, 0}},
			want: Pair{A: "a", B: "b", Cannot: 2, P: 1},
		},
	} {
		var rows []Row
		for _, bug := range []string{"x", "y", "z"} {
			for _, p := range []struct {
				name  string
				seeds map[string][]int
			}{{"a", c.a}, {"b", c.b}} {
				if s, ok := p.seeds[bug]; ok {
					rows = append(rows, Row{Bug: bug, Policy: p.name, Outcomes: outcomes(s...)})
				}
			}
		}
		got := Compare(rows, []string{"a", "b"})
		if len(got) != 1 {
			t.Fatalf("%s: %d pairs", c.name, len(got))
		}
		g := got[0]
		if !near(g.P, c.want.P) {
			t.Errorf("%s: p %v, want %v", c.name, g.P, c.want.P)
		}
		g.P = c.want.P
		if g != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, g, c.want)
		}
	}
	if got := Compare(nil, []string{"a", "b", "c"}); len(got) != 3 || got[0].B != "b" || got[1].B != "c" || got[2].A != "b" {
		t.Errorf("three policies: %+v", got)
	}
	if got := Compare(nil, []string{"a"}); len(got) != 0 {
		t.Errorf("one policy compared: %+v", got)
	}
}
