package instrument

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gofault/gofault/workdir"
)

// TestWaitForBuildDir: a second build of one build dir waits for the first
// (where workdir.Lock would refuse it), and gets the dir once it is
// released; a command's workdir.Lock on the work dir above does not block
// it.
func TestWaitForBuildDir(t *testing.T) {
	work := t.TempDir()
	release, err := workdir.Lock(work, "gofault run")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	dir := filepath.Join(work, "build")
	first, err := WaitForBuildDir(dir)
	if err != nil {
		t.Fatalf("build dir under a command's work dir lock: %v", err)
	}
	type result struct {
		release func()
		err     error
	}
	second := make(chan result, 1)
	go func() {
		r, err := WaitForBuildDir(dir)
		second <- result{r, err}
	}()
	select {
	case r := <-second:
		t.Fatalf("the second build did not wait for the first (err %v)", r.err)
	case <-time.After(200 * time.Millisecond):
	}
	first()
	select {
	case r := <-second:
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.release()
	case <-time.After(10 * time.Second):
		t.Fatal("the second build still waits after the first released the build dir")
	}
}
