package memcluster

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// TestReplicate: every acknowledged entry is in every member's log.
func TestReplicate(t *testing.T) {
	c := &Cluster{}
	for _, id := range []string{"leader", "follower-1", "follower-2"} {
		c.Members = append(c.Members, New(id, t.TempDir()))
	}
	var acked []string
	for i := range 5 {
		e := fmt.Sprintf("e%d", i)
		if err := c.Replicate(e); err != nil {
			t.Logf("%s not acknowledged: %v", e, err)
			continue
		}
		acked = append(acked, e)
	}
	for _, m := range c.Members {
		var got []string
		var err error
		for range 3 { // a failed read is retried
			if got, err = m.Entries(); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", m.id, err)
		}
		for _, e := range acked {
			if !slices.Contains(got, e) {
				t.Errorf("%s lost acknowledged entry %s (log %v)", m.id, e, got)
			}
		}
	}
}

// TestNoIO reaches no site.
func TestNoIO(t *testing.T) {
	if New("a", filepath.Join("x", "y")).id != "a" {
		t.Fatal("id")
	}
}
