package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// slots is a Remote of n slots that runs nothing (Schedule.Begin runs
// the trial either way).
type slots int

func (s slots) Slots() int { return int(s) }
func (slots) Run(context.Context, RemoteJob) (*RemoteResult, error) {
	return nil, errors.New("not used")
}

// TestRunInOrder: with InOrder, Done takes the trials in the order of i
// whatever order they end in (later ones end first here), one at a time;
// Begin is called in order.
func TestRunInOrder(t *testing.T) {
	var begun, done []int
	var mu sync.Mutex
	err := Run(context.Background(), Schedule[int]{
		Trials: 5, Local: 3, InOrder: true,
		Begin: func(_ context.Context, i int, remote bool) (func(context.Context) (int, error), error) {
			if remote {
				t.Errorf("trial %d begun remote without a Remote", i)
			}
			begun = append(begun, i) // one at a time: no lock
			return func(context.Context) (int, error) {
				time.Sleep(time.Duration(5-i) * 5 * time.Millisecond)
				return i, nil
			}, nil
		},
		Done: func(i int) error {
			mu.Lock()
			defer mu.Unlock()
			done = append(done, i)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(begun, want) || !slices.Equal(done, want) {
		t.Errorf("begun %v, done %v; want both %v", begun, done, want)
	}
}

// TestRunEnded: Done's ErrEnded begins no further trial, the trials under
// way finish and are taken, and Run returns nil; another error of Done is
// Run's.
func TestRunEnded(t *testing.T) {
	var mu sync.Mutex
	var begun, done []int
	release, oneBegun := make(chan struct{}), make(chan struct{})
	err := Run(context.Background(), Schedule[int]{
		Trials: 10, Local: 2,
		Begin: func(_ context.Context, i int, _ bool) (func(context.Context) (int, error), error) {
			mu.Lock()
			begun = append(begun, i)
			mu.Unlock()
			if i == 1 {
				close(oneBegun)
			}
			return func(context.Context) (int, error) {
				switch i {
				case 0:
					<-oneBegun
				case 1:
					<-release // under way when trial 0 ends the run
				}
				return i, nil
			}, nil
		},
		Done: func(i int) error {
			mu.Lock()
			defer mu.Unlock()
			done = append(done, i)
			if i == 0 {
				close(release)
				return ErrEnded
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(begun) > 3 || !slices.Contains(done, 0) || !slices.Contains(done, 1) {
		t.Errorf("begun %v, done %v; want trial 1 under way finished, at most one more begun", begun, done)
	}

	boom := errors.New("boom")
	err = Run(context.Background(), Schedule[int]{
		Trials: 3, Local: 1,
		Begin: func(_ context.Context, i int, _ bool) (func(context.Context) (int, error), error) {
			return func(context.Context) (int, error) { return i, nil }, nil
		},
		Done: func(int) error { return boom },
	})
	if !errors.Is(err, boom) {
		t.Errorf("Run = %v, want Done's error", err)
	}
}

// TestRunRemote: a trial goes remote only when every local slot is busy,
// and with Local 0 every trial does.
func TestRunRemote(t *testing.T) {
	for _, tc := range []struct {
		local, remote int
		wantLocal     int // trials begun here of 4 that all run at once
	}{
		{1, 3, 1},
		{2, 2, 2},
		{0, 4, 0},
	} {
		var mu sync.Mutex
		here := 0
		all := make(chan struct{})
		n := 0
		err := Run(context.Background(), Schedule[int]{
			Trials: 4, Local: tc.local, Remote: slots(tc.remote),
			Begin: func(_ context.Context, i int, remote bool) (func(context.Context) (int, error), error) {
				mu.Lock()
				if !remote {
					here++
				}
				if n++; n == 4 {
					close(all)
				}
				mu.Unlock()
				return func(context.Context) (int, error) { <-all; return i, nil }, nil
			},
			Done: func(int) error { return nil },
		})
		if err != nil || here != tc.wantLocal {
			t.Errorf("local %d, remote %d: %d trials here (%v), want %d", tc.local, tc.remote, here, err, tc.wantLocal)
		}
	}
}

// TestRunBeginError: an error of Begin is Run's and begins no further
// trial; ErrEnded from Begin ends the run quietly.
func TestRunBeginError(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		err  error
		want error
	}{{boom, boom}, {ErrEnded, nil}} {
		calls := 0
		err := Run(context.Background(), Schedule[int]{
			Trials: 5, Local: 1,
			Begin: func(_ context.Context, i int, _ bool) (func(context.Context) (int, error), error) {
				calls++
				if i == 2 {
					return nil, tc.err
				}
				return func(context.Context) (int, error) { return i, nil }, nil
			},
			Done: func(int) error { return nil },
		})
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) || calls != 3 {
			t.Errorf("Begin fails with %v: Run = %v after %d calls, want %v after 3", tc.err, err, calls, tc.want)
		}
	}
}
