package campaign

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
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

// cpuShare is the share of the machine's cores that auto parallelism
// plans to use: the rest absorbs what a measurement over sequential
// trials misses (start-ups of several clusters at once, a linearizability
// search, a crash's recovery) and other work on the machine, so the
// timing-sensitive checkers (hang, slow, gray) see what a quiet machine
// would give them. Measured on 2 cores: 3 etcd clusters at a load average
// of 8-20 judged 60 fault-free trials with no failure (docs/performance.md).
const cpuShare = 0.75

// autoParallel decides how many clusters a campaign runs at once when
// trials.parallel is auto. A trial is bound by its cluster's clocks
// (start-up, elections, the load, shutdown), not by the CPU, so with
// cores, the cores one cluster was measured to use while trials ran one at
// a time (the baseline trials; cpuMeter), as many clusters
// as fit in cpuShare of the cores; unmeasured (0: a resumed campaign, no
// baseline trials), one per core. Never more than the free memory holds at
// memPerNode per member plus memPerCluster, nor than the trials to run
// (trials ≤ 0: no such bound); at least 1. It also says why, for the log.
func autoParallel(m machine, nodes, trials int, cores float64) (int, string) {
	n := max(1, m.CPUs)
	why := fmt.Sprintf("one cluster per core (%d)", m.CPUs)
	if cores > 0 {
		n = max(1, int(cpuShare*float64(m.CPUs)/cores))
		why = fmt.Sprintf("a cluster measured at %.2f cores; %.0f%% of %d cores holds %d", cores, 100*cpuShare, m.CPUs, n)
	}
	if m.MemAvailable > 0 {
		per := uint64(max(1, nodes))*memPerNode + memPerCluster
		if byMem := int(m.MemAvailable / per); byMem < n {
			n = byMem
			why += fmt.Sprintf("; %d MiB available holds %d clusters of %d members at %d MiB each",
				m.MemAvailable>>20, byMem, nodes, per>>20)
		}
	}
	if trials > 0 && trials < n {
		n = trials
		why += fmt.Sprintf("; no more than the %d trials to run", trials)
	}
	return max(1, n), why
}

// cpuMeter measures the cores gofault and the processes it started and
// reaped (a trial's members and workload) used over a span of wall time.
type cpuMeter struct {
	wall time.Time
	cpu  time.Duration
}

// startCPU starts a cpuMeter.
func startCPU() cpuMeter { return cpuMeter{wall: time.Now(), cpu: cpuUsed()} }

// cores returns the cores used since the meter started: CPU time over
// wall time; 0 when nothing was measured.
func (c cpuMeter) cores() float64 {
	wall := time.Since(c.wall)
	used := cpuUsed() - c.cpu
	if wall <= 0 || used <= 0 {
		return 0
	}
	return used.Seconds() / wall.Seconds()
}

// cpuUsed returns the CPU time (user and system) of this process and of
// its reaped children; 0 when the system cannot say.
func cpuUsed() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			return 0
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

// ThisMachine returns the cores gofault may use and the memory free for
// new processes in bytes (0 when unknown), as auto parallelism sizes a
// campaign for; gofault test sizes its test processes with them.
func ThisMachine() (cpus int, memAvailable uint64) {
	m := thisMachine()
	return m.CPUs, m.MemAvailable
}

// CPUUsed returns the CPU time of this process and of its reaped children
// (0 when the system cannot say): its growth over a span of wall time is
// the cores used meanwhile.
func CPUUsed() time.Duration { return cpuUsed() }

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
