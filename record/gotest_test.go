package record

import (
	"testing"
	"time"
)

func TestTrialTest(t *testing.T) {
	at := time.Unix(1, 0)
	for _, tc := range []struct {
		name   string
		client []ClientEvent
		want   string
	}{
		{"test trial", []ClientEvent{TestEvent(at, "n1", "TestSaveLoad")}, "TestSaveLoad"},
		{"member rule's process node", []ClientEvent{TestEvent(at, "n0", "TestRaft_Snap")}, "TestRaft_Snap"},
		{"after other events", []ClientEvent{{Client: "n1/w", Kind: EvProgress}, TestEvent(at, "n1", "TestX")}, "TestX"},
		{"a workload's phase", []ClientEvent{{Client: "n1/w", Kind: EvPhase, Msg: "ran load"}}, ""},
		{"a test client's other event", []ClientEvent{{Client: "n1/test", Kind: EvError, Msg: "ran TestX"}}, ""},
		{"cluster trial", nil, ""},
	} {
		tr := &Trial{Client: tc.client}
		if got := tr.Test(); got != tc.want {
			t.Errorf("%s: Test() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
