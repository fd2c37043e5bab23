// Package engine runs a campaign's trials, whatever a trial is (a
// cluster's, gofault run; a test process's, gofault test): how many run
// at once here (Schedule.Local, --parallel auto sized by AutoParallel),
// the others on remote workers (Remote), stopping when the campaign says
// enough (ErrEnded), and the policy's state saved after each trial and
// restored on resume. Each kind of campaign only says how to begin and
// run one trial and what to do with it once it ran.
package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// ErrEnded, returned by Schedule.Begin or Schedule.Done, says the
// campaign has enough (its Until said so, its policy ran dry): no further
// trial begins, and the trials under way finish.
var ErrEnded = errors.New("the campaign has enough: no further trial begins")

// Schedule is how a campaign's trials run: R is what a trial that ran
// hands on (its record, and what the campaign counts of it).
type Schedule[R any] struct {
	// Trials is how many trials to run at most.
	Trials int
	// Local is how many trials run on this machine at once (at least one
	// without Remote; with Remote, 0 runs every trial there).
	Local int
	// Remote, if set, runs a trial on another machine whenever no local
	// slot is free, up to its Slots at once.
	Remote Remote
	// Begin begins trial i of the run (0, 1, ...) once a slot is free
	// for it, on a remote worker when remote: it is called in order, one
	// at a time, so a policy plans each trial knowing every trial begun
	// before. It returns what runs the trial to its end, or ErrEnded.
	Begin func(ctx context.Context, i int, remote bool) (func(context.Context) (R, error), error)
	// Done takes a trial that ran, one at a time: in the order of i when
	// InOrder, else as the trials end. ErrEnded ends the run (the trials
	// under way finish and are taken too); another error stops it.
	Done    func(R) error
	InOrder bool
	// Climb, if set (only without Remote), decides how many trials run
	// here at once in place of Local (it starts at its own level): Run
	// tells it each trial that ended, and Climbed, if set, each note it
	// gave when it changed the level.
	Climb   *Climb
	Climbed func(note string)
}

// Run runs s's trials until s.Trials ran, Begin or Done said ErrEnded, or
// ctx is done. It returns the first error of Begin, of a trial's run or
// of Done, nil when it ended (ctx's error is the caller's to check).
func Run[R any](ctx context.Context, s Schedule[R]) error {
	limit := max(1, s.Local)
	var local chan struct{} // a token per local slot in use, with Remote
	var climb *climbGate
	switch {
	case s.Remote != nil:
		limit = max(0, s.Local) + s.Remote.Slots()
		local = make(chan struct{}, max(0, s.Local)) // none: never free
	case s.Climb != nil:
		limit = s.Climb.max
		climb = &climbGate{c: s.Climb, note: s.Climbed, wake: make(chan struct{})}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	d := &dones[R]{done: s.Done, inOrder: s.InOrder, ready: map[int]R{}}
	for i := 0; i < s.Trials && gctx.Err() == nil && !d.isEnded(); i++ {
		begun := make(chan error, 1)
		g.Go(func() error {
			if err := gctx.Err(); err != nil { // stopped while waiting for a slot
				begun <- err
				return nil
			}
			if d.isEnded() { // ended while this waited for a slot
				begun <- ErrEnded
				return nil
			}
			remote := false
			if climb != nil {
				level, err := climb.acquire(gctx)
				if err != nil {
					begun <- err
					return nil
				}
				begin := time.Now()
				defer func() { climb.release(level, begin, time.Now()) }()
			}
			if local != nil {
				select {
				case local <- struct{}{}:
					defer func() { <-local }()
				default:
					remote = true
				}
			}
			run, err := s.Begin(gctx, i, remote)
			begun <- err
			switch {
			case errors.Is(err, ErrEnded):
				d.end()
				return nil
			case err != nil && gctx.Err() != nil:
				return nil
			case err != nil:
				return err
			}
			r, err := run(gctx)
			if err != nil {
				return err
			}
			return d.add(i, r)
		})
		if <-begun != nil {
			break
		}
	}
	return g.Wait()
}

// dones hands the trials that ran to Done, one at a time, in the order
// of their i when inOrder.
type dones[R any] struct {
	done    func(R) error
	inOrder bool

	mu    sync.Mutex
	next  int       // the i whose turn it is, when inOrder
	ready map[int]R // trials that ran before their turn
	ended bool      // Done or Begin said ErrEnded
}

func (d *dones[R]) isEnded() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ended
}

func (d *dones[R]) end() {
	d.mu.Lock()
	d.ended = true
	d.mu.Unlock()
}

// add hands over trial i and every trial whose turn has come.
func (d *dones[R]) add(i int, r R) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.inOrder {
		return d.take(r)
	}
	d.ready[i] = r
	for {
		r, ok := d.ready[d.next]
		if !ok {
			return nil
		}
		delete(d.ready, d.next)
		d.next++
		if err := d.take(r); err != nil {
			return err
		}
	}
}

// take hands r to Done; d.mu is held.
func (d *dones[R]) take(r R) error {
	err := d.done(r)
	if errors.Is(err, ErrEnded) {
		d.ended = true
		return nil
	}
	return err
}

// climbGate lets as many trials run at once as its Climb's level.
type climbGate struct {
	c    *Climb
	note func(string)

	mu   sync.Mutex
	busy int
	wake chan struct{} // closed and replaced when a slot frees or the level changes
}

// acquire waits for a slot and returns the level it was taken at.
func (g *climbGate) acquire(ctx context.Context) (int, error) {
	for {
		g.mu.Lock()
		if level := g.c.Level(); g.busy < level {
			g.busy++
			g.mu.Unlock()
			return level, nil
		}
		wake := g.wake
		g.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// release frees the slot of a trial begun at level that ran from begin
// to end, and tells the Climb.
func (g *climbGate) release(level int, begin, end time.Time) {
	g.mu.Lock()
	g.busy--
	note := g.c.Ended(level, begin, end)
	close(g.wake)
	g.wake = make(chan struct{})
	g.mu.Unlock()
	if note != "" && g.note != nil {
		g.note(note)
	}
}
