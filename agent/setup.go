package agent

import "sync/atomic"

// setupDepth counts the calls of test setup functions (gofault test's
// test.setup) running in the process, in any goroutine.
var setupDepth atomic.Int64

// SetupEnter marks the start of a call of a test setup function: a
// helper of the tests that builds what they test (a cluster, a server
// started and waited for), named by gofault test's test.setup. Until the
// matching SetupExit, no request of the process, in any goroutine, reaches
// the controller, so no fault strikes and none is counted as a site a
// fault may strike: a server that a helper starts runs its start-up in
// goroutines of its own, which no stack shows to be setup. The build puts
// "SetupEnter(); defer SetupExit()" at the entry of each such function.
func SetupEnter() { setupDepth.Add(1) }

// SetupExit marks the end of the call that SetupEnter marked the start
// of (deferred, so a panic ends it too).
func SetupExit() { setupDepth.Add(-1) }

// inSetup reports whether a test setup function is running.
func inSetup() bool { return setupDepth.Load() > 0 }
