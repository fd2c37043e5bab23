package controller

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
)

// TestTargetFinishesWhenControllerDies runs a real instrumented process,
// injects faults into it, kills the controller mid-trial, and checks that the
// process finishes all its work with no injection after the kill.
func TestTargetFinishesWhenControllerDies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	const iterations = 400
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0}}}
	for i := 0; i < iterations; i++ {
		pol.script = append(pol.script, policy.Fault{Kind: catalog.KindError, Error: 1})
	}
	c := start(t, pol)
	tr, err := c.BeginTrial(TrialSpec{ID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	tr.Arm()

	bin := filepath.Join(t.TempDir(), "failopen")
	build := exec.Command("go", "build", "-o", bin,
		"-ldflags=-X=github.com/gofault/gofault/agent.catalogHash="+c.cat.Hash, "./testdata/failopen")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "GOFAULT_CONTROLLER="+c.Addr(), "GOFAULT_NODE=n1", "GOFAULT_TRIAL=t1",
		fmt.Sprintf("FAILOPEN_ITERATIONS=%d", iterations))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	sc := bufio.NewScanner(stdout)
	injected, after, finished := 0, 0, -1
	var killed time.Time
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch f[0] {
		case "I":
			ns, _ := strconv.ParseInt(f[1], 10, 64)
			if !killed.IsZero() && time.Unix(0, ns).After(killed.Add(200*time.Millisecond)) {
				after++
			}
			injected++
			if injected == 20 && killed.IsZero() {
				c.Close() // what the controller's death looks like to the agent
				killed = time.Now()
			}
		case "DONE":
			finished, _ = strconv.Atoi(f[1])
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("target failed after the controller died: %v", err)
	}
	if killed.IsZero() {
		t.Fatalf("only %d injections; the controller was never killed", injected)
	}
	if finished != iterations {
		t.Fatalf("target did %d of %d iterations", finished, iterations)
	}
	if after != 0 {
		t.Fatalf("%d injections after the controller died", after)
	}
}
