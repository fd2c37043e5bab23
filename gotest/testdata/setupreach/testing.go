package setupreach

import "testing"

// Stored is a test helper shipped in the package: a temp dir holding
// the record "a", written by Put.
func Stored(t testing.TB) string {
	dir := t.TempDir()
	if err := Put(dir, "a", []byte("x")); err != nil {
		t.Fatalf("setup: %v", err)
	}
	return dir
}
