package instrument

import (
	"testing"

	"github.com/gofault/gofault/catalog"
)

func TestObserveText(t *testing.T) {
	vars := []catalog.ObserveVar{{Name: "msg.Term", Expr: "m.Term"}, {Name: "node.Term()", Expr: "s.Term()"}}
	h := &catalog.ObservePoint{Index: 3, When: catalog.ObserveHandled, Msg: "m", Ptr: true, Type: "Type", From: "From", To: "To", Vars: vars}
	want := "defer func() { if gofaultagent.Observing() { if m != nil { gofaultagent.Observe(3, int64(m.Type), uint64(m.From), uint64(m.To), int64(m.Term), int64(s.Term())) } } }();"
	if got := observeText(h); got != want {
		t.Errorf("handled:\n got %s\nwant %s", got, want)
	}
	s := &catalog.ObservePoint{Index: 0, When: catalog.ObserveSend, Msg: "msgs", Slice: true, Type: "Type", From: "From", To: "To",
		Vars: []catalog.ObserveVar{{Name: "msg.Term", Expr: "gofaultmsg.Term"}}}
	want = "if gofaultagent.Observing() { for _, gofaultmsg := range msgs { gofaultagent.Observe(0, int64(gofaultmsg.Type), uint64(gofaultmsg.From), uint64(gofaultmsg.To), int64(gofaultmsg.Term)) } };"
	if got := observeText(s); got != want {
		t.Errorf("send:\n got %s\nwant %s", got, want)
	}
}

// TestObserveTextMessages: a peer message struct's hook reports type 0,
// hashes string and byte-slice IDs and leaves an unknown receiver at 0.
func TestObserveTextMessages(t *testing.T) {
	for _, tt := range []struct {
		name string
		pt   catalog.ObservePoint
		want string
	}{
		{"transport send", catalog.ObservePoint{Index: 1, When: catalog.ObserveSend, Msg: "args", Message: "AppendEntriesRequest", Ptr: true, From: "args.ID", FromHash: true, To: "id", ToHash: true,
			Type: "args.Entries", TypeEntries: true, Vars: []catalog.ObserveVar{{Name: "msg.Term", Expr: "args.Term"}}},
			"if gofaultagent.Observing() { if args != nil { gofaultagent.Observe(1, gofaultagent.Entries(len(args.Entries)), gofaultagent.PeerID(args.ID), gofaultagent.PeerID(id), int64(args.Term)) } };"},
		{"encoder, no receiver", catalog.ObservePoint{Index: 2, When: catalog.ObserveSend, Msg: "ae", Message: "appendEntry", Ptr: true, From: "ae.leader", FromHash: true},
			"if gofaultagent.Observing() { if ae != nil { gofaultagent.Observe(2, 0, gofaultagent.PeerID(ae.leader), 0) } };"},
		{"integer IDs as expressions", catalog.ObservePoint{Index: 3, When: catalog.ObserveHandled, Msg: "m", Message: "msg", From: "m.src", To: "r.id"},
			"if gofaultagent.Observing() { gofaulttyp, gofaultfrom := int64(0), uint64(uint64(m.src)); defer func() { gofaultagent.Observe(3, gofaulttyp, gofaultfrom, uint64(r.id)) }() };"},
		// The message's fields are read as the handler starts (it may
		// give the message back to a pool), the node's as it returns.
		{"handled, message captured", catalog.ObservePoint{Index: 4, When: catalog.ObserveHandled, Msg: "ae", Ptr: true, Message: "appendEntry",
			From: "ae.leader", FromHash: true, To: "n.id", ToHash: true, Type: "ae.entries", TypeEntries: true,
			Vars: []catalog.ObserveVar{{Name: "msg.term", Expr: "ae.term"}, {Name: "msg.commit", Expr: "ae.commit"}, {Name: "node.term", Expr: "n.term"}}},
			"if gofaultagent.Observing() && ae != nil { gofaulttyp, gofaultfrom, gofaultmsg := int64(gofaultagent.Entries(len(ae.entries))), uint64(gofaultagent.PeerID(ae.leader)), [...]int64{int64(ae.term), int64(ae.commit)}; " +
				"defer func() { gofaultagent.Observe(4, gofaulttyp, gofaultfrom, gofaultagent.PeerID(n.id), gofaultmsg[0], gofaultmsg[1], int64(n.term)) }() };"},
	} {
		if got := observeText(&tt.pt); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
