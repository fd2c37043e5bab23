package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// ParseWeights reads a mix variable's value, "op=weight,…" (etcd's
// ETCD_WORKLOAD_MIX syntax): each op one of ops, each weight a
// non-negative integer, ops not named weigh 0. It returns the weights in
// ops order; name (the variable) goes in the error, which also lists ops.
// A value whose weights are all 0 is refused.
func ParseWeights(name, value string, ops []string) ([]int, error) {
	w := make([]int, len(ops))
	total := 0
	for _, part := range strings.Split(value, ",") {
		op, weight, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(weight)
		i := slices.Index(ops, op)
		if !ok || err != nil || n < 0 || i < 0 {
			return nil, fmt.Errorf("%s=%q: want op=weight,… with ops %s", name, value, strings.Join(ops, ", "))
		}
		w[i] = n
		total += n
	}
	if total == 0 {
		return nil, fmt.Errorf("%s=%q: all weights are 0", name, value)
	}
	return w, nil
}

// FormatWeights is ParseWeights' inverse: "op=weight,…" of the ops whose
// weight is not 0, for logs.
func FormatWeights(ops []string, weights []int) string {
	var parts []string
	for i, w := range weights {
		if w > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", ops[i], w))
		}
	}
	return strings.Join(parts, ",")
}

// PickWeighted draws an index of weights, each as likely as its weight
// (weights as ParseWeights returns them: none negative, not all 0).
func PickWeighted(rng *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	r := rng.IntN(total)
	for i, w := range weights {
		if r < w {
			return i
		}
		r -= w
	}
	return 0
}

// Deck deals a mix's operations to one client: first every operation
// whose weight is not 0, in random order — operation i times[i] times
// (once where times is short or holds 0) — then operations drawn by
// weight. A client that draws from a Deck makes every kind of request
// early in every trial, however rare its weight, so a site reached only
// by a rare request is reached in every trial, and a test can count on
// each kind at each client.
type Deck struct {
	rng     *rand.Rand
	weights []int
	opening []int
}

// NewDeck returns a Deck of weights (as ParseWeights returns them) that
// draws with rng.
func NewDeck(rng *rand.Rand, weights, times []int) *Deck {
	var opening []int
	for i, w := range weights {
		if w == 0 {
			continue
		}
		n := 1
		if i < len(times) && times[i] > 0 {
			n = times[i]
		}
		for range n {
			opening = append(opening, i)
		}
	}
	rng.Shuffle(len(opening), func(a, b int) { opening[a], opening[b] = opening[b], opening[a] })
	return &Deck{rng: rng, weights: weights, opening: opening}
}

// Next returns the next operation's index.
func (d *Deck) Next() int {
	if len(d.opening) > 0 {
		i := d.opening[0]
		d.opening = d.opening[1:]
		return i
	}
	return PickWeighted(d.rng, d.weights)
}
