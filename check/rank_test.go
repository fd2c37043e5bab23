package check

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

func TestRankGuarantees(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		// The etcd crash campaign's guarantees: the lost event first, the
		// mismatch (wrong data) next, then order.
		{[]string{"watch-progress", "revision-monotonic", "watch-mismatch", "watch-lost-event"},
			[]string{"watch-lost-event", "watch-mismatch", "revision-monotonic", "watch-progress"}},
		{[]string{"recovery", "write-lost", "write-applied-twice"}, []string{"write-lost", "write-applied-twice", "recovery"}},
		{[]string{"stream-stalled", "message-duplicated", "message-lost"}, []string{"message-lost", "message-duplicated", "stream-stalled"}},
		// Unknown names rank with order, ahead of progress; duplicates go.
		{[]string{"recovery", "my-guarantee", "recovery"}, []string{"my-guarantee", "recovery"}},
	} {
		if got := RankGuarantees(tc.in); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("RankGuarantees(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestGuarantees(t *testing.T) {
	for _, tc := range []struct {
		symptom string
		want    []string
	}{
		{"workload saw watch-lost-event violated", []string{"watch-lost-event"}},
		{"workload saw [revision-monotonic watch-progress] violated", []string{"revision-monotonic", "watch-progress"}},
		{"client n* made no progress for 3s", nil},
	} {
		if got := Guarantees(tc.symptom); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Guarantees(%q) = %q, want %q", tc.symptom, got, tc.want)
		}
	}
}

// TestRank orders failing verdicts as a trial's failures would be: lost
// data, wrong data, order, crash, unknown checkers, progress (slow before
// hang: it names the member that stalled the others), log.
func TestRank(t *testing.T) {
	type f struct{ checker, symptom string }
	want := []f{
		{NameViolations, "workload saw watch-lost-event violated"},
		{NameViolations, "workload saw [revision-monotonic watch-lost-event] violated"}, // the old set form ranks by its best
		{NameReplicas, "members' data differ"},
		{NameViolations, "workload saw watch-mismatch violated"},
		{NameViolations, "workload saw revision-monotonic violated"},
		{NameLinearizability, "key k not linearizable"},
		{NameCrash, "node n* panicked"},
		{"my-oracle", "something"},
		{NameViolations, "workload saw recovery violated"},
		{NameRecovery, "cluster did not recover"},
		{NameSlow, "cluster slowed"},
		{NameHang, "client n* made no progress for 3s"},
		{NameGray, "n* unreachable from clients"},
		{NameLog, "new error log at x.go: boom"},
	}
	got := append([]f(nil), want...)
	for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
		got[i], got[j] = got[j], got[i]
	}
	sort.SliceStable(got, func(i, j int) bool {
		return Rank(got[i].checker, got[i].symptom) < Rank(got[j].checker, got[j].symptom)
	})
	// The two lost violations tie; compare checkers only for them.
	for i := range want {
		if got[i].checker != want[i].checker || (i > 1 && got[i].symptom != want[i].symptom) {
			t.Fatalf("rank order:\n%v\nwant:\n%v", got, want)
		}
	}
}

func TestSymptomKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"client n2/0 made no progress for 3s", "client n* made no progress for 3s"},
		{"node n13 exited with status 2", "node n* exited with status 2"},
		{"panic in snapshot", "panic in snapshot"},
	}
	for _, tt := range tests {
		if got := SymptomKey(tt.in); got != tt.want {
			t.Errorf("SymptomKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
