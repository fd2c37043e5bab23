// Package agent is the runtime that gofault compiles into an instrumented
// program. Generated code calls its hooks; the agent asks the campaign
// controller for decisions over one persistent connection.
//
// The agent is fail-open: without GOFAULT_CONTROLLER, or once the controller
// is unreachable, every hook returns at once and the program runs as if it
// were not instrumented.
package agent

import "time"

// Fault is the hook at fault site site (the catalog index). It returns 0 when
// the real call must run — possibly after an injected delay, which Fault
// sleeps itself — or k ≥ 1 when the generated code must skip the call and
// return the site's k-th realistic error value instead.
func Fault(site uint32) int { return 0 }

// State records that the calling goroutine, running instance inst of task
// unit task, entered abstract state state.
func State(task, state uint32, inst uintptr) {}

// Timeout reports that site uses timeout d and returns d, so it can wrap the
// expression that computes a timeout.
func Timeout(site uint32, d time.Duration) time.Duration { return d }
