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

// TestParseCPUTimes reads /proc/stat's all-CPU line: busy is every state
// but idle and iowait, guest time not counted twice.
func TestParseCPUTimes(t *testing.T) {
	stat := []byte("cpu  100 5 50 800 40 3 2 0 7 0\ncpu0 50 2 25 400 20 1 1 0 0 0\nintr 1\n")
	busy, total, ok := parseCPUTimes(stat)
	if !ok || busy != 160 || total != 1000 {
		t.Errorf("parseCPUTimes = %d, %d, %v; want 160, 1000, true", busy, total, ok)
	}
	if _, _, ok := parseCPUTimes([]byte("intr 1\n")); ok {
		t.Error("a stat without the cpu line parsed")
	}
}
