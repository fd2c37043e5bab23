package check

import (
	"time"

	"github.com/gofault/gofault/record"
)

// killsAllowance is the stall that kill faults (crash, power loss) beyond
// the first may add to a period [from, to]: a fault sequence that kills
// nodes one after the other (the fuzz policy) costs a failover each, and
// the progress bound allows one. Each kill injected after from − bound and
// by to, past the first, adds one bound.
func killsAllowance(tr *record.Trial, from, to time.Time, bound time.Duration) time.Duration {
	n := 0
	for _, in := range tr.Injections {
		if in.Kind.Kills() && in.Time.After(from.Add(-bound)) && !in.Time.After(to) {
			n++
		}
	}
	if n < 2 {
		return 0
	}
	return time.Duration(n-1) * bound
}
