package bench

import (
	"context"
	"slices"

	"golang.org/x/sync/errgroup"
)

// lanes runs the jobs of items, up to k at once, each in a lane (0..k-1)
// no other job holds while it runs, so that a job can keep its own files
// in its lane's directory. Jobs of one key run together and the keys one
// after another, in the order each key first appears: a bench's releases
// build into one work dir binary, so the campaigns of a release run only
// while its build is the one there. k ≤ 1 runs every job in lane 0, one
// after another, in order. The first error cancels the rest (their
// context) and is returned once every running job has returned.
func lanes[T any](ctx context.Context, items []T, k int, key func(T) string, job func(ctx context.Context, it T, lane int) error) error {
	var keys []string
	byKey := map[string][]T{}
	for _, it := range items {
		kk := key(it)
		if _, ok := byKey[kk]; !ok {
			keys = append(keys, kk)
		}
		byKey[kk] = append(byKey[kk], it)
	}
	k = max(1, k)
	free := make(chan int, k)
	for l := range k {
		free <- l
	}
	for _, kk := range keys {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(k)
		for _, it := range slices.Clone(byKey[kk]) {
			if gctx.Err() != nil {
				break
			}
			g.Go(func() error {
				lane := <-free
				defer func() { free <- lane }()
				return job(gctx, it, lane)
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}
