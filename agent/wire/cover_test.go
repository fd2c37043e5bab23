package wire

import (
	"slices"
	"testing"
)

func TestCoverEventRoundTrip(t *testing.T) {
	for _, blocks := range [][]uint32{nil, {0}, {0, 1, 2}, {5, 127, 128, 1 << 20, 1<<32 - 1}} {
		in := Events{Events: []Event{{Kind: EvCover, Time: 5, Data: AppendBlocks(nil, blocks)}}}
		buf := AppendEvents(nil, &in)
		var out Events
		if err := DecodeEvents(buf[5:], &out); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeBlocks(nil, out.Events[0].Data)
		if err != nil || !slices.Equal(got, blocks) || out.Events[0].Kind != EvCover {
			t.Errorf("round trip of %v: %v %v", blocks, got, err)
		}
	}
	if _, err := DecodeBlocks(nil, []byte{0x80}); err == nil {
		t.Error("truncated blocks decoded")
	}
	// An index past 32 bits is malformed.
	over := AppendBlocks(nil, []uint32{1<<32 - 1})
	over = append(over, 1)
	if _, err := DecodeBlocks(nil, over); err == nil {
		t.Error("index past 1<<32-1 decoded")
	}
}
