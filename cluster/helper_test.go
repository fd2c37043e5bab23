package cluster

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a node (see helperMain).
const helperEnv = "GOFAULT_CLUSTER_HELPER"

// runnerEnv makes the test binary run a cluster (see runnerMain).
const runnerEnv = "GOFAULT_CLUSTER_RUNNER"

func TestMain(m *testing.M) {
	if os.Getenv(workloadHelperEnv) != "" || os.Getenv(workloadRunnerEnv) != "" {
		workloadMain()
		return
	}
	if os.Getenv(helperEnv) == "1" { // before runnerEnv: nodes inherit it
		helperMain(os.Args[1:])
		return
	}
	if dir := os.Getenv(runnerEnv); dir != "" {
		runnerMain(dir)
		return
	}
	os.Exit(m.Run())
}

// helperMain is a fake node: helper MODE [ADDR]. Modes:
//
//	serve ADDR  listen, start a child in the group, exit 0 on SIGTERM,
//	            exit 3 when the file "crash" appears in the working dir
//	hang ADDR   like serve, but ignore SIGTERM
//	http ADDR   serve GET /health with 200
//	fail        print an error and exit 2
//	sleep       block (the child of serve and hang)
//	echo        print the environment's GOFAULT_ variables and exit 0
//	            (not the switches of scripts/test.sh, GOFAULT_SHORT and
//	            GOFAULT_LONG, which the test's own environment may hold)
//	exit N      exit with status N
func helperMain(args []string) {
	mode := args[0]
	switch mode {
	case "fail":
		fmt.Fprintln(os.Stderr, "boom: bad flag --frobnicate")
		os.Exit(2)
	case "sleep":
		select {}
	case "interleave": // stdout, stderr, stdout: one line each
		fmt.Println("out 1")
		fmt.Fprintln(os.Stderr, "err 2")
		fmt.Println("out 3")
		os.Exit(0)
	case "echo":
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(name, "GOFAULT_") && !strings.HasPrefix(name, helperEnv) && name != "GOFAULT_SHORT" && name != "GOFAULT_LONG" {
				fmt.Println(kv)
			}
		}
		os.Exit(0)
	case "exit":
		n, _ := strconv.Atoi(args[1])
		os.Exit(n)
	}
	sigs := make(chan os.Signal, 1)
	if mode == "hang" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(sigs, syscall.SIGTERM)
	}
	l, err := net.Listen("tcp", args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	// A child in the same process group, which must not outlive the node.
	if os.Getenv("NOCHILD") == "" {
		child := exec.Command(os.Args[0], "sleep")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
	}
	// A daemon in a session of its own, which a process-group kill misses.
	if os.Getenv("DAEMON") != "" {
		d := exec.Command(os.Args[0], "sleep")
		d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := d.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "daemon:", err)
			os.Exit(1)
		}
		os.WriteFile("daemon.pid", []byte(strconv.Itoa(d.Process.Pid)), 0o644)
	}
	wd, _ := os.Getwd()
	os.WriteFile("env", []byte(strings.Join(os.Environ(), "\n")), 0o644)
	// Each start appends a line to "boots" (what a template keeps).
	if f, err := os.OpenFile("boots", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		fmt.Fprintln(f, "boot", l.Addr())
		f.Close()
	}
	fmt.Printf("listening on %s in %s\n", l.Addr(), wd)
	if mode == "http" {
		go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/health" {
				http.NotFound(w, r)
			}
		}))
	} else {
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	for {
		select {
		case <-sigs:
			fmt.Println("terminating")
			os.Exit(0)
		case <-tick.C:
			if _, err := os.Stat("crash"); err == nil {
				fmt.Fprintln(os.Stderr, "panic: crash requested")
				os.Exit(3)
			}
		}
	}
}

// groupAlive reports whether process group pgid has a live (non-zombie)
// member.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell zombies apart: kill says it exists
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// assertClean fails unless every process group is gone and every port is
// free. Killed processes vanish asynchronously, so it waits up to 10s for
// both before failing.
func assertClean(t *testing.T, pgids, ports []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, g := range pgids {
		for groupAlive(g) {
			if time.Now().After(deadline) {
				t.Errorf("process group %d still has live processes", g)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, p := range ports {
		for {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err == nil {
				l.Close()
				break
			}
			// A dying process's sockets close as it exits, which can
			// trail the process-group check by a moment.
			if time.Now().After(deadline) {
				t.Errorf("port %d still in use: %v", p, err)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
