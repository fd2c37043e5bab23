// Package raft_test runs short real gofault campaigns on the hashicorp/raft
// profile (gofault.yaml): the instrumented service built from the module
// proxy, three members per trial, the workload and every checker.
package raft_test

import (
	"testing"

	"github.com/gofault/gofault/targettest"
)

// TestCampaigns runs a fault-free campaign, which must report nothing,
// and a short campaign with random faults, which must run every trial to
// its end (its findings are judged by a person, not here). About a minute on 2
// cores.
func TestCampaigns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hashicorp/raft instrumented and runs real clusters")
	}
	// A fixed progress bound skips the calibration trial; 5 s is what it
	// chooses here (a failover of about 1.4 s measured, under the floor of
	// 5 × the profile's 1 s election timer: docs/checkers.md).
	targettest.Campaigns(t, targettest.Options{Set: []string{"checkers.progress=5s"}})
}
