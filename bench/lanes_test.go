package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestLanes: jobs run k at once, each in a lane no other running job
// holds, the jobs of a key together and the keys in the order they first
// appear (a release's campaigns only while its build is the work dir's);
// k = 1 keeps the order within a key; an error stops the rest.
func TestLanes(t *testing.T) {
	type item struct {
		n   int
		key string
	}
	items := []item{{1, "a"}, {2, "b"}, {3, "a"}, {4, "a"}, {5, "b"}, {6, "c"}, {7, "a"}}
	for _, k := range []int{0, 1, 2, 3, 8} {
		t.Run(fmt.Sprint("k=", k), func(t *testing.T) {
			var mu sync.Mutex
			running, most := 0, 0
			held := map[int]bool{}
			var order []int
			var keys []string
			err := lanes(context.Background(), items, k, func(it item) string { return it.key }, func(_ context.Context, it item, lane int) error {
				mu.Lock()
				if held[lane] {
					t.Errorf("item %d got lane %d, held by another", it.n, lane)
				}
				if lane < 0 || lane >= max(1, k) {
					t.Errorf("item %d got lane %d of %d", it.n, lane, k)
				}
				held[lane] = true
				running++
				most = max(most, running)
				order = append(order, it.n)
				if len(keys) == 0 || keys[len(keys)-1] != it.key {
					keys = append(keys, it.key)
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				held[lane] = false
				running--
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"a", "b", "c"}; !slices.Equal(keys, want) {
				t.Errorf("keys ran %v, want each once, in order %v", keys, want)
			}
			if most > max(1, k) {
				t.Errorf("%d at once, want at most %d", most, max(1, k))
			}
			if k >= 2 && most < 2 {
				t.Errorf("never more than one at once with k=%d", k)
			}
			if k <= 1 && !slices.Equal(order, []int{1, 3, 4, 7, 2, 5, 6}) {
				t.Errorf("order %v, want the items of each key in order", order)
			}
			if len(order) != len(items) {
				t.Errorf("ran %v", order)
			}
		})
	}

	t.Run("error", func(t *testing.T) {
		boom := errors.New("boom")
		var mu sync.Mutex
		var ran []int
		err := lanes(context.Background(), items, 2, func(it item) string { return it.key }, func(ctx context.Context, it item, _ int) error {
			mu.Lock()
			ran = append(ran, it.n)
			mu.Unlock()
			if it.n == 3 {
				return boom
			}
			<-ctx.Done() // the others run until the error cancels them
			return ctx.Err()
		})
		if !errors.Is(err, boom) {
			t.Errorf("err %v, want boom", err)
		}
		slices.Sort(ran)
		if slices.Contains(ran, 2) || slices.Contains(ran, 6) {
			t.Errorf("ran %v: keys after the error's ran", ran)
		}
	})
}
