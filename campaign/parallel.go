package campaign

import (
	"fmt"

	"github.com/gofault/gofault/engine"
)

// The memory a cluster is sized at when trials.parallel is auto: what one
// member may hold (an etcd member measured 50 MB resident in a fault-free
// trial; a member's page cache and a crash's recovery grow it) and what the
// workload and the checkers of one trial may hold beside its members
// (docs/performance.md).
const (
	memPerNode    = 256 << 20
	memPerCluster = 256 << 20
)

// clusterUnit is a cluster of nodes members as engine.AutoParallel sizes
// it.
func clusterUnit(nodes int) engine.Unit {
	return engine.Unit{
		Name: "cluster",
		Mem:  uint64(max(1, nodes))*memPerNode + memPerCluster,
		Many: fmt.Sprintf(" clusters of %d members", nodes),
	}
}

// autoParallel decides how many clusters of nodes members a campaign
// runs at once when trials.parallel is auto (engine.AutoParallel), with
// cores the cores one cluster was measured to use while the baseline
// trials ran one at a time (0: unmeasured).
func autoParallel(m engine.Machine, nodes, trials int, cores float64) (int, string) {
	return engine.AutoParallel(m, clusterUnit(nodes), cores, trials)
}

// AutoClusters is how many clusters of nodes members machine m runs at
// once, unmeasured (engine.AutoParallel: one per free core, as the free
// memory allows), with why: what gofault bench --campaigns auto spreads
// its campaigns over.
func AutoClusters(m engine.Machine, nodes int) (int, string) {
	return autoParallel(m, nodes, 0, 0)
}
