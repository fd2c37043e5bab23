package bench

import (
	"math"
	"testing"
)

// near reports whether a and b agree to 1e-9.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestHalfBinomialCDF checks the binomial tail against exact fractions.
func TestHalfBinomialCDF(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want float64
	}{
		{0, 5, 1.0 / 32},
		{1, 5, 6.0 / 32},
		{2, 5, 16.0 / 32},
		{1, 10, 11.0 / 1024},
		{2, 12, 79.0 / 4096},
		{5, 20, 21700.0 / 1048576},
		{-1, 5, 0},
		{5, 5, 1},
		{0, 1, 0.5},
		{30, 100, 3.925069822796835e-05}, // sum of C(100, 0..30) / 2^100
	} {
		got := halfBinomialCDF(c.k, c.n)
		if math.Abs(got-c.want) > 1e-9*max(c.want, 1e-3) {
			t.Errorf("P(X ≤ %d), n %d: %g, want %g", c.k, c.n, got, c.want)
		}
	}
}

// TestSignTest checks the exact two-sided sign test against known values.
func TestSignTest(t *testing.T) {
	for _, c := range []struct {
		wins, losses int
		want         float64
	}{
		{9, 1, 2 * 11.0 / 1024},  // 0.0215
		{2, 10, 2 * 79.0 / 4096}, // 0.0386
		{5, 0, 2.0 / 32},         // 0.0625: five of five is not enough
		{6, 0, 2.0 / 64},         // 0.03125: six of six is
		{3, 3, 1},
		{4, 3, 1},
		{0, 0, 1},
		{15, 5, 2 * 21700.0 / 1048576}, // 0.0414
	} {
		if got := signTest(c.wins, c.losses); !near(got, c.want) {
			t.Errorf("signTest(%d, %d) = %g, want %g", c.wins, c.losses, got, c.want)
		}
	}
}

// TestMedianCI checks the order statistics each sample size picks and
// their coverage (the binomial table of a median's confidence interval),
// and that misses (+Inf) sort after every find.
func TestMedianCI(t *testing.T) {
	inf := math.Inf(1)
	seq := func(n int) []float64 {
		var xs []float64
		for i := n; i >= 1; i-- { // unsorted on purpose
			xs = append(xs, float64(i))
		}
		return xs
	}
	for _, c := range []struct {
		name           string
		xs             []float64
		low, high, cov float64
	}{
		{"one", []float64{4}, 4, 4, 0},
		{"two", []float64{7, 3}, 3, 7, 0.5},
		{"five: min and max at 93.75%", []float64{9, 2, 30, 4, 6}, 2, 30, 1 - 2.0/32},
		{"six: min and max at 96.9%", seq(6), 1, 6, 1 - 2.0/64},
		{"ten: 2nd and 9th", seq(10), 2, 9, 1 - 2*11.0/1024},
		{"twenty: 6th and 15th", seq(20), 6, 15, 1 - 2*21700.0/1048576},
		{"misses sort last", []float64{inf, 3, inf, 5, 8}, 3, inf, 1 - 2.0/32},
		{"all missed", []float64{inf, inf, inf, inf, inf}, inf, inf, 1 - 2.0/32},
	} {
		low, high, cov, ok := medianCI(c.xs)
		if !ok || low != c.low || high != c.high || !near(cov, c.cov) {
			t.Errorf("%s: [%v, %v] at %v (%v), want [%v, %v] at %v", c.name, low, high, cov, ok, c.low, c.high, c.cov)
		}
	}
	if _, _, _, ok := medianCI(nil); ok {
		t.Error("an interval of no values")
	}
}

// TestTrialsCI checks the interval of a row's outcomes: cannot left out,
// a miss a bound beyond the cap, as the table writes it.
func TestTrialsCI(t *testing.T) {
	for _, c := range []struct {
		name  string
		seeds []int // trials-to-find; 0 a miss, -1 cannot
		want  string
	}{
		{"finds", []int{4, 2, 9, 3, 5}, "[2, 9] 94%"},
		{"upper bound censored", []int{4, 0, 9, 0, 5}, "[4, >10] 94%"},
		{"all missed", []int{0, 0, 0, 0, 0}, "[>10, >10] 94%"},
		{"cannot left out", []int{-1, 4, -1, 0, 5, 6, 7, 8, 3}, "[3, >10] 98%"},
	} {
		got := trialsCI(outcomes(c.seeds...), 10)
		if got == nil || got.String() != c.want {
			t.Errorf("%s: %v, want %s", c.name, got, c.want)
		}
	}
	if got := trialsCI(outcomes(-1, -1), 10); got != nil {
		t.Errorf("no seed could: %v", got)
	}
}
