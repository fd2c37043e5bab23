package agent

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// Ran wraps, in a test build, the call of testing.M's Run in the package's
// TestMain (gofault adds a TestMain that does nothing else where the
// package has none): m.Run() becomes gofaultagent.Ran(m.Run()). It returns
// code as it is. When the tests passed (code 0) in a process of a gofault
// test trial, it first waits for the goroutines the tests ended to go
// (leftSettle) and writes to stdout a line for each kind of goroutine the
// code under test left running (wire.LeftPrefix), then a line saying the
// check ran (wire.LeftDonePrefix). gofault test compares them with what
// the test's fault-free runs left: a goroutine a fault left behind is a
// leak of the code's error path. A process whose tests failed left what it
// left because they failed: nothing is checked.
func Ran(code int) int {
	if code != 0 || client.Load() == nil {
		return code
	}
	var base map[string]bool // the fault-free runs' keys, when gofault passed them
	if v, ok := os.LookupEnv(wire.EnvLeftBase); ok {
		base = map[string]bool{}
		for _, k := range strings.Split(v, wire.LeftBaseSep) {
			base[k] = true
		}
	}
	left := settleLeft(allStacks, base, time.Sleep)
	left = append(left, openFiles()...)
	ignoredOut.Write([]byte(leftLines(left)))
	return code
}

// leftSettle bounds how long Ran waits for goroutines that are ending;
// leftSettleNew how long it waits for one whose key the fault-free runs
// did not leave (a goroutine a fault's path started may end late: a
// backoff, a timeout of the code's own).
const (
	leftSettle    = time.Second
	leftSettleNew = 5 * time.Second
)

// leftStable is how long the goroutines left must stay the same for Ran to
// take them as left (not ending).
const leftStable = 100 * time.Millisecond

