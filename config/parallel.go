package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parallel is trials.parallel: how many clusters a campaign runs at once.
// "auto" or unset (zero) lets the campaign choose from the machine's cores
// and free memory and the cluster's size (docs/performance.md); a
// positive number is used as given.
type Parallel int

// Auto reports whether the campaign chooses.
func (p Parallel) Auto() bool { return p == 0 }

// String returns "auto" or the number.
func (p Parallel) String() string {
	if p.Auto() {
		return Auto
	}
	return strconv.Itoa(int(p))
}

// ParseParallel reads "auto" or a number of clusters (at least 1).
func ParseParallel(s string) (Parallel, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, Auto) {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want %q or a number of clusters of at least 1, got %q", Auto, s)
	}
	return Parallel(n), nil
}

// UnmarshalYAML reads "auto" or a number.
func (p *Parallel) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && strings.EqualFold(strings.TrimSpace(n.Value), Auto) {
		*p = 0
		return nil
	}
	var v int
	if err := n.Decode(&v); err != nil {
		return fmt.Errorf("want %q or a number: %w", Auto, err)
	}
	*p = Parallel(v)
	return nil
}

// MarshalYAML writes "auto" or the number.
func (p Parallel) MarshalYAML() (any, error) {
	if p.Auto() {
		return Auto, nil
	}
	return int(p), nil
}
