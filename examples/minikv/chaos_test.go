package minikv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/store"
)

// chaos kills a minikv campaign with SIGKILL at seeded random moments:
// twice within 0.5 s of its first build's start, then 0.5 to 4 s after the
// start of 18 runs with --resume (during the build check, the baseline and
// the trials). It checks that nothing the campaign started outlives a kill
// by more than 5 s, then resumes the campaign to completion and checks that
// every trial index is there exactly once in one campaign, that the
// database passes integrity_check, and the summary.
func chaos(t *testing.T, bin string) {
	const (
		kills        = 20
		buildKills   = 2 // the first kills strike the first build
		faultTrials  = 12
		baseline     = 1
		killMin      = 500 * time.Millisecond
		killSpread   = 3500 * time.Millisecond
		seed         = 10
		finalTimeout = 3 * time.Minute
	)
	start := time.Now()
	work := t.TempDir()
	db := filepath.Join(work, "gofault.db")
	sets := []string{"--config", "gofault.yaml", "--set", "workdir=" + work,
		"--set", "checkers.baseline=" + strconv.Itoa(baseline), "--set", "checkers.progress=2s"}
	runArgs := func(resume bool) []string {
		args := append([]string{"run", "--json", "--trials", strconv.Itoa(faultTrials)}, sets...)
		if resume {
			args = append(args, "--resume")
		}
		return args
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	for i := range kills {
		if i == buildKills {
			// Build once undisturbed, or the build (longer than 4 s) is
			// never done.
			out, err := exec.Command(bin, append([]string{"build"}, sets...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("gofault build after %d kills: %v\n%s", i, err, out)
			}
		}
		delay := killMin + time.Duration(rng.Int64N(int64(killSpread)))
		if i < buildKills {
			// With a warm Go build cache minikv builds in about a second:
			// strike within half a second of the build's start.
			delay = time.Duration(rng.Int64N(int64(killMin)))
		}
		camps, _ := saved(t, db)
		resume := camps > 0
		var stderr lockedBuffer
		cmd := exec.Command(bin, runArgs(resume)...)
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if i < buildKills {
			for !strings.Contains(stderr.String(), "building instrumented target") {
				select {
				case err := <-exited:
					t.Fatalf("kill %d: gofault ended before its build: %v\n%s", i, err, stderr.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("kill %d: gofault ended before its kill at %v: %v\n%s", i, delay, err, stderr.String())
		case <-time.After(delay):
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
		<-exited
		// The nodes and the workload die with gofault (Pdeathsig), a
		// go command too; a compiler it started finishes alone.
		if left := leftovers(work, 5*time.Second); len(left) > 0 {
			t.Errorf("kill %d: processes of the campaign left running: %v", i, left)
		}
		_, trials := saved(t, db)
		t.Logf("kill %d after %v (resume %v): %d trials run; last logged: %s", i, delay.Round(time.Millisecond), resume, trials, lastPhase(stderr.String()))
	}

	ctx, cancel := context.WithTimeout(context.Background(), finalTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, runArgs(true)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("final resume: %v\n%s", err, stderr.String())
	}
	var s campaign.Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("decode summary: %v\n%s", err, stdout.String())
	}
	t.Logf("final resume: %d trials, %d failed, %d could not run, %d findings; %d kills and resumes in %v",
		s.Trials, s.FailedTrials, s.ErrorTrials, s.Findings, kills, time.Since(start).Round(time.Second))
	if s.Trials != faultTrials || s.BaselineTrials != baseline {
		t.Errorf("summary: %d trials and %d baseline trials, want %d and %d", s.Trials, s.BaselineTrials, faultTrials, baseline)
	}
	if s.ErrorTrials != 0 {
		t.Errorf("summary: %d trials could not run, want none", s.ErrorTrials)
	}

	if left := leftovers(work, 10*time.Second); len(left) > 0 {
		t.Errorf("processes of the campaign left running: %v", left)
	}

	st, err := store.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(context.Background()); err != nil {
		t.Errorf("database: %v", err)
	}
	camps, err := st.Campaigns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(camps) != 1 {
		t.Fatalf("%d campaigns, want 1 resumed every time", len(camps))
	}
	idx, err := st.TrialIndexes(context.Background(), camps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int, faultTrials+baseline)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(idx, want) {
		t.Errorf("trial indexes %v, want each of 0..%d once", idx, len(want)-1)
	}
	if camps[0].Status != store.StatusDone {
		t.Errorf("campaign status %q, want %q", camps[0].Status, store.StatusDone)
	}
}

// lockedBuffer is a bytes.Buffer that a process writes while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// saved returns how many campaigns and trials the database at path holds:
// none if it does not exist yet (or is still empty).
func saved(t *testing.T, path string) (campaigns, trials int) {
	t.Helper()
	if fi, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return 0, 0
	}
	st, err := store.OpenExisting(path)
	if err != nil {
		t.Fatalf("open store after a kill: %v", err)
	}
	defer st.Close()
	counts, err := st.TrialsRun(context.Background())
	if err != nil {
		t.Fatalf("trials after a kill: %v", err)
	}
	for _, n := range counts {
		trials += n
	}
	camps, err := st.Campaigns(context.Background())
	if err != nil {
		t.Fatalf("campaigns after a kill: %v", err)
	}
	return len(camps), trials
}

// lastPhase returns the last log message in a gofault run's stderr, to show
// where a kill struck.
func lastPhase(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if _, msg, ok := strings.Cut(lines[i], "msg="); ok {
			return msg
		}
	}
	return "(nothing logged)"
}

// leftovers waits up to wait for the processes that name work in their
// environment or command line (nodes, workloads, the compilers of a killed
// build) to go, and returns those that did not, as "pid command".
func leftovers(work string, wait time.Duration) []string {
	deadline := time.Now().Add(wait)
	for {
		var left []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if zombie(stat) {
				continue
			}
			if bytes.Contains(cmdline, []byte(work)) || bytes.Contains(environ, []byte(work)) {
				left = append(left, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// zombie reports whether /proc/PID/stat text describes a zombie.
func zombie(stat []byte) bool {
	s := string(stat)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}
