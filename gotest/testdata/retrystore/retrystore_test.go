package retrystore

import (
	"bytes"
	"testing"
)

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	want := []byte("hello")
	if err := Save(dir, "a", want); err != nil {
		t.Fatalf("save: %v", err)
	}
	got, err := Load(dir, "a")
	if err != nil {
		t.Fatalf("load after a save that succeeded: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("load = %q, want %q", got, want)
	}
}

func TestLoadMissing(t *testing.T) {
	if _, err := Load(t.TempDir(), "none"); err == nil {
		t.Fatal("load of a missing record succeeded")
	}
}

func TestNoIO(t *testing.T) {
	if attempts < 1 {
		t.Fatal("no attempts")
	}
}
