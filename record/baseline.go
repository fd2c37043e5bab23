package record

import "time"

// LogBaseline is what a campaign's fault-free trials show of the target
// without faults (check.Learn adds a trial's): the set of warning-or-worse
// log templates seen, which the log checker does not report, and the
// longest start-up, which the recovery checker gives a fault that struck
// while the cluster was still forming. Its JSON form is what the store
// persists and what a coordinator sends its workers.
type LogBaseline struct {
	// Trials counts the trials learned.
	Trials int `json:"trials"`
	// Templates counts, per template, the trials it appeared in.
	Templates map[string]int `json:"templates"`
	// Startup is the longest start-up measured: from the workload's first
	// event to the first request that succeeded on the last member to
	// serve one (a trial in which a member served none is no sample).
	Startup time.Duration `json:"startup,omitempty"`
}

// Clone returns a deep copy, for judging a trial while other goroutines
// go on learning into b.
func (b *LogBaseline) Clone() *LogBaseline {
	c := &LogBaseline{Trials: b.Trials, Templates: make(map[string]int, len(b.Templates)), Startup: b.Startup}
	for k, v := range b.Templates {
		c.Templates[k] = v
	}
	return c
}

// Known reports whether template was seen in the baseline.
func (b *LogBaseline) Known(template string) bool { return b != nil && b.Templates[template] > 0 }
