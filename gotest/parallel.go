package gotest

import "github.com/gofault/gofault/engine"

// ParallelAuto is Options.Parallel for --parallel auto: the fault-free
// pass runs one test process at a time and measures what one costs, and
// the fault trials run as many at once as AutoParallel says.
const ParallelAuto = engine.ParallelAuto

// memPerProcess is the memory a test process is sized at: not measured
// (the resident size of a process is not reported back), a cluster
// member's size in gofault run (campaign's memPerNode).
const memPerProcess = 256 << 20

// AutoParallel decides how many test processes run at once with
// --parallel auto on machine m (engine.AutoParallel): with cores, the
// cores the fault-free pass used while its runs went one at a time
// (gofault's own work included); unmeasured (0: a resumed campaign's pass
// ran nothing), one per core; each sized at memPerProcess. It says why.
func AutoParallel(m engine.Machine, cores float64, trials int) (int, string) {
	return engine.AutoParallel(m, engine.Unit{Name: "test process", Mem: memPerProcess}, cores, trials)
}
