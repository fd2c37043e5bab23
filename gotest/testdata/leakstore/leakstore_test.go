package leakstore

import (
	"errors"
	"io/fs"
	"testing"
)

// TestStart accepts a failed disk (a *fs.PathError), and stops the server
// it started: with or without the fault it leaves only the janitor.
func TestStart(t *testing.T) {
	s, err := Start(t.TempDir())
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
}

// TestStartLeaky is TestStart on StartLeaky: it passes with the fault,
// and the planted bug leaves the server's loop running.
func TestStartLeaky(t *testing.T) {
	s, err := StartLeaky(t.TempDir())
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
}

// TestOpenLogLeaky accepts a failed disk and closes the log it opened: it
// passes with the fault, and the planted bug leaves the file open.
func TestOpenLogLeaky(t *testing.T) {
	f, err := OpenLogLeaky(t.TempDir())
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
