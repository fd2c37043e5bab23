package config

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Auto is the YAML value of a Bound that gofault measures.
const Auto = "auto"

// Bound is a duration that gofault can measure instead of being told:
// "auto" or unset (zero) asks for it to be measured (checkers.progress is
// calibrated from a failover, see campaign.Calibrate); a positive duration
// such as "3s" is used as given.
type Bound time.Duration

// Auto reports whether the bound is left to gofault.
func (b Bound) Auto() bool { return b == 0 }

// Duration returns the bound as a duration, zero when it is Auto.
func (b Bound) Duration() time.Duration { return time.Duration(b) }

// String returns "auto" or the duration.
func (b Bound) String() string {
	if b.Auto() {
		return Auto
	}
	return time.Duration(b).String()
}

// UnmarshalYAML reads "auto" or a duration.
func (b *Bound) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && strings.EqualFold(strings.TrimSpace(n.Value), Auto) {
		*b = 0
		return nil
	}
	var d time.Duration
	if err := n.Decode(&d); err != nil {
		return fmt.Errorf("want %q or a duration: %w", Auto, err)
	}
	*b = Bound(d)
	return nil
}

// MarshalYAML writes "auto" or the duration.
func (b Bound) MarshalYAML() (any, error) { return b.String(), nil }
