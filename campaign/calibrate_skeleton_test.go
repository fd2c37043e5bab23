package campaign

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/scaffold"
)

// TestCalibrationSkeletonWorkload runs a campaign's calibration on minikv
// with the workload skeleton gofault init writes, its one edit a read that
// needs the leader (GET /kv/k0: a follower asks the leader for a read
// index), and a load of 300 ms: shorter than the settle before the kill
// and the stall that follows (the static leader n1 is killed and back a
// second later). The calibration trial asks for a longer load
// (GOFAULT_LOAD_FULL) and ends it once the other nodes' clients made
// progress again, so it measures the failover instead of ending
// inconclusive, as it did when the skeleton's load was the whole trial's
// (seaweedfs, docs/targets.md).
func TestCalibrationSkeletonWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds minikv and runs real clusters")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	work := t.TempDir()
	src := string(scaffold.Workload("minikv", "client"))
	const probe = `if err := get(ctx, n, "/"); err != nil {`
	if !strings.Contains(src, probe) {
		t.Fatalf("the skeleton's load request %q is gone", probe)
	}
	src = strings.Replace(src, probe, `if err := get(ctx, n, "/kv/k0"); err != nil {`, 1)
	wdir := filepath.Join(work, "skeleton")
	if err := os.MkdirAll(wdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"go.mod": "module example.com/wl\n\ngo 1.21\n", "main.go": src} {
		if err := os.WriteFile(filepath.Join(wdir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(work, "wl")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = wdir
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the skeleton does not build: %v\n%s", err, out)
	}
	cfg, err := config.Open("../examples/minikv/gofault.yaml",
		config.Known{Policies: policy.Names(), Checkers: check.Names()},
		"workdir="+work, "checkers.progress=auto", "checkers.baseline=1", "policy.name=none",
		"workload.package=", `workload.command=["`+bin+`"]`, "workload.env.WORKLOAD_DURATION=300ms")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), Options{Config: cfg, Trials: 1, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("progress bound %.1fs (%s)", sum.ProgressBound, sum.ProgressHow)
	if !strings.HasPrefix(sum.ProgressHow, "measured failover") || !strings.Contains(sum.ProgressHow, "killed n1") {
		t.Errorf("calibration: %s; want a measured failover of n1", sum.ProgressHow)
	}
}
