package gotest

import "fmt"

// ParallelAuto is Options.Parallel for --parallel auto: the fault-free
// pass runs one test process at a time and measures what one costs, and
// the fault trials run as many at once as AutoParallel says.
const ParallelAuto = -1

// cpuShare is the share of the machine's cores auto parallelism plans to
// use, as gofault run's (campaign's cpuShare): the rest absorbs what
// sequential runs do not show (start-ups at once, a delayed test's
// catch-up) and other work on the machine, so the tests' own timeouts
// see what a quiet machine would give them.
const cpuShare = 0.75

// memPerProcess is the memory a test process is sized at: not measured
// (the resident size of a process is not reported back), a cluster
// member's size in gofault run (campaign's memPerNode).
const memPerProcess = 256 << 20

// AutoParallel decides how many test processes run at once with
// --parallel auto: with cores, the cores the fault-free pass used while
// its runs went one at a time (gofault's own work included), as many as
// fit in cpuShare of cpus; unmeasured (0: a resumed campaign's pass ran
// nothing), one per core. Never more than memAvailable holds at
// memPerProcess each (0: unknown, no bound), nor than the trials to run;
// at least 1. It says why.
func AutoParallel(cpus int, memAvailable uint64, cores float64, trials int) (int, string) {
	n := max(1, cpus)
	why := fmt.Sprintf("one test process per core (%d)", cpus)
	if cores > 0 {
		n = max(1, int(cpuShare*float64(cpus)/cores))
		why = fmt.Sprintf("a test process measured at %.2f cores; %.0f%% of %d cores holds %d", cores, 100*cpuShare, cpus, n)
	}
	if memAvailable > 0 {
		if byMem := int(memAvailable / memPerProcess); byMem < n {
			n = byMem
			why += fmt.Sprintf("; %d MiB available holds %d at %d MiB each", memAvailable>>20, byMem, memPerProcess>>20)
		}
	}
	if trials > 0 && trials < n {
		n = trials
		why += fmt.Sprintf("; no more than the %d trials to run", trials)
	}
	return max(1, n), why
}
