package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/workload"
)

func TestLoadConfig(t *testing.T) {
	c, err := loadConfig(func(string) string { return "" })
	if err != nil || c != (workload.KVConfig{Duration: 4 * time.Second, Recovery: 8 * time.Second, Keys: 5, Rate: 50, Port: "http"}) {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	env := map[string]string{"RAFT_WORKLOAD_KEYS": "0"}
	if _, err := loadConfig(func(k string) string { return env[k] }); err == nil {
		t.Error("0 keys accepted")
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
