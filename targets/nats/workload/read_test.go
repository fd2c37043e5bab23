package main

import (
	"testing"
	"time"
)

// TestReadTimeout: every read attempt gets a share of the time left before
// the workload's deadline, so that the read phase, and the digest after
// it, end in time even when every attempt runs out.
func TestReadTimeout(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	conv := 5 * time.Second
	for _, tc := range []struct {
		name     string
		deadline time.Time
		left     int
		want     time.Duration
	}{
		{"no deadline", time.Time{}, 6, maxReadTimeout},
		{"plenty of time: the cap", now.Add(2 * time.Minute), 6, maxReadTimeout},
		{"an equal share", now.Add(36 * time.Second), 6, 5 * time.Second},
		{"the last attempt gets what is left", now.Add(12 * time.Second), 1, 6 * time.Second},
		{"at least a second", now.Add(5 * time.Second), 6, time.Second},
		{"past the deadline", now.Add(-time.Second), 3, time.Second},
		{"no attempt left", now.Add(time.Minute), 0, maxReadTimeout},
	} {
		if got := readTimeout(now, tc.deadline, conv, tc.left); got != tc.want {
			t.Errorf("%s: readTimeout = %v, want %v", tc.name, got, tc.want)
		}
	}
}
