package agent

import (
	"runtime"
	"strings"
	"testing"
)

func TestAgentPackage(t *testing.T) {
	if agentPackage != "github.com/gofault/gofault/agent" {
		t.Errorf("agentPackage = %q, want github.com/gofault/gofault/agent", agentPackage)
	}
}

// dump is a runtime.Stack(buf, true) of a test process with the agent's
// connection goroutines (the shape etcd's leak check reported).
const dump = `goroutine 7 [running]:
main.leakCheck()
	/x/leak.go:10 +0x1

goroutine 12 [IO wait]:
github.com/gofault/gofault/agent.(*conn).readLoop(0xc000)
	/b/agent/conn.go:120 +0x5f
created by github.com/gofault/gofault/agent.(*conn).start in goroutine 1
	/b/agent/conn.go:110 +0x65

goroutine 13 [select]:
github.com/gofault/gofault/agent.(*conn).flushLoop(0xc000)
	/b/agent/conn.go:251 +0x107
created by github.com/gofault/gofault/agent.(*conn).start in goroutine 1
	/b/agent/conn.go:111 +0xa5

goroutine 20 [chan receive]:
example.com/server.(*raft).run()
	/s/raft.go:5 +0x1
created by example.com/server.start in goroutine 7
	/s/raft.go:3 +0x2
`

func TestStackOfDropsOwnGoroutines(t *testing.T) {
	fake := func(buf []byte, all bool) int {
		if !all {
			return copy(buf, dump[:strings.Index(dump, "\n\n")+1])
		}
		return copy(buf, dump)
	}
	buf := make([]byte, 4096)
	got := string(buf[:StackOf(fake)(buf, true)])
	want := dump[:strings.Index(dump, "goroutine 12")] + dump[strings.Index(dump, "goroutine 20"):]
	if got != want {
		t.Errorf("StackOf(all) =\n%s\nwant\n%s", got, want)
	}
	if got := string(buf[:StackOf(fake)(buf, false)]); got != dump[:strings.Index(dump, "\n\n")+1] {
		t.Errorf("StackOf(one goroutine) = %q, want it untouched", got)
	}
}

// TestStackOfRealDump starts the agent's goroutines' stand-in: a goroutine
// created by a function of this package, blocked, and checks that a real
// dump through StackOf leaves it out and keeps the test's own.
func TestStackOfRealDump(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	started := make(chan struct{})
	go func() { close(started); <-stop }()
	<-started
	buf := make([]byte, 1<<20)
	all := string(buf[:runtime.Stack(buf, true)])
	if !strings.Contains(all, "created by "+agentPackage+".TestStackOfRealDump") {
		t.Fatalf("runtime.Stack has no goroutine created by this test:\n%s", all)
	}
	got := string(buf[:StackOf(runtime.Stack)(buf, true)])
	if strings.Contains(got, "created by "+agentPackage+".") {
		t.Errorf("StackOf kept a goroutine the agent's package created:\n%s", got)
	}
	if !strings.Contains(got, "TestStackOfRealDump") {
		t.Errorf("StackOf dropped the test's own goroutine:\n%s", got)
	}
}
