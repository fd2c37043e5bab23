package engine

import (
	"runtime"
	"testing"
	"time"
)

// TestMeter checks that the meter sees this process's own work.
func TestMeter(t *testing.T) {
	m := StartMeter()
	deadline := time.Now().Add(200 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	if c := m.Cores(); c <= 0 || c > float64(runtime.NumCPU())+0.5 {
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
