package agent

import (
	"hash/fnv"
	"testing"
)

type serverID string

func TestPeerID(t *testing.T) {
	fnv64 := func(s string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s))
		return h.Sum64()
	}
	for _, id := range []string{"n1", "node-2", "S4RTcE8x"} {
		if got := PeerID(id); got != fnv64(id) || got == 0 {
			t.Errorf("PeerID(%q) = %d, want FNV-1a %d", id, got, fnv64(id))
		}
		// The same ID as a named string type and as bytes (RPCHeader.ID
		// at a send, ServerID where it is handled) is the same peer.
		if PeerID(serverID(id)) != PeerID([]byte(id)) || PeerID(id) != PeerID([]byte(id)) {
			t.Errorf("%q: string, named and byte forms differ", id)
		}
	}
	if PeerID("") != 0 || PeerID([]byte(nil)) != 0 {
		t.Error("an empty ID is not 0")
	}
	if PeerID("n1") == PeerID("n2") {
		t.Error("n1 and n2 collide")
	}
}

func TestEntries(t *testing.T) {
	for n, want := range map[int]int64{0: 0, 1: 1, 64: 1} {
		if got := Entries(n); got != want {
			t.Errorf("Entries(%d) = %d, want %d", n, got, want)
		}
	}
}
