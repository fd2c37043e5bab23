package campaign

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
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

// machine is what autoParallel sizes a campaign for.
type machine struct {
	// CPUs is the number of cores gofault may use (runtime.NumCPU).
	CPUs int
	// MemAvailable is the memory free for new processes in bytes
	// (/proc/meminfo's MemAvailable); 0 when unknown.
	MemAvailable uint64
}

// autoParallel decides how many clusters a campaign runs at once when
// trials.parallel is auto: one per core — a trial is bound by its
// cluster's clocks (start-up, elections, the load, shutdown), and a
// three-member etcd cluster with its workload was measured at about 0.4
// of a core, so one per core leaves the checkers and the node start-ups
// their share — and no more than the free memory holds at memPerNode per
// member plus memPerCluster; at least 1 and at most the trials to run
// (trials ≤ 0: no such bound). It also says why, for the log.
func autoParallel(m machine, nodes, trials int) (int, string) {
	n := max(1, m.CPUs)
	why := fmt.Sprintf("one cluster per core (%d)", m.CPUs)
	if m.MemAvailable > 0 {
		per := uint64(max(1, nodes))*memPerNode + memPerCluster
		if byMem := int(m.MemAvailable / per); byMem < n {
			n = byMem
			why = fmt.Sprintf("%d MiB available holds %d clusters of %d members at %d MiB each (%d cores)",
				m.MemAvailable>>20, byMem, nodes, per>>20, m.CPUs)
		}
	}
	if trials > 0 && trials < n {
		n = trials
		why += fmt.Sprintf(", no more than the %d trials to run", trials)
	}
	return max(1, n), why
}

// thisMachine measures the machine gofault runs on.
func thisMachine() machine {
	m := machine{CPUs: runtime.NumCPU()}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemAvailable = memAvailable(data)
	}
	return m
}

// memAvailable parses /proc/meminfo's MemAvailable line ("MemAvailable:
// 23671496 kB") into bytes; 0 when absent.
func memAvailable(meminfo []byte) uint64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			kb, err := strconv.ParseUint(string(f[1]), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
