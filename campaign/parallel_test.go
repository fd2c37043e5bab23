package campaign

import (
	"strings"
	"testing"
)

func TestAutoParallel(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name    string
		m       machine
		nodes   int
		trials  int
		want    int
		wantWhy string
	}{
		{"one per core", machine{CPUs: 2, MemAvailable: 16 * gib}, 3, 60, 2, "one cluster per core"},
		{"16 cores", machine{CPUs: 16, MemAvailable: 64 * gib}, 3, 1000, 16, "one cluster per core"},
		{"memory unknown", machine{CPUs: 4}, 3, 100, 4, "one cluster per core"},
		{"memory bounds it", machine{CPUs: 16, MemAvailable: 4 * gib}, 3, 100, 4, "4096 MiB available holds 4 clusters of 3 members at 1024 MiB each"},
		{"five members take more", machine{CPUs: 16, MemAvailable: 4 * gib}, 5, 100, 2, "holds 2 clusters of 5 members"},
		{"too little memory: still one", machine{CPUs: 8, MemAvailable: 512 << 20}, 3, 100, 1, "holds 0 clusters"},
		{"no more than the trials", machine{CPUs: 16, MemAvailable: 64 * gib}, 3, 5, 5, "no more than the 5 trials"},
		{"one core", machine{CPUs: 1, MemAvailable: 64 * gib}, 3, 100, 1, "one cluster per core"},
		{"cores unknown", machine{}, 3, 100, 1, "one cluster per core"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := autoParallel(tc.m, tc.nodes, tc.trials)
			if got != tc.want || !strings.Contains(why, tc.wantWhy) {
				t.Errorf("autoParallel = %d (%s), want %d (%s)", got, why, tc.want, tc.wantWhy)
			}
		})
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
