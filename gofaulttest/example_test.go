package gofaulttest_test

import (
	"testing"

	"github.com/gofault/gofault/gofaulttest"
)

// A target module's test runs twenty trials of its profile with random
// faults and fails on findings; a second checks that a planted bug is
// caught (Recorder keeps the expected failure from failing the test).
func ExampleRun() {
	_ = func(t *testing.T) {
		gofaulttest.Run(t, "gofault.yaml", gofaulttest.Trials(20), gofaulttest.Policy("random"))
	}
	_ = func(t *testing.T) {
		rec := &gofaulttest.Recorder{TB: t}
		rec.Do(func() {
			gofaulttest.Run(rec, "gofault.yaml", gofaulttest.Trials(5), gofaulttest.Set("cluster.env.MINIKV_BUGS=split"))
		})
		if !rec.Failed() {
			t.Error("the planted bug went unnoticed")
		}
	}
}
