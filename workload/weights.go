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
