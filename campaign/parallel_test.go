package campaign

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestAutoParallel(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name    string
		m       machine
		nodes   int
		trials  int
		cores   float64 // one cluster's measured use; 0: unmeasured
		want    int
		wantWhy string
	}{
		{"unmeasured: one per core", machine{CPUs: 2, MemAvailable: 16 * gib}, 3, 60, 0, 2, "one cluster per core"},
		{"unmeasured, 16 cores", machine{CPUs: 16, MemAvailable: 64 * gib}, 3, 1000, 0, 16, "one cluster per core"},
		{"measured: three quarters of the cores", machine{CPUs: 2, MemAvailable: 16 * gib}, 3, 60, 0.44, 3, "a cluster measured at 0.44 cores; 75% of 2 cores holds 3"},
		{"measured light", machine{CPUs: 2, MemAvailable: 16 * gib}, 3, 60, 0.2, 7, "75% of 2 cores holds 7"},
		{"measured heavy: at least one", machine{CPUs: 2, MemAvailable: 16 * gib}, 3, 60, 1.6, 1, "75% of 2 cores holds 1"},
		{"measured, 16 cores", machine{CPUs: 16, MemAvailable: 64 * gib}, 3, 1000, 0.4, 30, "holds 30"},
		{"memory unknown", machine{CPUs: 4}, 3, 100, 0, 4, "one cluster per core"},
		{"memory bounds it", machine{CPUs: 16, MemAvailable: 4 * gib}, 3, 100, 0, 4, "4096 MiB available holds 4 clusters of 3 members at 1024 MiB each"},
		{"memory bounds a measured one", machine{CPUs: 16, MemAvailable: 4 * gib}, 3, 100, 0.2, 4, "holds 4 clusters of 3 members"},
		{"five members take more", machine{CPUs: 16, MemAvailable: 4 * gib}, 5, 100, 0, 2, "holds 2 clusters of 5 members"},
		{"too little memory: still one", machine{CPUs: 8, MemAvailable: 512 << 20}, 3, 100, 0, 1, "holds 0 clusters"},
		{"no more than the trials", machine{CPUs: 16, MemAvailable: 64 * gib}, 3, 5, 0, 5, "no more than the 5 trials"},
		{"one core", machine{CPUs: 1, MemAvailable: 64 * gib}, 3, 100, 0, 1, "one cluster per core"},
		{"cores unknown", machine{}, 3, 100, 0, 1, "one cluster per core"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := autoParallel(tc.m, tc.nodes, tc.trials, tc.cores)
			if got != tc.want || !strings.Contains(why, tc.wantWhy) {
				t.Errorf("autoParallel = %d (%s), want %d (%s)", got, why, tc.want, tc.wantWhy)
			}
		})
	}
}

// TestCPUMeter checks that the meter sees this process's own work.
func TestCPUMeter(t *testing.T) {
	m := startCPU()
	deadline := time.Now().Add(200 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	if c := m.cores(); c <= 0 || c > float64(runtime.NumCPU())+0.5 {
		t.Errorf("a busy loop measured at %.2f cores, want above 0 and at most %d", c, runtime.NumCPU())
	}
}

func TestMemAvailable(t *testing.T) {
	tests := []struct {
		name, meminfo string
		want          uint64
	}{
		{"present", "MemTotal:       24684084 kB\nMemFree:        18396604 kB\nMemAvailable:   23671496 kB\n", 23671496 << 10},
		{"absent (old kernel)", "MemTotal:       24684084 kB\nMemFree:        18396604 kB\n", 0},
		{"garbled", "MemAvailable:   lots kB\n", 0},
	}
	for _, tc := range tests {
		if got := memAvailable([]byte(tc.meminfo)); got != tc.want {
			t.Errorf("%s: memAvailable = %d, want %d", tc.name, got, tc.want)
		}
	}
}
