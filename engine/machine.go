package engine

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

// ParallelAuto is the parallelism of --parallel auto: as many trials at
// once as AutoParallel says the machine holds.
const ParallelAuto = -1

// cpuShare is the share of the machine's cores that auto parallelism
// plans to use: the rest absorbs what a measurement over sequential
// trials misses (start-ups of several clusters or test processes at once,
// a linearizability search, a crash's recovery, a delayed test's
// catch-up) and other work on the machine, so the timing-sensitive
// checkers (hang, slow, gray) and the tests' own timeouts see what a quiet
// machine would give them. Measured on 2 cores: 3 etcd clusters at a load
// average of 8-20 judged 60 fault-free trials with no failure
// (docs/performance.md).
const cpuShare = 0.75

// Machine is what AutoParallel sizes a campaign for.
type Machine struct {
	// CPUs is the number of cores gofault may use (runtime.NumCPU).
	CPUs int
	// MemAvailable is the memory free for new processes in bytes
	// (/proc/meminfo's MemAvailable); 0 when unknown.
	MemAvailable uint64
	// Busy is how many cores other work kept busy when the machine was
	// measured (/proc/stat over busySample); 0 when unknown.
	Busy float64
}

// Unit is what runs one trial, as AutoParallel sizes it: a cluster
// (gofault run) or a test process (gofault test).
type Unit struct {
	// Name is what one is called in the reason AutoParallel gives
	// ("cluster").
	Name string
	// Mem is the memory one is sized at, in bytes.
	Mem uint64
	// Many, put after a count in the reason, says what that many are
	// (" clusters of 3 members"); empty says nothing more.
	Many string
}

// AutoParallel decides how many trials run at once with --parallel auto.
// A trial is bound by its own clocks (start-up, elections, the load,
// shutdown), not by the CPU, so with cores, the cores one unit was
// measured to use while trials ran one at a time (Meter), as many units
// as fit in cpuShare of the cores; unmeasured (0: a resumed campaign, no
// trial measured), one per core. Never more than the free memory holds
// at u.Mem each, nor than the trials to run (trials ≤ 0: no such bound);
// at least 1. It also says why, for the log and the summary.
func AutoParallel(m Machine, u Unit, cores float64, trials int) (int, string) {
	n := max(1, m.CPUs)
	why := fmt.Sprintf("one %s per core (%d)", u.Name, m.CPUs)
	free := float64(m.CPUs)
	if m.Busy > 0 {
		free = max(0, free-m.Busy)
	}
	if cores > 0 {
		n = max(1, int(cpuShare*free/cores))
		why = fmt.Sprintf("a %s measured at %.2f cores; %.0f%% of %d cores holds %d", u.Name, cores, 100*cpuShare, m.CPUs, n)
		if m.Busy > 0 {
			why = fmt.Sprintf("a %s measured at %.2f cores; %.0f%% of the %.1f of %d cores other work left free holds %d", u.Name, cores, 100*cpuShare, free, m.CPUs, n)
		}
	} else if m.Busy > 0 {
		n = max(1, int(free))
		why = fmt.Sprintf("one %s per core other work left free (%.1f of %d)", u.Name, free, m.CPUs)
	}
	if m.MemAvailable > 0 && u.Mem > 0 {
		if byMem := int(m.MemAvailable / u.Mem); byMem < n {
			n = byMem
			why += fmt.Sprintf("; %d MiB available holds %d%s at %d MiB each", m.MemAvailable>>20, byMem, u.Many, u.Mem>>20)
		}
	}
	if trials > 0 && trials < n {
		n = trials
		why += fmt.Sprintf("; no more than the %d trials to run", trials)
	}
	return max(1, n), why
}

// Meter measures the cores gofault and the processes it started and
// reaped (a trial's members, workload or test process) used over a span
// of wall time.
type Meter struct {
	wall time.Time
	cpu  time.Duration
}

// StartMeter starts a Meter.
func StartMeter() Meter { return Meter{wall: time.Now(), cpu: cpuUsed()} }

// Cores returns the cores used since the meter started: CPU time over
// wall time; 0 when nothing was measured.
func (c Meter) Cores() float64 {
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

// ThisMachine measures the machine gofault runs on.
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU()}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemAvailable = memAvailable(data)
	}
	m.Busy = busyCores(m.CPUs, busySample)
	return m
}

// busySample is how long ThisMachine watches the machine's load.
const busySample = 500 * time.Millisecond

// busyCores returns how many of cpus cores were busy over the next span
// (/proc/stat's all-CPU line: every state but idle and iowait); 0 when
// the system cannot say.
func busyCores(cpus int, span time.Duration) float64 {
	busy0, total0, ok := cpuTimes()
	if !ok {
		return 0
	}
	time.Sleep(span)
	busy1, total1, ok := cpuTimes()
	if !ok || total1 <= total0 {
		return 0
	}
	return float64(cpus) * float64(busy1-busy0) / float64(total1-total0)
}

// cpuTimes reads /proc/stat's first line: the jiffies spent busy and in
// all.
func cpuTimes() (busy, total uint64, ok bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseCPUTimes(data)
}

// parseCPUTimes parses /proc/stat's "cpu  user nice system idle iowait irq
// softirq steal ..." line.
func parseCPUTimes(stat []byte) (busy, total uint64, ok bool) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return 0, 0, false
	}
	for i, x := range f[1:] {
		v, err := strconv.ParseUint(string(x), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i >= 8 { // guest time is counted in user already
			break
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, true
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
