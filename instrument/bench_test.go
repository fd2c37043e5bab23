package instrument

import (
	"io/fs"
	"syscall"
	"testing"

	gofaultagent "github.com/gofault/gofault/agent"
)

//go:noinline
func plainCall(b []byte) (int, error) { return len(b), nil }

func gofaultErrBench(k int) error {
	switch k {
	default:
		return &fs.PathError{Op: "write", Path: "", Err: syscall.EIO}
	}
}

var sink int

// BenchmarkCall is the real call alone; BenchmarkRewrittenCall is the same
// call in exactly the form rewriteFile generates, with the site not live
// (no controller): the difference is the cost of one instrumented site.
func BenchmarkCall(b *testing.B) {
	buf := make([]byte, 8)
	for i := 0; i < b.N; i++ {
		n, err := plainCall(buf)
		if err != nil {
			b.Fatal(err)
		}
		sink += n
	}
}

func BenchmarkRewrittenCall(b *testing.B) {
	buf := make([]byte, 8)
	for i := 0; i < b.N; i++ {
		n, err := func() (int, error) {
			if k := gofaultagent.Fault(17); k != 0 {
				return *new(int), gofaultErrBench(k)
			}
			return /*line bench_test.go:43:70*/ plainCall(buf)
		}()
		if err != nil {
			b.Fatal(err)
		}
		sink += n
	}
}
