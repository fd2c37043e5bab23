package ignoredstore

import "testing"

// TestOpenIgnored discards Open's error: when Open fails, the nil store
// panics at Put (the test's assumption, not a bug).
func TestOpenIgnored(t *testing.T) {
	s, _ := Open(t.TempDir())
	s.Put(1)
	if s.Len() != 1 {
		t.Fatalf("len %d, want 1", s.Len())
	}
}

// TestCreate checks Create's error: when Create's write fails it gets a
// nil store with a nil error and panics at Put (the planted bug).
func TestCreate(t *testing.T) {
	s, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Put(1)
	if s.Len() != 1 {
		t.Fatalf("len %d, want 1", s.Len())
	}
}
