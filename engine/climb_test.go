package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// climbLevel is how the trials of one level of a Climb test end: every
// interval, each having run dur.
type climbLevel struct {
	every, dur time.Duration
}

func TestClimb(t *testing.T) {
	for _, tc := range []struct {
		name       string
		start, max int
		levels     []climbLevel // the levels fed in turn, from start
		want       int          // the level at the end
		settled    bool
		notes      []string // substrings of the notes, in order
	}{
		{
			name: "a step that pays is kept, the next that does not is left",
			// etcd on 2 cores: 2 clusters end a trial every 3.5 s, 3 every
			// 2.4 s at about the same length, 4 no sooner.
			start: 2, max: 8,
			levels: []climbLevel{{3500 * time.Millisecond, 6900 * time.Millisecond}, {2400 * time.Millisecond, 7100 * time.Millisecond}, {2300 * time.Millisecond, 8 * time.Second}},
			want:   3, settled: true,
			notes: []string{"trying 3 at once (at 2: 6 trials ended every 3.5 s, median trial 6.9 s)",
				"3 at once kept: trials ended every 2.4 s against 3.5 s at 2 (+46% rate; +15% needed), median trial 7.1 s against 6.9 s (+3%; at most +25%); trying 4",
				"back to 3 at once: at 4 trials ended every 2.3 s against 2.4 s at 3 (+4% rate"},
		},
		{
			name:  "faster but stretched trials are not kept",
			start: 2, max: 8,
			levels: []climbLevel{{3500 * time.Millisecond, 7 * time.Second}, {2 * time.Second, 10 * time.Second}},
			want:   2, settled: true,
			notes: []string{"trying 3", "back to 2 at once: at 3 trials ended every 2.0 s against 3.5 s at 2 (+75% rate; +15% needed), median trial 10.0 s against 7.0 s (+43%; at most +25%)"},
		},
		{
			name:  "the max ends the climb",
			start: 2, max: 3,
			levels: []climbLevel{{4 * time.Second, 7 * time.Second}, {2 * time.Second, 7 * time.Second}},
			want:   3, settled: true,
			notes: []string{"trying 3", "3 at once kept: trials ended every 2.0 s against 4.0 s at 2 (+100% rate; +15% needed), median trial 7.0 s against 7.0 s (+0%; at most +25%); 3 is its max (ClimbMax: the free memory, 4 a core, the trials to run)"},
		},
		{
			name:  "a level not fully measured keeps climbing",
			start: 1, max: 4,
			levels: []climbLevel{{7 * time.Second, 7 * time.Second}},
			want:   2,
			notes:  []string{"trying 2"},
		},
		{
			name:  "a start at the max never climbs",
			start: 3, max: 3,
			levels: []climbLevel{{time.Second, time.Second}},
			want:   3, settled: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewClimb(tc.start, tc.max)
			at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
			for _, l := range tc.levels {
				level := c.Level()
				for range climbWindow(level) {
					at = at.Add(l.every)
					// A trial begun at an earlier level that ends now
					// is not this level's.
					if level > tc.start {
						if note := c.Ended(level-1, at.Add(-l.dur), at); note != "" {
							t.Fatalf("a trial of the level below changed the level: %s", note)
						}
					}
					c.Ended(level, at.Add(-l.dur), at)
				}
			}
			if c.Level() != tc.want || c.Settled() != tc.settled {
				t.Errorf("level %d settled %v, want %d %v; notes %q", c.Level(), c.Settled(), tc.want, tc.settled, c.Notes)
			}
			if len(c.Notes) != len(tc.notes) {
				t.Fatalf("notes %q, want %d", c.Notes, len(tc.notes))
			}
			for i, want := range tc.notes {
				if !strings.Contains(c.Notes[i], want) {
					t.Errorf("note %d %q, want it to hold %q", i, c.Notes[i], want)
				}
			}
		})
	}
}

func TestClimbWorth(t *testing.T) {
	for _, tc := range []struct {
		trials, start int
		want          bool
	}{
		{60, 2, true}, {24, 2, true}, {23, 2, false}, {30, 6, false}, {48, 6, true},
	} {
		if got := ClimbWorth(tc.trials, tc.start); got != tc.want {
			t.Errorf("ClimbWorth(%d, %d) = %v, want %v", tc.trials, tc.start, got, tc.want)
		}
	}
	u := Unit{Name: "cluster", Mem: 1 << 30}
	for _, tc := range []struct {
		m      Machine
		trials int
		want   int
	}{
		{Machine{CPUs: 2}, 60, 8},
		{Machine{CPUs: 2, MemAvailable: 5 << 30}, 60, 5},
		{Machine{CPUs: 16, MemAvailable: 100 << 30}, 20, 20},
		{Machine{CPUs: 2, MemAvailable: 1 << 20}, 60, 1},
	} {
		if got := ClimbMax(tc.m, u, tc.trials); got != tc.want {
			t.Errorf("ClimbMax(%+v, %d) = %d, want %d", tc.m, tc.trials, got, tc.want)
		}
	}
}

// TestRunClimb runs trials under a Climb: never more at once than its
// max, every trial run once, each change of level told.
func TestRunClimb(t *testing.T) {
	c := NewClimb(1, 4)
	var mu sync.Mutex
	running, most, ran := 0, 0, map[int]bool{}
	var notes []string
	err := Run(context.Background(), Schedule[int]{
		Trials: 40, Local: 1, Climb: c,
		Climbed: func(note string) {
			mu.Lock()
			notes = append(notes, note)
			mu.Unlock()
		},
		Begin: func(_ context.Context, i int, remote bool) (func(context.Context) (int, error), error) {
			if remote {
				t.Errorf("trial %d remote without Remote", i)
			}
			return func(context.Context) (int, error) {
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				running--
				mu.Unlock()
				return i, nil
			}, nil
		},
		Done: func(i int) error {
			mu.Lock()
			defer mu.Unlock()
			if ran[i] {
				t.Errorf("trial %d ran twice", i)
			}
			ran[i] = true
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 40 {
		t.Errorf("%d trials ran, want 40", len(ran))
	}
	if most > 4 {
		t.Errorf("%d ran at once, above the climb's max 4", most)
	}
	if len(notes) != len(c.Notes) || len(notes) == 0 {
		t.Errorf("Climbed got %q, the climb noted %q", notes, c.Notes)
	}
}
