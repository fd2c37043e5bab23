package memnet

import (
	"fmt"
	"testing"
)

// TestQuorum: every acknowledged entry is on a majority of the members.
func TestQuorum(t *testing.T) {
	net := NewNet()
	leader := Join(net, "leader", "addr-1")
	members := []*Member{leader, Join(net, "follower-1", "addr-2"), Join(net, "follower-2", "addr-3")}
	for _, m := range members {
		m.Start()
	}
	var acked []string
	for i := range 5 {
		e := fmt.Sprintf("e%d", i)
		if err := leader.Commit(e, []string{"addr-2", "addr-3"}); err != nil {
			t.Logf("%s not acknowledged: %v", e, err)
			continue
		}
		acked = append(acked, e)
	}
	for _, e := range acked {
		on := 0
		for _, m := range members {
			for _, got := range m.Entries() {
				if got == e {
					on++
					break
				}
			}
		}
		if 2*on <= len(members) {
			t.Errorf("acknowledged entry %s is on %d of %d members", e, on, len(members))
		}
	}
}
