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
