package bench

import (
	"fmt"
	"math"
	"slices"
)

// The statistics of a bench, distribution-free so that they hold for
// trials-to-find whatever its distribution, and honest about misses: a
// seed that missed is right-censored at its campaign's trial cap (it would
// have found the bug later, or never), so it is sorted after every find
// and never given a value.

// Confidence is the confidence a bench's intervals aim at and the
// significance (1 − Confidence) below which a comparison names a winner.
const Confidence = 0.95

// halfBinomialCDF returns P(X ≤ k) for X ~ Binomial(n, 1/2): the chance
// that at most k of n fair coin flips come up heads.
func halfBinomialCDF(k, n int) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	}
	sum := 0.0
	for i := 0; i <= k; i++ {
		sum += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	return min(sum, 1)
}

// logChoose returns ln C(n, k).
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// medianCI returns a distribution-free confidence interval for the median
// of the population xs is a sample of, from its order statistics: with
// xs sorted, [x(l), x(n+1−l)] holds the median unless at least n+1−l of
// the n values fall on one side of it, so it covers the median with
// probability 1 − 2·P(X ≤ l−1), X ~ Binomial(n, 1/2), whatever the
// distribution. It picks the narrowest such interval whose coverage is at
// least Confidence; when even the widest ([min, max]) falls short (five
// values or fewer: 93.75% for five), it returns the widest with the
// coverage it has. Values may be +Inf (a miss: censored beyond the cap),
// which the order statistics handle as they are; the coverage is that of
// the interval, which a censored bound keeps. No values: ok is false.
func medianCI(xs []float64) (low, high, coverage float64, ok bool) {
	n := len(xs)
	if n == 0 {
		return 0, 0, 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	cover := func(l int) float64 { return 1 - 2*halfBinomialCDF(l-1, n) }
	l := 1
	for l+1 <= n+1-(l+1) && cover(l+1) >= Confidence {
		l++
	}
	return s[l-1], s[n-l], max(cover(l), 0), true
}

// signTest returns the two-sided p-value of the exact sign test: the
// chance, were each of the wins+losses differing pairs equally likely to
// go either way, of a split at least as uneven as wins to losses (ties
// are left out before). No pair: 1.
func signTest(wins, losses int) float64 {
	n := wins + losses
	if n == 0 {
		return 1
	}
	return min(1, 2*halfBinomialCDF(min(wins, losses), n))
}

// Interval is a confidence interval for the median fault trials to a
// bug's finding over the seeds that could find it: distribution-free,
// from the order statistics of those seeds' trials-to-find, a miss
// sorting after every find (medianCI).
type Interval struct {
	// Low and High bound the median, in fault trials. A bound that is a
	// miss is the cap with LowMissed or HighMissed set: it lies beyond
	// the cap (right-censored), and its true value is unknown.
	Low        int  `json:"low"`
	High       int  `json:"high"`
	LowMissed  bool `json:"low_missed,omitempty"`
	HighMissed bool `json:"high_missed,omitempty"`
	// Confidence is the chance the interval holds the median: at least
	// the package's Confidence, or less where the seeds are too few for
	// it (93.75% for five, the widest interval five values give).
	Confidence float64 `json:"confidence"`
	// Seeds is the number of seeds it rests on.
	Seeds int `json:"seeds"`
}

// trialsCI returns the interval of the outcomes' trials-to-find, misses
// censored at limit (the cap on fault trials); nil when no outcome could find the bug.
func trialsCI(outcomes []Outcome, limit int) *Interval {
	var xs []float64
	for _, o := range outcomes {
		switch {
		case o.Cannot:
		case o.Trial == 0:
			xs = append(xs, math.Inf(1))
		default:
			xs = append(xs, float64(o.Trial))
		}
	}
	low, high, coverage, ok := medianCI(xs)
	if !ok {
		return nil
	}
	bound := func(x float64) (int, bool) {
		if math.IsInf(x, 1) {
			return limit, true
		}
		return int(x), false
	}
	in := &Interval{Confidence: coverage, Seeds: len(xs)}
	in.Low, in.LowMissed = bound(low)
	in.High, in.HighMissed = bound(high)
	return in
}

// String writes the interval as "[3, 12] 94%", a censored bound as
// ">30".
func (in *Interval) String() string {
	bound := func(n int, missed bool) string {
		if missed {
			return fmt.Sprintf(">%d", n)
		}
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("[%s, %s] %.0f%%", bound(in.Low, in.LowMissed), bound(in.High, in.HighMissed), 100*in.Confidence)
}
