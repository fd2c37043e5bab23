package agent

import (
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/gofault/gofault/agent/wire"
)

// maxInjected bounds the injected errors the process remembers: a trial
// injects a few, and a later one is matched by its text if not kept.
const maxInjected = 64

// injected are the error values the fault branches of this process
// returned (Injected), oldest first, at most maxInjected.
var injected struct {
	mu   sync.Mutex
	errs []error
}

// Injected records err as an error injected into this process and returns
// it: every generated fault branch returns its error through it
// (gofaultErrN), so that Ignored can tell the injected error from another
// one. It costs nothing at a call that is not struck.
func Injected(err error) error {
	injected.mu.Lock()
	if len(injected.errs) < maxInjected {
		injected.errs = append(injected.errs, err)
	}
	injected.mu.Unlock()
	return err
}

// ignoredOut is where Ignored's and markStrike's lines go: the test's stdout.
var ignoredOut io.Writer = os.Stdout

// isInjected reports whether err is, wraps (errors.Is) or quotes (its
// text holds the injected error's whole text: code that rebuilt the error
// from its message) an error injected into this process.
func isInjected(err error) bool {
	injected.mu.Lock()
	errs := injected.errs
	injected.mu.Unlock()
	for _, in := range errs {
		if errors.Is(err, in) || strings.Contains(err.Error(), in.Error()) {
			return true
		}
	}
	return false
}

// Ignored wraps, in a test build, a call of a _test.go file whose error
// result the test discards (an expression statement, a "_" in the error's
// place): f() becomes gofaultagent.Ignored(f()). It returns err as it is;
// when err is an error injected into this process, it first writes the
// call's file:line and the error to stdout, behind wire.IgnoredPrefix, so
// that gofault test can tell a test that went on after ignoring the
// injected error from code that swallowed it.
func Ignored(err error) error {
	if err != nil {
		reportIgnored(err)
	}
	return err
}

// Ignored2 is Ignored for a call with two results.
func Ignored2[T any](v T, err error) (T, error) {
	if err != nil {
		reportIgnored(err)
	}
	return v, err
}

// Ignored3 is Ignored for a call with three results.
func Ignored3[T, U any](v T, w U, err error) (T, U, error) {
	if err != nil {
		reportIgnored(err)
	}
	return v, w, err
}

// reportIgnored writes the line of Ignored for err when it is injected,
// naming the caller of Ignored (two frames up: the rewritten call keeps
// its line).
func reportIgnored(err error) {
	if !isInjected(err) {
		return
	}
	_, file, line, ok := runtime.Caller(2)
	if !ok {
		file, line = "?", 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	// One write of one line: -test.v's own lines go to stdout too, so
	// the line keeps its place among the test's reports.
	io.WriteString(ignoredOut, wire.IgnoredPrefix+file+":"+strconv.Itoa(line)+": "+msg+"\n")
}

// markStrikes is set at start-up when wire.EnvStrikes is "1": act writes
// wire.StrikeLine at every fault it carries out.
var markStrikes bool

// markStrike writes wire.StrikeLine to stdout in one write, before the
// fault takes effect, so that the line comes after every line the process
// wrote before the fault and before every line it writes after.
func markStrike() { io.WriteString(ignoredOut, wire.StrikeLine) }