// allStacks returns every goroutine's stack (runtime.Stack with all),
// growing the buffer until it fits.
func allStacks() []byte {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// leftGoroutine is one goroutine left running after the tests.
type leftGoroutine struct {
	key    string // wire.LeftKey
	detail string // "[state] top at file:line; created by f at file:line"
}

// settleLeft returns the goroutines left in dump()'s stacks once they have
// stayed the same for leftStable, or when none is left, or after
// leftSettle: goroutines the tests ended (a server's closed loops) take a
// moment to go. With base (the keys the test's fault-free runs left), a
// goroutine of another key is waited for until it goes or leftSettleNew
// passed, whether the others changed or not. sleep is time.Sleep (a
// test's fake).
func settleLeft(dump func() []byte, base map[string]bool, sleep func(time.Duration)) []leftGoroutine {
	left := leftOf(dump())
	var waited, same time.Duration
	for step := 10 * time.Millisecond; len(left) > 0; step = min(2*step, 100*time.Millisecond) {
		if base != nil && slices.ContainsFunc(left, func(g leftGoroutine) bool { return !base[g.key] }) {
			if waited >= leftSettleNew {
				break
			}
		} else if waited >= leftSettle || same >= leftStable {
			break
		}
		sleep(step)
		waited += step
		now := leftOf(dump())
		if slices.Equal(keys(now), keys(left)) {
			same += step
		} else {
			same = 0
		}
		left = now
	}
	return left
}

// keys returns the keys of gs, sorted.
func keys(gs []leftGoroutine) []string {
	ks := make([]string, len(gs))
	for i, g := range gs {
		ks[i] = g.key
	}
	slices.Sort(ks)
	return ks
}

// leftOf parses dump (runtime.Stack with all: the calling goroutine first,
// records separated by a blank line) into the goroutines the code under
// test left: not the caller, not the agent's, not one a _test.go file
// started (the test's own), not one the runtime, the testing package or
// os/signal runs.
func leftOf(dump []byte) []leftGoroutine {
	var out []leftGoroutine
	for i, rec := range strings.Split(strings.TrimSpace(string(dump)), "\n\n") {
		if i == 0 {
			continue // the caller
		}
		g, ok := parseGoroutine(rec)
		if !ok || ownGoroutine(g) {
			continue
		}
		out = append(out, leftGoroutine{
			key:    wire.LeftKey(g.top, g.creator),
			detail: fmt.Sprintf("[%s] %s at %s; created by %s at %s", g.state, g.top, g.topAt, g.creator, g.creatorAt),
		})
	}
	return out
}

// goroutineRecord is what leftOf reads of one goroutine's record.
type goroutineRecord struct {
	state      string // "chan send", without the minutes
	top, topAt string // the first frame outside the runtime: function, file:line
	creator    string // the function that started it
	creatorAt  string // file:line of its go statement
}

// parseGoroutine reads one record of runtime.Stack's dump:
//
//	goroutine 18 [chan send]:
//	example.com/x.leak.func1()
//		/src/x.go:12 +0x2c
//	created by example.com/x.leak in goroutine 7
//		/src/x.go:11 +0x5c
func parseGoroutine(rec string) (goroutineRecord, bool) {
	lines := strings.Split(rec, "\n")
	var g goroutineRecord
	head, ok := strings.CutPrefix(lines[0], "goroutine ")
	if !ok {
		return g, false
	}
	if _, st, ok := strings.Cut(head, " ["); ok {
		st, _, _ = strings.Cut(st, "]")
		g.state, _, _ = strings.Cut(st, ",")
	}
	var std, stdAt string // the first frame outside the runtime, in the standard library
	for i := 1; i+1 < len(lines); i += 2 {
		fn, at := lines[i], strings.TrimSpace(lines[i+1])
		at, _, _ = strings.Cut(at, " +0x")
		if c, ok := strings.CutPrefix(fn, "created by "); ok {
			c, _, _ = strings.Cut(c, " in goroutine ")
			g.creator, g.creatorAt = c, at
			break
		}
		switch {
		case g.top != "":
		case !stdFrame(fn):
			g.top, g.topAt = funcName(fn), at
		case std == "" && !strings.HasPrefix(fn, "runtime.") && !strings.HasPrefix(fn, "internal/"):
			std, stdAt = funcName(fn), at
		}
	}
	if g.top == "" {
		g.top, g.topAt = std, stdAt
	}
	if g.top == "" || g.creator == "" {
		return g, false
	}
	return g, true
}

// stdFrame reports whether a stack frame's function is of the standard
// library: its import path's first element has no dot (a path of one
// element, "sync.(*Mutex).Lock", is the standard library's unless it is
// main).
func stdFrame(fn string) bool {
	elem, _, nested := strings.Cut(fn, "/")
	if !nested {
		pkg, _, _ := strings.Cut(fn, ".")
		return pkg != "main"
	}
	return !strings.Contains(elem, ".")
}

// funcName cuts a frame's arguments: "pkg.(*T).f(0x1, ...)" is "pkg.(*T).f".
func funcName(frame string) string {
	if i := strings.LastIndex(frame, "("); i > 0 && strings.HasSuffix(frame, ")") {
		return frame[:i]
	}
	return frame
}

// ownGoroutine reports whether g is no goroutine of the code under test:
// the agent's, one a _test.go file started, or one of the runtime, the
// testing package or os/signal.
func ownGoroutine(g goroutineRecord) bool {
	if strings.HasPrefix(g.creator, agentPackage+".") || strings.HasPrefix(g.top, agentPackage+".") {
		return true
	}
	file, _, _ := strings.Cut(g.creatorAt, ":")
	if strings.HasSuffix(file, "_test.go") {
		return true
	}
	for _, p := range []string{"runtime.", "testing.", "os/signal.", "internal/"} {
		if strings.HasPrefix(g.creator, p) || strings.HasPrefix(g.top, p) {
			return true
		}
	}
	return false
}

// maxLeftLines bounds the LeftPrefix lines Ran writes: the kinds of
// goroutine and file left, each once with how many. A process that left
// more kinds writes none, and no line saying it checked: gofault compares
// every kind or none, since a kind left out of the list would be taken
// for one that was not left.
const maxLeftLines = 200

// leftLines returns Ran's lines for left: one per key (with a count when
// several goroutines share it), then the line that says the check ran;
// with more than maxLeftLines keys, only a line saying it did not.
func leftLines(left []leftGoroutine) string {
	var b strings.Builder
	count := map[string]int{}
	var order []leftGoroutine
	for _, g := range left {
		if count[g.key] == 0 {
			order = append(order, g)
		}
		count[g.key]++
	}
	if len(order) > maxLeftLines {
		return fmt.Sprintf("gofault: not checked what the tests left: %d kinds of goroutine and file, more than %d\n", len(order), maxLeftLines)
	}
	for _, g := range order {
		detail := g.detail
		if n := count[g.key]; n > 1 {
			detail = fmt.Sprintf("%d× %s", n, detail)
		}
		fmt.Fprintf(&b, "%s%s\t%s\n", wire.LeftPrefix, g.key, detail)
	}
	fmt.Fprintf(&b, "%s%d left\n", wire.LeftDonePrefix, len(left))
	return b.String()
}
