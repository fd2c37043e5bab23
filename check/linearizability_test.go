package check

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/record"
)

func TestLinearizability(t *testing.T) {
	tests := []struct {
		name string
		ops  []record.ClientEvent
		in   Input
		want verdictWant
	}{
		{"empty", nil, Input{}, verdictWant{}},
		{"sequential", []record.ClientEvent{
			opEv("n1/0", "put", "a", "1", "", "", 0, 10, false),
			opEv("n2/0", "get", "a", "", "", "1", 20, 30, false),
			opEv("n3/0", "cas", "a", "2", "1", "true", 40, 50, false),
			opEv("n1/0", "cas", "a", "3", "1", "false", 60, 70, false),
			opEv("n2/0", "delete", "a", "", "", "", 80, 90, false),
			opEv("n3/0", "get", "a", "", "", "", 100, 110, false),
		}, Input{}, verdictWant{}},
		{"concurrent reads either side", []record.ClientEvent{
			opEv("n1/0", "put", "a", "1", "", "", 0, 100, false),
			opEv("n2/0", "get", "a", "", "", "1", 10, 20, false),
			opEv("n3/0", "get", "a", "", "", "", 30, 40, false), // linearized before the put
		}, Input{}, verdictWant{failed: true, symptom: "history not linearizable", ev: "key a"}},
		{"stale read", []record.ClientEvent{
			opEv("n1/0", "put", "a", "1", "", "", 0, 10, false),
			opEv("n1/0", "put", "a", "2", "", "", 20, 30, false),
			opEv("n2/0", "get", "a", "", "", "1", 40, 50, false),
			opEv("n3/0", "put", "b", "x", "", "", 0, 10, false),
			opEv("n3/0", "get", "b", "", "", "x", 20, 30, false),
		}, Input{}, verdictWant{failed: true, symptom: "history not linearizable", ev: `n2/0 get(a) → "1"`}},
		{"unknown put observed later", []record.ClientEvent{
			opEv("n1/0", "put", "a", "1", "", "", 0, 10, true),
			opEv("n2/0", "get", "a", "", "", "1", 500, 510, false),
		}, Input{}, verdictWant{}},
		{"unknown put never observed", []record.ClientEvent{
			opEv("n1/0", "put", "a", "1", "", "", 0, 10, true),
			opEv("n2/0", "get", "a", "", "", "", 500, 510, false),
		}, Input{}, verdictWant{}},
		{"unknown cas applies", []record.ClientEvent{
			opEv("n1/0", "put", "a", "1", "", "", 0, 10, false),
			opEv("n2/0", "cas", "a", "2", "1", "", 20, 30, true),
			opEv("n3/0", "get", "a", "", "", "2", 40, 50, false),
		}, Input{}, verdictWant{}},
		{"unknown get dropped", []record.ClientEvent{
			opEv("n1/0", "put", "a", "1", "", "", 0, 10, false),
			opEv("n2/0", "get", "a", "", "", "zzz", 20, 30, true),
		}, Input{}, verdictWant{}},
		{"failed cas that should have succeeded", []record.ClientEvent{
			opEv("n1/0", "put", "a", "1", "", "", 0, 10, false),
			opEv("n2/0", "cas", "a", "2", "1", "false", 20, 30, false),
		}, Input{}, verdictWant{failed: true, symptom: "history not linearizable"}},
		{"timeout is unknown", []record.ClientEvent{
			opEv("n1/0", "put", "a", "1", "", "", 0, 10, false),
		}, Input{LinearizabilityTimeout: time.Nanosecond}, verdictWant{unknown: true, symptom: "linearizability search timed out"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newTrial("n1", "n2", "n3")
			b.tr.Client = tc.ops
			in := tc.in
			in.Trial = &b.tr
			checkVerdict(t, runOne(t, NameLinearizability, &in), tc.want)
		})
	}
}

// TestLinearizabilityShrinksAndVisualizes: a failing verdict keeps a
// handful of operations, and Run hands back porcupine's drawing of the key,
// which the evidence names in the trial's directory; nothing is written.
func TestLinearizabilityShrinksAndVisualizes(t *testing.T) {
	b := newTrial("n1", "n2")
	b.tr.Dir = "/trials/1-3"
	// Many fine operations around one stale read.
	for i := 0; i < 30; i++ {
		b.tr.Client = append(b.tr.Client, opEv("n1/0", "put", "a", string(rune('a'+i%26)), "", "", i*100, i*100+10, false))
	}
	b.tr.Client = append(b.tr.Client, opEv("n2/0", "get", "a", "", "", "a", 5000, 5010, false))
	j, err := Run(context.Background(), b.input(Input{Visualize: true}), []string{NameLinearizability})
	if err != nil {
		t.Fatal(err)
	}
	v := j.Verdicts[0]
	if !v.Failed {
		t.Fatalf("not failed: %+v", v)
	}
	// The evidence keeps a handful of operations, not all 31.
	if len(v.Evidence) > 6 {
		t.Errorf("evidence not reduced:\n%v", v.Evidence)
	}
	if len(j.Visuals) != 1 || j.Visuals[0].Name != "linearizability-a.html" || j.Visuals[0].Checker != NameLinearizability ||
		!bytes.Contains(j.Visuals[0].Data, []byte("<html")) {
		t.Fatalf("visuals %+v, want one drawing of key a", j.Visuals)
	}
	const line = "visualization: /trials/1-3/linearizability-a.html"
	if v.Evidence[len(v.Evidence)-1] != line {
		t.Errorf("evidence ends %q, want %q", v.Evidence[len(v.Evidence)-1], line)
	}
	// A drawing the runner could not write: the verdict says why.
	Unwritten(j.Verdicts, b.tr.Dir, j.Visuals[0], errors.New("disk full"))
	if got := v.Evidence[len(v.Evidence)-1]; got != "visualization failed: disk full" {
		t.Errorf("evidence ends %q after Unwritten", got)
	}
	// Check alone draws nothing, and names no file.
	if v := (Linearizability{}).Check(context.Background(), b.input(Input{Visualize: true})); strings.Contains(strings.Join(v.Evidence, "\n"), "visualization") {
		t.Errorf("Check drew: %v", v.Evidence)
	}
}

func TestLinearizabilityCancelled(t *testing.T) {
	b := newTrial("n1")
	b.tr.Client = []record.ClientEvent{opEv("n1/0", "put", "a", "1", "", "", 0, 10, false)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := Linearizability{}.Check(ctx, &Input{Trial: &b.tr})
	if v.Failed || !v.Unknown {
		t.Fatalf("%+v", v)
	}
}
