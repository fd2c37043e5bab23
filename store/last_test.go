package store

import "testing"

// TestLastRemembered: Remember's path is what Last returns.
func TestLastRemembered(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if got := Last(); got != "" {
		t.Fatalf("Last() = %q before any run", got)
	}
	Remember("/work/x/.gofault/gofault.db")
	if got := Last(); got != "/work/x/.gofault/gofault.db" {
		t.Fatalf("Last() = %q", got)
	}
}
