package workload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gofault/gofault/record"
)

// DefaultSetupTimeout is how long Client.Setup keeps retrying unless
// Client.SetupTimeout says otherwise.
const DefaultSetupTimeout = 10 * time.Second

// Backoff between Setup's attempts: the first retry waits setupBackoffMin,
// each next one twice as long, up to setupBackoffMax.
const (
	setupBackoffMin = 50 * time.Millisecond
	setupBackoffMax = 250 * time.Millisecond
)

// Setup waits for the cluster: it runs fn — one attempt at an operation
// that can only succeed once the cluster is ready, such as connecting,
// creating a table or a stream, or finding a leader — until it succeeds,
// retrying with backoff (50 ms doubling to 250 ms), each attempt under the
// client's per-request Timeout.
//
// Failed attempts are expected while the cluster comes up (no leader yet)
// and are NOT reported: a workload that waits through Do instead reports
// every attempt as a client error, which the hang and gray-failure checkers
// take for a failing node. Success is reported as progress (what). Only a
// Setup that gives up reports, once, an error naming what, the attempts and
// the last failure — the trial then shows the workload could not set up.
// It gives up when SetupTimeout (DefaultSetupTimeout when zero) has passed
// since the call, or when ctx's own deadline has passed, whichever is
// first. When ctx is cancelled (the caller stopped waiting: another node
// answered first, the phase is over) or the workload's deadline has passed,
// nothing is reported: that says nothing about the system.
//
// Use Setup for what the workload needs before its measured phases; use Do
// and DoOp for the requests the checkers should judge.
func (c *Client) Setup(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	start := time.Now()
	timeout := c.SetupTimeout
	if timeout <= 0 {
		timeout = DefaultSetupTimeout
	}
	sctx, cancel := context.WithDeadline(ctx, start.Add(timeout))
	defer cancel()
	var err error
	attempts := 0
	for {
		attempts++
		rctx, rcancel := c.requestContext(sctx)
		err = fn(rctx)
		rcancel()
		if err == nil {
			// Sent at the first attempt: the client was asking since.
			c.emit(record.ClientEvent{Kind: record.EvProgress, Msg: what, Sent: start})
			return nil
		}
		if sctx.Err() != nil || !Sleep(sctx, setupBackoff(attempts)) {
			break
		}
	}
	err = fmt.Errorf("%s: gave up after %d attempts in %s: %w", what, attempts, time.Since(start).Round(time.Millisecond), err)
	if reportSetupFailure(ctx.Err(), c.t.context().Err()) {
		c.emit(record.ClientEvent{Kind: record.EvError, Msg: err.Error()})
	}
	return err
}

// setupBackoff is the wait after the attempt-th failed attempt (1-based).
func setupBackoff(attempt int) time.Duration {
	d := setupBackoffMin
	for i := 1; i < attempt && d < setupBackoffMax; i++ {
		d *= 2
	}
	return min(d, setupBackoffMax)
}

// reportSetupFailure decides whether a Setup that gave up is reported as a
// client error, given the error of the caller's context and of the
// workload's: yes when Setup's own timeout or the caller's deadline ended
// it; no when the caller cancelled the wait or the whole workload is over
// (its timeout is reported on its own).
func reportSetupFailure(callerErr, workloadErr error) bool {
	switch {
	case workloadErr != nil:
		return false
	case errors.Is(callerErr, context.Canceled):
		return false
	}
	return true
}
