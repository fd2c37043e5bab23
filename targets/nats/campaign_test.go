// Package nats_test runs short real gofault campaigns on the NATS
// JetStream profile (gofault.yaml): nats-server's server package
// instrumented, built from the module proxy, three servers per trial, the
// workload and every checker.
package nats_test

import (
	"testing"

	"github.com/gofault/gofault/targettest"
)

// TestCampaigns runs a fault-free campaign, which must report nothing,
// and a short campaign with random faults, which must run every trial to
// its end (its findings are judged by a person, not here). About two
// minutes on 2 cores, most of it building the instrumented server.
func TestCampaigns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nats-server instrumented and runs real clusters")
	}
	targettest.Campaigns(t, targettest.Options{})
}
