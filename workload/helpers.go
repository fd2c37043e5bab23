package workload

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Sleep waits d or until ctx ends; it reports whether the full d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Each runs fn for every item concurrently, waits for all of them and
// returns their errors joined: what a workload does with its one client
// per node in each phase.
func Each[T any](items []T, fn func(T) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(items))
	for i, it := range items {
		wg.Go(func() { errs[i] = fn(it) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
