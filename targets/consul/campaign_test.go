// Package consul_test runs short real gofault campaigns on the Consul
// profile (gofault.yaml): three Consul servers built from the module proxy
// with Consul's FSM, hashicorp/raft and raft-boltdb instrumented, the
// workload and every checker.
package consul_test

import (
	"testing"

	"github.com/gofault/gofault/targettest"
)

// TestCampaigns runs a fault-free campaign, which must report nothing,
// and a short campaign with random faults, which must run every trial to
// its end (its findings are judged by a person, not here). About three
// minutes on 2 cores from an empty build cache, most of it building Consul.
func TestCampaigns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Consul instrumented and runs real clusters")
	}
	// A fixed progress bound skips the calibration trial: a failover
	// measured 1.5 to 1.8 s here, so the calibrated bound is 3 to 3.6 s.
	targettest.Campaigns(t, targettest.Options{Set: []string{"checkers.progress=4s"}})
}
