package campaign

import (
	"strings"
	"testing"

	"github.com/gofault/gofault/engine"
)

func TestAutoParallel(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name    string
		m       engine.Machine
		nodes   int
		trials  int
		cores   float64 // one cluster's measured use; 0: unmeasured
		want    int
		wantWhy string
	}{
		{"unmeasured: one per core", engine.Machine{CPUs: 2, MemAvailable: 16 * gib}, 3, 60, 0, 2, "one cluster per core"},
		{"unmeasured, 16 cores", engine.Machine{CPUs: 16, MemAvailable: 64 * gib}, 3, 1000, 0, 16, "one cluster per core"},
		{"measured: three quarters of the cores", engine.Machine{CPUs: 2, MemAvailable: 16 * gib}, 3, 60, 0.44, 3, "a cluster measured at 0.44 cores; 75% of 2 cores holds 3"},
		{"measured light", engine.Machine{CPUs: 2, MemAvailable: 16 * gib}, 3, 60, 0.2, 7, "75% of 2 cores holds 7"},
		{"measured heavy: at least one", engine.Machine{CPUs: 2, MemAvailable: 16 * gib}, 3, 60, 1.6, 1, "75% of 2 cores holds 1"},
		{"measured, 16 cores", engine.Machine{CPUs: 16, MemAvailable: 64 * gib}, 3, 1000, 0.4, 30, "holds 30"},
		{"memory unknown", engine.Machine{CPUs: 4}, 3, 100, 0, 4, "one cluster per core"},
		{"memory bounds it", engine.Machine{CPUs: 16, MemAvailable: 4 * gib}, 3, 100, 0, 4, "4096 MiB available holds 4 clusters of 3 members at 1024 MiB each"},
		{"memory bounds a measured one", engine.Machine{CPUs: 16, MemAvailable: 4 * gib}, 3, 100, 0.2, 4, "holds 4 clusters of 3 members"},
		{"five members take more", engine.Machine{CPUs: 16, MemAvailable: 4 * gib}, 5, 100, 0, 2, "holds 2 clusters of 5 members"},
		{"too little memory: still one", engine.Machine{CPUs: 8, MemAvailable: 512 << 20}, 3, 100, 0, 1, "holds 0 clusters"},
		{"no more than the trials", engine.Machine{CPUs: 16, MemAvailable: 64 * gib}, 3, 5, 0, 5, "no more than the 5 trials"},
		{"one core", engine.Machine{CPUs: 1, MemAvailable: 64 * gib}, 3, 100, 0, 1, "one cluster per core"},
		{"cores unknown", engine.Machine{CPUs: 0}, 3, 100, 0, 1, "one cluster per core"},
		// Other work on the machine: only what it leaves free is planned.
		{"a busy machine: what is left", engine.Machine{CPUs: 2, MemAvailable: 16 * gib, Busy: 1.4}, 3, 60, 0.2, 2, "75% of the 0.6 of 2 cores other work left free holds 2"},
		{"a full machine: one", engine.Machine{CPUs: 2, MemAvailable: 16 * gib, Busy: 2}, 3, 60, 0.17, 1, "of the 0.0 of 2 cores other work left free holds 1"},
		{"busy, unmeasured: one per free core", engine.Machine{CPUs: 16, MemAvailable: 64 * gib, Busy: 10.5}, 3, 1000, 0, 5, "one cluster per core other work left free (5.5 of 16)"},
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
