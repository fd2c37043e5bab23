package workload

import (
	"context"
	"log/slog"
	"os"
	"time"
)

// loadPoll is how often Load looks for the runner's end file.
const loadPoll = 50 * time.Millisecond

// Load returns the context of a workload's load: the requests that the
// trial's faults strike, before the workload verifies what it saw. The
// context ends after full, the load's configured length; or earlier, once
// the environment's LoadMin has passed, when the runner says the trial has
// what its checkers need (it creates the file GOFAULT_LOAD_END names:
// the fault struck and the cluster served on for the recovery bound and a
// progress bound past it, or no fault can strike; gofault's
// workload.adaptive_end). Without GOFAULT_LOAD_END (a run by hand,
// adaptive_end off) it ends after full. When the runner asks for a longer
// load (GOFAULT_LOAD_FULL, the calibration trial's: the load must outlast
// the failover it measures, and the runner ends it once measured), full
// is that.
//
// A load ended early ends as one ended on time: its requests cut short are
// not errors (Client.Do). Call cancel when the load is over.
func (t *T) Load(ctx context.Context, full time.Duration) (context.Context, context.CancelFunc) {
	full = max(full, t.env.LoadFull)
	lctx, cancel := context.WithTimeout(ctx, full)
	if t.env.LoadEnd == "" || t.env.LoadMin >= full {
		// No early end: not asked for, or the minimum is the whole load
		// (a timer of the full length would race the deadline).
		return lctx, cancel
	}
	start := time.Now()
	go func() {
		if !Sleep(lctx, t.env.LoadMin) {
			return
		}
		tick := time.NewTicker(loadPoll)
		defer tick.Stop()
		for {
			if _, err := os.Stat(t.env.LoadEnd); err == nil {
				slog.Info("workload: the runner ended the load early", "after", time.Since(start).Round(time.Millisecond), "full", full)
				cancel()
				return
			}
			select {
			case <-lctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return lctx, cancel
}
