package wire

import (
	"slices"
	"testing"
)

func TestObserveEventRoundTrip(t *testing.T) {
	vals := []int64{0, -3, 1 << 40, 7}
	in := Events{Events: []Event{{Kind: EvObserve, Time: 5, A: 2, B: 8, C: 1, D: 3, Data: AppendValues(nil, vals)}}}
	buf := AppendEvents(nil, &in)
	var out Events
	if err := DecodeEvents(buf[5:], &out); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeValues(out.Events[0].Data)
	if err != nil || !slices.Equal(got, vals) || out.Events[0].B != 8 {
		t.Fatalf("round trip %+v %v %v", out.Events, got, err)
	}
	if _, err := DecodeValues([]byte{0x80}); err == nil {
		t.Error("truncated values decoded")
	}
	var r Response
	if err := DecodeResponse(AppendResponse(nil, &Response{ID: 1, Action: ActStall, Arg: 9})[5:], &r); err != nil || r.Action != ActStall || r.Arg != 9 {
		t.Errorf("stall response %+v %v", r, err)
	}
}
