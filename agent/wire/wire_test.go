package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"testing"
)

func sampleFrames() []byte {
	var b []byte
	b = AppendHello(b, &Hello{Version: Version, Role: RoleAgent, Node: "n1", Trial: "c1-7", PID: 4242, CatalogHash: "abcdef"})
	b = AppendWelcome(b, &Welcome{Version: Version, Plan: Plan{Epoch: 1, Flags: FlagStates | FlagStacks, Sites: []uint32{0, 5, 64, 1 << 20}}})
	b = AppendPlan(b, &Plan{Epoch: 2})
	b = AppendPlan(b, &Plan{Epoch: 3, Sites: []uint32{4}, Holding: []uint64{9, 1 << 40}})
	b = AppendRequest(b, &Request{ID: 8, Site: 3, Goroutine: 7})
	b = AppendRequest(b, &Request{ID: 9, Site: 64, Goroutine: 0xc000123456, Task: 3, Inst: 0xc0001, State: 12, HasRole: true, Role: 2,
		Stack: []Frame{{Func: "main.f", File: "/x/main.go", Line: 10}, {Func: "main.main", File: "/x/main.go", Line: 3}}, Peer: "127.0.0.1:2380"})
	b = AppendResponse(b, &Response{ID: 9, Action: ActDelay, Arg: 1500000000})
	b = AppendResponse(b, &Response{ID: 10, Action: ActError, Arg: 2})
	b = AppendResponse(b, &Response{ID: 11, Action: ActHold, Arg: 15000000000})
	b = AppendEvents(b, &Events{Events: []Event{
		{Kind: EvState, Time: 1700000000000000000, A: 1, B: 2, C: 3, D: 4},
		{Kind: EvWorkload, Time: -5, Data: []byte(`{"kind":"progress"}`)},
		{Kind: EvRole, Time: 1700000000000000001, A: 2},
	}})
	b = AppendBye(b)
	return b
}

// decodeAny decodes a frame by type and re-encodes it.
func decodeAny(t Type, p []byte) (any, []byte, error) {
	switch t {
	case THello:
		var m Hello
		err := DecodeHello(p, &m)
		return m, AppendHello(nil, &m), err
	case TWelcome:
		var m Welcome
		err := DecodeWelcome(p, &m)
		return m, AppendWelcome(nil, &m), err
	case TPlan:
		var m Plan
		err := DecodePlan(p, &m)
		return m, AppendPlan(nil, &m), err
	case TRequest:
		var m Request
		err := DecodeRequest(p, &m)
		return m, AppendRequest(nil, &m), err
	case TResponse:
		var m Response
		err := DecodeResponse(p, &m)
		return m, AppendResponse(nil, &m), err
	case TEvents:
		var m Events
		err := DecodeEvents(p, &m)
		return m, AppendEvents(nil, &m), err
	case TBye:
		if len(p) != 0 {
			return nil, nil, ErrMalformed
		}
		return nil, AppendBye(nil), nil
	}
	return nil, nil, ErrMalformed
}

func TestRoundTrip(t *testing.T) {
	in := sampleFrames()
	r := NewReader(bytes.NewReader(in))
	var out []byte
	var types []Type
	for {
		typ, p, err := r.ReadFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		_, re, err := decodeAny(typ, p)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		types = append(types, typ)
		out = append(out, re...)
	}
	if !bytes.Equal(in, out) {
		t.Fatal("re-encoded frames differ from the originals")
	}
	want := []Type{THello, TWelcome, TPlan, TPlan, TRequest, TRequest, TResponse, TResponse, TResponse, TEvents, TBye}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("types = %v, want %v", types, want)
	}
}

// TestPlanHolding: a plan's held delays (Holding) round-trip; a plan
// without them is encoded as before version 12 (its sites last), and
// decoding into a reused plan clears the held delays of the last one.
func TestPlanHolding(t *testing.T) {
	old := []byte{3, 0, 2, 4, 1} // epoch 3, no flags, sites 4 and 5: version 11's bytes
	if got := AppendPlan(nil, &Plan{Epoch: 3, Sites: []uint32{4, 5}})[5:]; !bytes.Equal(got, old) {
		t.Fatalf("a plan without held delays = %v, want version 11's %v", got, old)
	}
	var m Plan
	if err := DecodePlan(AppendPlan(nil, &Plan{Epoch: 2, Holding: []uint64{7, 300}})[5:], &m); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Holding, []uint64{7, 300}) {
		t.Fatalf("Holding = %v, want [7 300]", m.Holding)
	}
	if err := DecodePlan(old, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Holding) != 0 || !reflect.DeepEqual(m.Sites, []uint32{4, 5}) {
		t.Fatalf("version 11's plan decoded as %+v, want sites [4 5] and no held delay", m)
	}
	if err := DecodePlan(append(old, 3, 1), &m); !errors.Is(err, ErrMalformed) {
		t.Fatalf("held delays beyond the payload: err = %v, want ErrMalformed", err)
	}
}

