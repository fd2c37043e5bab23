package agent

import (
	"bytes"
	"runtime"
	"strings"
)

// StackOf wraps runtime.Stack for the instrumented program: a call
// runtime.Stack(buf, all) in a test build is rewritten to
// StackOf(runtime.Stack)(buf, all). With all, the goroutines the agent
// started (its connection's reader and event flusher, which live as long
// as the process) are left out of what is written to buf, so that a
// test's goroutine leak check (etcd's testutil, goleak) does not take
// them for goroutines the test leaked.
func StackOf(stack func(buf []byte, all bool) int) func(buf []byte, all bool) int {
	return func(buf []byte, all bool) int {
		n := stack(buf, all)
		if !all {
			return n
		}
		return dropOwn(buf[:n])
	}
}

// agentPackage is the agent's import path as it shows in stack traces.
var agentPackage = func() string {
	pc, _, _, _ := runtime.Caller(0)
	name := runtime.FuncForPC(pc).Name() // <path>.init.func1 or <path>.glob..func1
	slash := strings.LastIndex(name, "/")
	dot := strings.Index(name[slash+1:], ".")
	return name[:slash+1+dot]
}()

// dropOwn removes from the goroutine dump b (runtime.Stack's format:
// records separated by a blank line) the goroutines created by a function
// of the agent's package, compacting b in place, and returns the length
// left.
func dropOwn(b []byte) int {
	own := []byte("\ncreated by " + agentPackage + ".")
	sep := []byte("\n\n")
	out := 0
	for rest := b; len(rest) > 0; {
		rec := rest
		if i := bytes.Index(rest, sep); i >= 0 {
			rec, rest = rest[:i+len(sep)], rest[i+len(sep):]
		} else {
			rest = nil
		}
		if !bytes.Contains(rec, own) {
			out += copy(b[out:], rec)
		}
	}
	return out
}
