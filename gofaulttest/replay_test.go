package gofaulttest

import (
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestReplayVerdict(t *testing.T) {
	crash := record.Injection{Node: "n2", SiteID: "server.snap:os.Rename#1", Kind: catalog.KindCrash, Occurrence: 3}
	f := &Finding{ID: "2ee8b133dc", Trial: "1-4", Checker: "replicas", Injections: []record.Injection{crash}}
	baseline := &record.Trial{ID: "2-0", Policy: record.BaselinePolicy, Status: record.StatusFailed,
		Verdicts: []record.Verdict{{Checker: "replicas", Failed: true}}}
	replay := func(id string, status record.Status, injected bool, failed ...string) *record.Trial {
		tr := &record.Trial{ID: id, Policy: "replay", Status: status, Dir: "/w/" + id, Err: "cluster not ready"}
		if injected {
			tr.Injections = []record.Injection{crash}
		}
		for _, c := range failed {
			tr.Verdicts = append(tr.Verdicts, record.Verdict{Checker: c, Failed: true, Symptom: c + " failed"})
		}
		return tr
	}
	tests := []struct {
		name   string
		trials []*record.Trial
		want   []string // substrings, one per failure
		notes  int
	}{
		{"fixed: no replay fails its checker", []*record.Trial{baseline, replay("2-1", record.StatusOK, true), replay("2-2", record.StatusFailed, true, "log")}, nil, 1},
		{"the bug is still there", []*record.Trial{replay("2-1", record.StatusOK, true), replay("2-2", record.StatusFailed, true, "replicas")},
			[]string{"finding 2ee8b133dc recurred in replay 2-2: [replicas] replicas failed (logs /w/2-2)"}, 0},
		{"a replay that did not get as far counts for nothing", []*record.Trial{replay("2-1", record.StatusOK, false), replay("2-2", record.StatusOK, true)}, nil, 1},
		{"no replay reached the faults", []*record.Trial{replay("2-1", record.StatusOK, false), replay("2-2", record.StatusOK, false)},
			[]string{"none of 2 replays injected the recorded faults of finding 2ee8b133dc"}, 2},
		{"a replay that could not run", []*record.Trial{replay("2-1", record.StatusError, false), replay("2-2", record.StatusOK, true)},
			[]string{"replay 2-1 could not run: cluster not ready"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, notes := replayVerdict(f, tt.trials, nil)
			if len(got) != len(tt.want) || len(notes) != tt.notes {
				t.Fatalf("replayVerdict = %q, notes %q; want %d failures like %q and %d notes", got, notes, len(tt.want), tt.want, tt.notes)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("failure %d = %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}
