package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

// workloadHelperEnv makes the test binary run helperWorkload as a Go
// workload, so RunWorkload is tested on a real workload.Main program.
const workloadHelperEnv = "GOFAULT_CLUSTER_WORKLOAD_HELPER"

// workloadRunnerEnv makes the test binary run a long command workload with
// RunWorkload, as gofault's runner does, and wait to be killed.
const workloadRunnerEnv = "GOFAULT_CLUSTER_WORKLOAD_RUNNER"

// workloadMain runs the test binary as a Go workload or as a runner of a
// command workload; see TestMain.
func workloadMain() {
	if os.Getenv(workloadHelperEnv) != "" {
		workload.Main(helperWorkload)
		return
	}
	// The workload prints its PID (its process group) to our stdout.
	_, err := RunWorkload(context.Background(), Workload{
		Args: []string{"sh", "-c", "echo $$ >&2; exec sleep 60"}, Env: contractEnv(nil, time.Time{}), Stderr: os.Stdout,
	})
	fmt.Fprintln(os.Stderr, "runner: workload ended:", err)
	os.Exit(1)
}

func helperWorkload(ctx context.Context, t *workload.T) error {
	for _, n := range t.Nodes() {
		t.Client(n.Name).Progress("hello")
	}
	if os.Getenv(workloadHelperEnv) == "fail" {
		return errors.New("helper failed")
	}
	return nil
}

// contractEnv is the workload contract's environment for two nodes with a
// deadline, and extra entries before it.
func contractEnv(t *testing.T, deadline time.Time) []string {
	env := workload.Env{Deadline: deadline, Nodes: []workload.Node{
		NodeVars{Name: "n1", Host: "127.0.0.1", Port: map[string]int{"client": 2379}}.WorkloadNode(),
		NodeVars{Name: "n2", Host: "127.0.0.1", Port: map[string]int{"client": 2479}}.WorkloadNode(),
	}}
	out, err := env.Environ()
	if err != nil {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	return out
}

func TestRunWorkload(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	evLine, _ := json.Marshal(record.ClientEvent{Time: time.Unix(5, 0), Client: "n1/0", Node: "n1", Kind: record.EvProgress, Msg: "put"})
	tests := []struct {
		name     string
		args     []string
		extra    []string
		deadline time.Duration
		wantCode int
		wantOut  bool
		timedOut bool
		events   int
	}{
		{"script ok", []string{"sh", "-c", "echo '" + string(evLine) + "'; echo not an event; echo '{\"kind\":\"bogus\"}'"}, nil, 0, 0, true, false, 1},
		{"script fails", []string{"sh", "-c", "echo '" + string(evLine) + "'; exit 3"}, nil, 0, 3, false, false, 1},
		{"timeout", []string{"sh", "-c", "sleep 30"}, nil, 100 * time.Millisecond, -1, false, true, 0},
		{"go workload ok", []string{exe}, []string{workloadHelperEnv + "=ok"}, 0, 0, true, false, 2},
		{"go workload fails", []string{exe}, []string{workloadHelperEnv + "=fail"}, 0, 1, false, false, 3}, // and the error event
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var deadline time.Time
			if tc.deadline > 0 {
				deadline = time.Now().Add(tc.deadline)
			}
			var got []record.ClientEvent
			var stderr bytes.Buffer
			res, err := RunWorkload(context.Background(), Workload{
				Args: tc.args, Env: append(tc.extra, contractEnv(t, deadline)...), Deadline: deadline, Stderr: &stderr, Grace: 100 * time.Millisecond,
				OnEvent: func(ev record.ClientEvent) { got = append(got, ev) },
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tc.wantCode || res.OK() != tc.wantOut || res.TimedOut != tc.timedOut {
				t.Fatalf("result %+v, stderr %s", res, stderr.String())
			}
			if res.Events != len(got) || len(got) != tc.events {
				t.Fatalf("events %d/%d, want %d: %v", res.Events, len(got), tc.events, got)
			}
		})
	}
}

// TestWorkloadDiesWithRunner kills a process running a command workload
// with SIGKILL, as if gofault crashed, and checks that the workload dies
// with it (it is started as nodes are: Pdeathsig).
func TestWorkloadDiesWithRunner(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workloadRunnerEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	pid := 0
	if sc.Scan() {
		pid, _ = strconv.Atoi(strings.TrimSpace(sc.Text()))
	}
	cmd.Process.Kill()
	cmd.Wait()
	if pid <= 0 {
		t.Fatalf("the runner reported no workload PID (%q)", sc.Text())
	}
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("workload %d outlived its runner", pid)
		}
	}
}
