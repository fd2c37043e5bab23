package setupreach

import "testing"

// TestPut reaches Put's write itself.
func TestPut(t *testing.T) {
	if err := Put(t.TempDir(), "b", []byte("y")); err != nil {
		t.Fatal(err)
	}
}

// TestGet reaches Put's write only in its setup (Stored), and Get's read
// itself.
func TestGet(t *testing.T) {
	dir := Stored(t)
	if _, err := Get(dir, "a"); err != nil {
		t.Fatal(err)
	}
}
