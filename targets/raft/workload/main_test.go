package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/workload"
)

func TestLoadConfig(t *testing.T) {
	c, err := loadConfig(func(string) string { return "" })
	if err != nil || c.KVConfig != (workload.KVConfig{Duration: 4 * time.Second, Recovery: 8 * time.Second, Keys: 5, Rate: 50, Port: "http"}) ||
		!slices.Equal(c.weights, defaultWeights) {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	for _, tc := range []struct {
		env     map[string]string
		weights []int
		err     string
	}{
		{env: map[string]string{"RAFT_WORKLOAD_KEYS": "0"}, err: "RAFT_WORKLOAD_KEYS"},
		{env: map[string]string{"RAFT_WORKLOAD_MIX": "put=1,restore=1"}, weights: []int{0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}},
		{env: map[string]string{"RAFT_WORKLOAD_MIX": "put=1,compact=1"}, err: "with ops get, leader-read"},
		{env: map[string]string{"RAFT_WORKLOAD_MIX": "transfer=0"}, err: "all weights are 0"},
	} {
		c, err := loadConfig(func(k string) string { return tc.env[k] })
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want %q", tc.env, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(c.weights, tc.weights)):
			t.Errorf("%v: weights %v, %v, want %v", tc.env, c.weights, err, tc.weights)
		}
	}
}

// TestDefaultMix: the default mix keeps the key-value shares of before
// (get 30 %, reads 10 % each, put 20 %, delete 5 %) and names every
// operation.
func TestDefaultMix(t *testing.T) {
	if len(defaultWeights) != len(opNames) {
		t.Fatalf("%d weights for %d operations", len(defaultWeights), len(opNames))
	}
	m := newAdmin([]string{"n1"}, &ledger{}).mix(defaultWeights)
	sum := m.Get + m.Put + m.Delete + m.CAS
	for _, r := range m.Reads {
		sum += r.Percent
	}
	for _, e := range m.Extra {
		if e.Percent == 0 || e.Run == nil {
			t.Errorf("extra %s: %+v", e.Name, e)
		}
		sum += e.Percent
	}
	if m.Total != 1000 || sum != m.Total || m.Get != 300 || m.Put != 200 || m.Delete != 50 {
		t.Errorf("default mix %+v sums to %d", m, sum)
	}
}

func TestCheckWrites(t *testing.T) {
	l := &ledger{acked: map[string]bool{"a#1": true, "a#2": true, "a#3": false, "a#4": false, "a#5": true}}
	st := &memberStatus{Index: 9, Writes: map[string]int{"a#1": 1, "a#2": 2, "a#4": 3}, Reapplied: 1}
	got := map[string]string{}
	for _, f := range checkWrites(st, l) {
		got[f.check] = f.msg
	}
	for check, want := range map[string]string{
		checkLost:      "1 acknowledged writes missing at index 9: a#5",
		checkTwice:     "2 writes applied more than once at index 9: a#2×2, a#4×3",
		checkReapplied: "1 log entries",
	} {
		if !strings.HasPrefix(got[check], want) {
			t.Errorf("%s: %q, want %q", check, got[check], want)
		}
	}
	// An unknown write may be missing; a clean member has no finding.
	clean := &memberStatus{Writes: map[string]int{"a#1": 1, "a#2": 1, "a#5": 1}}
	if fs := checkWrites(clean, l); len(fs) != 0 {
		t.Errorf("clean member: %v", fs)
	}
}
