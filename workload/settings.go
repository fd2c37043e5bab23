package workload

import (
	"fmt"
	"strconv"
	"time"
)

// Settings reads a workload's own tuning variables (beside the workload
// contract), e.g. how long to drive the cluster or how many keys to use.
// Each getter returns the default when the variable is unset; a malformed
// value is recorded — the first such error is returned by Err, naming the
// variable and the form it wants — and the default is returned.
type Settings struct {
	getenv func(string) string
	err    error
}

// NewSettings reads variables with getenv (os.Getenv, or a map in tests).
func NewSettings(getenv func(string) string) *Settings { return &Settings{getenv: getenv} }

// Duration returns the positive duration in variable name, or def.
func (s *Settings) Duration(name string, def time.Duration) time.Duration {
	v := s.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		s.fail(fmt.Errorf("%s=%q: want a positive duration like 3s", name, v))
		return def
	}
	return d
}

// Int returns the positive integer in variable name, or def.
func (s *Settings) Int(name string, def int) int {
	v := s.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		s.fail(fmt.Errorf("%s=%q: want a positive integer", name, v))
		return def
	}
	return n
}

// String returns variable name, or def when it is unset.
func (s *Settings) String(name, def string) string {
	if v := s.getenv(name); v != "" {
		return v
	}
	return def
}

// Err returns the first malformed variable, or nil.
func (s *Settings) Err() error { return s.err }

func (s *Settings) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}
