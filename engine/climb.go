package engine

import (
	"fmt"
	"slices"
	"time"
)

// The rule of a Climb: a level is measured over climbWindow(level)
// trials begun at it; the next level is kept when its trials end at
// least climbGain faster and their median runs at most climbStretch
// longer than the level below.
const (
	// climbMinWindow is the fewest trials a level is measured over.
	climbMinWindow = 6
	// climbGain is how much more often, as a share, trials must end at
	// a higher level for it to be kept: below it a step is within the
	// noise of a few trials whose kinds (a crash, a delay, an error)
	// last from 5 to 9 s.
	climbGain = 0.15
	// climbStretch is how much longer, as a share, the median trial
	// may run at a higher level: more would stretch the trials' own
	// clocks (a member's start-up, the settle after a fault) and
	// bring the timing-sensitive checkers closer to a machine too busy
	// to judge by.
	climbStretch = 0.25
)

// Climb is how --parallel auto goes past what AutoParallel planned
// from a measurement of one trial alone: a trial mostly waits (start-up,
// elections, the settle, the stop), so more may run at once than their
// CPU share says. From the planned level it measures how often trials
// end and how long they run, tries one more at once, and keeps it only
// while trials end at least climbGain sooner and run at most
// climbStretch longer; at the first step that does not pay it goes back
// one level and stays (settled). Never above its max (ClimbMax: what
// the free memory holds, 4 a core, the trials to run).
//
// It is a pure state machine: Run feeds it the trials that ended, in
// the order they ended, and reads Level before it begins a trial.
type Climb struct {
	level, max int
	settled    bool
	// below is the measurement of the level below the one measured now;
	// nil at the first level.
	below *climbStep
	cur   climbStep
	// Notes says, in order, each level tried and why it was kept or left.
	Notes []string
}

// climbStep is what the trials begun at one level showed.
type climbStep struct {
	level int
	ends  []time.Time
	durs  []time.Duration
}

// NewClimb returns a Climb that starts at start trials at once and goes
// no higher than max.
func NewClimb(start, most int) *Climb {
	start = max(1, start)
	return &Climb{level: start, max: max(start, most), settled: start >= most, cur: climbStep{level: start}}
}

// Level is how many trials may run at once now.
func (c *Climb) Level() int { return c.level }

// Settled reports whether the climb has stopped: a step did not pay, or
// the max was reached.
func (c *Climb) Settled() bool { return c.settled }

// climbWindow is how many trials a level is measured over.
func climbWindow(level int) int { return max(climbMinWindow, 2*level) }

// Ended takes a trial that was begun at level and ran from begin to end,
// and returns a note when it changed the level ("" otherwise).
func (c *Climb) Ended(level int, begin, end time.Time) string {
	if c.settled || level != c.cur.level {
		return ""
	}
	c.cur.ends = append(c.cur.ends, end)
	c.cur.durs = append(c.cur.durs, end.Sub(begin))
	if len(c.cur.ends) < climbWindow(c.cur.level) {
		return ""
	}
	cur := c.cur
	if c.below == nil || c.pays(cur, *c.below) {
		note := ""
		if c.below != nil {
			note = fmt.Sprintf("%d at once kept: %s", cur.level, compare(cur, *c.below))
		}
		if cur.level >= c.max {
			c.settled = true
			note = joinNote(note, fmt.Sprintf("%d is its max (ClimbMax: the free memory, 4 a core, the trials to run)", cur.level))
			c.Notes = append(c.Notes, note)
			return note
		}
		c.below = &cur
		c.level = cur.level + 1
		c.cur = climbStep{level: c.level}
		note = joinNote(note, fmt.Sprintf("trying %d at once (at %d: %s)", c.level, cur.level, cur))
		c.Notes = append(c.Notes, note)
		return note
	}
	c.settled = true
	c.level = c.below.level
	note := fmt.Sprintf("back to %d at once: at %d %s", c.level, cur.level, compare(cur, *c.below))
	c.Notes = append(c.Notes, note)
	return note
}

// pays reports whether level a is worth keeping over the level below, b.
func (c *Climb) pays(a, b climbStep) bool {
	return (1+climbGain)*float64(a.interval()) <= float64(b.interval()) &&
		float64(a.median()) <= (1+climbStretch)*float64(b.median())
}

// interval is the mean time between the step's trials' ends, from the
// first to the last: the rate once its slots are all in use, leaving out
// the ramp before its first trial ended.
func (s climbStep) interval() time.Duration {
	ends := slices.Clone(s.ends)
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	if len(ends) < 2 {
		return 0
	}
	return ends[len(ends)-1].Sub(ends[0]) / time.Duration(len(ends)-1)
}

// median is the median run time of the step's trials.
func (s climbStep) median() time.Duration {
	d := slices.Clone(s.durs)
	slices.Sort(d)
	if len(d) == 0 {
		return 0
	}
	return d[len(d)/2]
}

func (s climbStep) String() string {
	return fmt.Sprintf("%d trials ended every %.1f s, median trial %.1f s", len(s.ends), s.interval().Seconds(), s.median().Seconds())
}

// compare says how step a did against the level below, b.
func compare(a, b climbStep) string {
	ia, ib := a.interval().Seconds(), b.interval().Seconds()
	ma, mb := a.median().Seconds(), b.median().Seconds()
	return fmt.Sprintf("trials ended every %.1f s against %.1f s at %d (%+.0f%% rate; +%.0f%% needed), median trial %.1f s against %.1f s (%+.0f%%; at most +%.0f%%)",
		ia, ib, b.level, 100*(ib/ia-1), 100*climbGain, ma, mb, 100*(ma/mb-1), 100*climbStretch)
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// ClimbWorth reports whether a run of trials trials, begun at start at
// once, is long enough for a Climb: each level tried is measured over
// several trials (climbWindow), and those of a level that does not pay
// run slower, so a short run keeps its plan.
func ClimbWorth(trials, start int) bool { return trials >= 4*climbWindow(start) }

// ClimbMax is the most trials a Climb from AutoParallel's plan may run at
// once on machine m: what the free memory holds at u.Mem each, at most
// four per core and no more than trials (trials ≤ 0: no such bound).
func ClimbMax(m Machine, u Unit, trials int) int {
	n := 4 * max(1, m.CPUs)
	if m.MemAvailable > 0 && u.Mem > 0 {
		n = min(n, int(m.MemAvailable/u.Mem))
	}
	if trials > 0 {
		n = min(n, trials)
	}
	return max(1, n)
}
