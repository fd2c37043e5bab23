package check

import (
	"testing"

	"github.com/gofault/gofault/record"
)

// digests adds one digest event per node at point.
func (b *trialB) digests(point string, byNode ...string) *trialB {
	for i := 0; i+1 < len(byNode); i += 2 {
		b.tr.Client = append(b.tr.Client, record.ClientEvent{Time: at(6500), Client: byNode[i] + "/0", Node: byNode[i],
			Kind: record.EvDigest, Msg: point, Digest: byNode[i+1]})
	}
	return b
}

func TestReplicas(t *testing.T) {
	tests := []struct {
		name string
		b    *trialB
		want verdictWant
	}{
		{"no digests", healthy(), verdictWant{}},
		{"all agree", healthy().digests("end", "n1", "rev 90 hash 7", "n2", "rev 90 hash 7", "n3", "rev 90 hash 7"), verdictWant{}},
		{"one member reported nothing", healthy().digests("end", "n1", "rev 90 hash 7", "n3", "rev 90 hash 7"), verdictWant{}},
		{"one member differs", healthy().digests("end", "n1", "rev 90 hash 7", "n2", "rev 90 hash 8", "n3", "rev 90 hash 7"),
			verdictWant{failed: true, symptom: `members' data differ at "end"`, nodes: []string{"n2"}, ev: "n2: rev 90 hash 8  ← differs"}},
		{"two members, no majority: the first is the reference", healthy().digests("end", "n2", "a", "n1", "b"),
			verdictWant{failed: true, symptom: `members' data differ at "end"`, nodes: []string{"n2"}}},
		{"the last digest of a member counts", healthy().digests("end", "n1", "x", "n2", "y").digests("end", "n2", "x"), verdictWant{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkVerdict(t, runOne(t, NameReplicas, &Input{Trial: &tt.b.tr}), tt.want)
		})
	}
}
