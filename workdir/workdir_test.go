package workdir

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestLock(t *testing.T) {
	dir := t.TempDir()
	release, err := Lock(dir, "gofault run --config x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A second holder is refused at once, told who holds it and what to do.
	_, err = Lock(dir, "gofault build")
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("second Lock = %v, want ErrBusy", err)
	}
	for _, want := range []string{"is used by gofault run --config x.yaml (PID " + strconv.Itoa(os.Getpid()), "--set workdir=DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	release()
	// Released: the next one gets it.
	release2, err := Lock(dir, "gofault build")
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	release2()
}
