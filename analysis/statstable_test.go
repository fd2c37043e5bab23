package analysis

import (
	"strings"
	"testing"
)

func TestWriteSieveTable(t *testing.T) {
	tests := []struct {
		name string
		st   Stats
		want []string
		not  []string
	}{
		{
			name: "none",
			st:   Stats{Totals: Counts{}},
			want: []string{"sieve: no lock-held, barrier or timeout I/O sites"},
		},
		{
			name: "rows",
			st: Stats{
				Packages: []PackageStats{
					{Package: "x.io/m/wal", Counts: Counts{"lock_held_sites": 3, "timeout_sites": 1, "sieve_sites": 4, "grouped_sites": 2}},
					{Package: "x.io/m/raft", Counts: Counts{}},
				},
				Totals: Counts{"lock_held_sites": 3, "timeout_sites": 1, "sieve_sites": 4, "grouped_sites": 2,
					"timeout_points": 5, "timeout_uncaptured": 1},
			},
			want: []string{"lock held", "wal  ", "50%", "total", "timeout points: 5 captured, 1 deadlines"},
			not:  []string{"raft"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := tt.st.WriteSieveTable(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("table lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tt.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("table has %q:\n%s", w, b.String())
				}
			}
		})
	}
}