func TestDecodeValues(t *testing.T) {
	for _, want := range []Request{
		{ID: 1, Site: 2, Goroutine: 3, Task: 4, Inst: 5, State: 6, Stack: []Frame{{"f", "g", 7}}},
		{ID: 1, Site: 2, HasRole: true, Role: 0},                                                // a known role of value 0 (etcd's StateFollower)
		{ID: 1, Site: 2, HasRole: true, Role: -3},                                               // any int64
		{ID: 1, Site: 2, Peer: "127.0.0.1:40123"},                                               // a peer-network call's peer
		{ID: 1, Site: 2, Member: "node-2", MemberSeq: 2},                                        // an in-process cluster's member
		{ID: 1, Site: 2, Member: "node-2", MemberSeq: 2, Peer: "addr-3", PeerSeq: 3, Ranked: 3}, // a send to another member
		{ID: 1, Site: 2, After: true},                                                           // the call of a crash-after returned
		{ID: 1, Site: 2, After: true, HasRole: true, Role: 2},
	} {
		b := AppendRequest(nil, &want)
		got := Request{HasRole: true, Role: 9} // decoding resets a reused request
		if err := DecodeRequest(b[5:], &got); err != nil {
			t.Fatal(err)
		}
		if got.Stack == nil {
			got.Stack = want.Stack
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	}
}

func TestRejects(t *testing.T) {
	frame := func(typ Type, payload ...byte) []byte {
		b, off := BeginFrame(nil, typ)
		return EndFrame(append(b, payload...), off)
	}
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, MaxFrame+1)
	tests := []struct {
		name  string
		input []byte
		want  error
	}{
		{"zero-length frame", []byte{0, 0, 0, 0}, ErrFrameSize},
		{"oversized frame", huge, ErrFrameSize},
		{"truncated frame", frame(TPlan, 1, 2, 3)[:6], io.ErrUnexpectedEOF},
		{"plan with trailing bytes", frame(TPlan, 1, 0, 0, 9), ErrMalformed},
		{"plan count beyond payload", frame(TPlan, 1, 0, 200, 1), ErrMalformed},
		{"plan site beyond uint32", frame(TPlan, append([]byte{1, 0, 1}, binary.AppendUvarint(nil, 1<<33)...)...), ErrMalformed},
		{"response with unknown action", frame(TResponse, 1, 10, 0), ErrMalformed},
		{"event of unknown kind", frame(TEvents, 77, 0, 0, 0, 0, 0, 0), ErrMalformed},
		{"request with a bad role flag", frame(TRequest, 1, 2, 3, 0, 0, 0, 7, 0), ErrMalformed},
		{"string longer than payload", frame(THello, 1, 1, 100, 'a'), ErrMalformed},
		{"bad varint", frame(TRequest, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(tt.input))
			typ, p, err := r.ReadFrame()
			if err == nil {
				_, _, err = decodeAny(typ, p)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestReaderGrowsForLargeFrames(t *testing.T) {
	big := Events{Events: []Event{{Kind: EvWorkload, Data: bytes.Repeat([]byte("x"), 200<<10)}}}
	b := AppendEvents(nil, &big)
	r := NewReader(bytes.NewReader(b))
	typ, p, err := r.ReadFrame()
	if err != nil || typ != TEvents {
		t.Fatalf("ReadFrame: %v %v", typ, err)
	}
	var got Events
	if err := DecodeEvents(p, &got); err != nil || len(got.Events[0].Data) != 200<<10 {
		t.Fatalf("DecodeEvents: %v", err)
	}
}

func TestEventSize(t *testing.T) {
	e := Event{Kind: EvState, Time: 99, A: 1 << 40, Data: []byte("abc")}
	b := AppendEvent(nil, &e)
	if got := EventSize(append(b, 1, 2, 3)); got != len(b) {
		t.Fatalf("EventSize = %d, want %d", got, len(b))
	}
	if got := EventSize(b[:len(b)-1]); got != -1 {
		t.Fatalf("EventSize of a truncated event = %d, want -1", got)
	}
}

// FuzzReader feeds arbitrary bytes to the reader and the decoders: they must
// never panic, never accept an oversized frame, and whatever they accept must
// re-encode to a frame that decodes to the same message.
func FuzzReader(f *testing.F) {
	f.Add(sampleFrames())
	f.Add([]byte{0, 0, 0, 1, byte(TBye)})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		for {
			typ, p, err := r.ReadFrame()
			if err != nil {
				return
			}
			if len(p)+1 > MaxFrame {
				t.Fatalf("accepted a %d-byte frame", len(p)+1)
			}
			m, re, err := decodeAny(typ, p)
			if err != nil {
				continue
			}
			m2, _, err := decodeAny(typ, re[5:])
			if err != nil {
				t.Fatalf("re-encoded %v does not decode: %v", typ, err)
			}
			if !reflect.DeepEqual(normalize(m), normalize(m2)) {
				t.Fatalf("%v changed in a round trip: %+v vs %+v", typ, m, m2)
			}
		}
	})
}

// normalize makes empty and nil slices compare equal.
func normalize(m any) any {
	switch v := m.(type) {
	case Request:
		if len(v.Stack) == 0 {
			v.Stack = nil
		}
		return v
	case Plan:
		if len(v.Sites) == 0 {
			v.Sites = nil
		}
		if len(v.Holding) == 0 {
			v.Holding = nil
		}
		return v
	case Welcome:
		if len(v.Plan.Sites) == 0 {
			v.Plan.Sites = nil
		}
		return v
	case Events:
		for i := range v.Events {
			if len(v.Events[i].Data) == 0 {
				v.Events[i].Data = nil
			}
		}
		if len(v.Events) == 0 {
			v.Events = nil
		}
		return v
	}
	return m
}
