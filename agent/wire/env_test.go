package wire

import (
	"encoding/json"
	"testing"
)

// TestNode: a GOFAULT_NODES entry decodes into Node, and Addr joins its
// host (127.0.0.1 when it has none) with a named port.
func TestNode(t *testing.T) {
	var nodes []Node
	if err := json.Unmarshal([]byte(`[{"name":"n1","ports":{"client":2379}},{"name":"n2","host":"10.0.0.2","ports":{"client":2479}}]`), &nodes); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		node       int
		port, want string
	}{
		{0, "client", "127.0.0.1:2379"},
		{1, "client", "10.0.0.2:2479"},
		{0, "peer", ""},
	} {
		if got := nodes[tc.node].Addr(tc.port); got != tc.want {
			t.Errorf("%s.Addr(%q) = %q, want %q", nodes[tc.node].Name, tc.port, got, tc.want)
		}
	}
}

func TestLeftTop(t *testing.T) {
	key := LeftKey("example.com/x.(*S).loop", "example.com/x.Start")
	if got := LeftTop(key); got != "example.com/x.(*S).loop" {
		t.Errorf("LeftTop(%q) = %q", key, got)
	}
}
