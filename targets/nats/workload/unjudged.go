package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// setupOrGiveUp runs setup and decides what its failure means: "" and
// nil when the workload can go on to its load; a reason and nil when the
// trial cannot be judged (see docs/workloads.md, "Not judged"):
//
//   - the cluster cannot host the workload's streams by nats-server's
//     design (meta.go: a server stopped its meta layer on a write error or
//     turned JetStream off); each server's client then reports the server
//     unhealthy, as the server itself says;
//   - the streams or consumers could not be created even after every
//     server was given the recovery bound (NATS_WORKLOAD_RECOVERY) to take
//     them: the fault may have held the setup, so the workload has nothing
//     to judge, and whether the cluster served again after the fault ended
//     is the recovery checker's to judge, from the setup's own tries;
//   - the setup needed that retry and ended so late that the load and its
//     checks no longer fit before the workload's deadline (a timeout would
//     be a false finding). A setup that did not need it goes on whatever
//     the time, as it always did: a workload.timeout too short for the
//     load and its checks must not leave every trial unjudged.
//
// Any other error (a server that cannot even be connected to, the
// deadline) fails the setup phase.
func setupOrGiveUp(ctx context.Context, clients []*client) (string, error) {
	retried, err := setup(ctx, clients)
	var oe *outageError
	if errors.As(err, &oe) {
		for _, c := range clients {
			c.wc.Health(false, oe.why)
		}
	}
	left := time.Duration(-1)
	if deadline, ok := ctx.Deadline(); ok {
		left = time.Until(deadline)
	}
	return unjudged(clients[0].cfg, err, retried, left)
}

// unjudged decides what setup's result means (see setupOrGiveUp), given
// whether the setup retried its creation and the time left before the
// workload's deadline (negative: none).
func unjudged(cfg config, err error, retried bool, left time.Duration) (string, error) {
	var oe *outageError
	var se *setupError
	switch {
	case errors.As(err, &oe):
		return oe.Error(), nil
	case errors.As(err, &se):
		return se.Error(), nil
	case err != nil:
		return "", err
	case retried && left >= 0:
		return tooLate(cfg, left), nil
	}
	return "", nil
}

// readMargin is what the read phase is allowed beyond the converge wait
// when tooLate decides whether the rest of the workload fits.
const readMargin = 5 * time.Second

// tooLate says why the load and its checks no longer fit in left, the
// time before the workload's deadline: they need the load, the recovery
// bound, the read phase and the converge wait; "" when they fit.
func tooLate(cfg config, left time.Duration) string {
	need := cfg.duration + cfg.recovery + readMargin + cfg.converge
	if left >= need {
		return ""
	}
	return fmt.Sprintf("the setup ended %s before the workload's deadline, too late for the load and its checks (they need %s)",
		left.Round(time.Millisecond), need)
}

// setupError says that the setup could not create the workload's streams
// or consumers, even with the recovery bound to retry through every
// server.
type setupError struct {
	first, retry error
	recovery     time.Duration
}

func (e *setupError) Error() string {
	return fmt.Sprintf("the cluster refused the workload's streams or consumers: %v; retried through every server for %s: %v "+
		"(the fault may have held the setup; the recovery checker judges whether the servers served again after it)",
		e.first, e.recovery, e.retry)
}
