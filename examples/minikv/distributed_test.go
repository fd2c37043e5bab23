package minikv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/examples/minikv/server"
	"github.com/gofault/gofault/store"
	"github.com/gofault/gofault/targettest"
)

// distributedTrials is the distributed campaign's fault trials. The rotate
// bug with a WAL rotation after every append: exhaustive, three errors a
// trial, tries the rotation's segment creation and header write within the
// first few trials (measured: 4 of 8 trials failed, the first at trial 3;
// with one error a trial at trials 5, 6 and 7). random and bsrr found their
// targeted bugs in 8 trials too rarely for a test (lazysync with power
// losses: 1 of 8 twice; snapshot with bsrr: 2 of 8, then 0 of 8).
const distributedTrials = 8

// TestDistributedCampaign runs a campaign through NATS JetStream on this
// machine: a coordinator that runs no trial itself (--parallel 0) and
// three workers, one SIGKILLed in the middle of its first trial. Every
// trial index must be recorded exactly once in the coordinator's store,
// the dead worker's trial redelivered, and the planted bug found and
// replayable from the coordinator's store.
func TestDistributedCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("a distributed campaign: a coordinator and three workers")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	bin := targettest.CLI(t)
	work := t.TempDir()
	queue := "nats://" + freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// The workers start first: they wait for the coordinator's server.
	var workers []*proc
	for i := range 3 {
		w := start(t, ctx, bin, "worker", "--queue", queue, "--parallel", "1", "--ack-wait", "5s",
			"--dir", filepath.Join(work, fmt.Sprintf("w%d", i)), "--name", fmt.Sprintf("w%d", i))
		workers = append(workers, w)
	}
	coord := start(t, ctx, bin, "run", "--config", "gofault.yaml", "--queue", queue, "--json",
		"--policy", "exhaustive", "--trials", fmt.Sprint(distributedTrials),
		"--set", "workdir="+filepath.Join(work, "coord"), "--set", "checkers.baseline=1",
		"--set", "workload.env.MINIKV_RECOVERY=4s", "--set", "cluster.env.MINIKV_BUGS="+server.BugRotate,
		"--set", "cluster.env.MINIKV_SEGMENT_BYTES=1", "--set", "faults.kinds=error", "--set", "policy.per_trial=3")

	// Kill worker 0 a second into its first trial: its trial goes to
	// another worker after the ack deadline.
	victim := workers[0]
	wctx, stop := context.WithCancel(ctx)
	go func() {
		select {
		case <-coord.exited:
		case <-wctx.Done():
		}
		stop()
	}()
	if !victim.waitFor(wctx, "queue: trial started") {
		t.Fatalf("worker w0 started no trial before the campaign ended:\n%s\ncoordinator:\n%s", victim.log(), coord.log())
	}
	stop()
	time.Sleep(time.Second)
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.exited
	killed := victim.started()

	<-coord.exited
	for _, w := range workers[1:] {
		w.cmd.Process.Signal(os.Interrupt)
	}
	for _, w := range workers[1:] {
		<-w.exited
	}
	if err := coord.err; err != nil {
		t.Fatalf("coordinator: %v\n%s", err, coord.log())
	}
	var sum campaign.Summary
	if err := json.Unmarshal(coord.stdout.Bytes(), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, coord.stdout.String())
	}
	t.Logf("distributed campaign: %d trials, %d failed, %d findings in %.0fs; worker w0 killed in trial %v",
		sum.Trials, sum.FailedTrials, sum.Findings, sum.Seconds, killed)
	for _, w := range workers[1:] {
		if n := w.count("queue: trial recorded"); n == 0 {
			t.Errorf("worker %s ran no trial:\n%s", w.cmd.Args[len(w.cmd.Args)-1], w.log())
		}
	}

	// Every index exactly once: the baseline trial (0) and the fault
	// trials 1..distributedTrials (fewer only if the policy ran dry).
	if sum.Trials != distributedTrials && !sum.Exhausted {
		t.Errorf("%d fault trials, want %d", sum.Trials, distributedTrials)
	}
	st, err := store.Open(sum.DB)
	if err != nil {
		t.Fatal(err)
	}
	trials, err := st.Trials(context.Background(), sum.Campaign)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	var indices []int
	for _, tr := range trials {
		indices = append(indices, tr.Index)
	}
	slices.Sort(indices)
	want := make([]int, sum.Trials+1)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(indices, want) {
		t.Errorf("trial indices in the store %v, want each of %v once", indices, want)
	}
	if len(killed) == 1 && !strings.Contains(coord.log(), "queue: trial redelivered; planned afresh") {
		t.Errorf("the killed worker's trial %s was not redelivered:\n%s", killed[0], coord.log())
	}

	// The planted bug is found, and replays from the coordinator's store.
	var found bool
	for _, f := range findings(t, bin, sum.DB) {
		found = found || f.Checker == "violations"
	}
	if !found {
		t.Fatalf("bug %s: no violations finding in %d trials", server.BugRotate, sum.Trials)
	}
	replayFindings(t, bin, sum.DB, "violations")
}

// freeAddr returns a loopback address with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// proc is a gofault process of the test and its output.
type proc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer

	mu      sync.Mutex
	lines   []string
	more    chan struct{} // closed and replaced on every line
	partial []byte
	// exited is closed once the process exited and its output was read;
	// err is then its exit error.
	exited chan struct{}
	err    error
}

// start starts bin with args, its stderr collected line by line; the
// process is killed when the test ends.
func start(t *testing.T, ctx context.Context, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.CommandContext(ctx, bin, args...), more: make(chan struct{}), exited: make(chan struct{})}
	p.cmd.Stdout = &p.stdout
	p.cmd.Stderr = p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
	})
	return p
}

// Write collects the process's stderr line by line.
func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		p.lines = append(p.lines, string(p.partial[:i]))
		p.partial = p.partial[i+1:]
		close(p.more)
		p.more = make(chan struct{})
	}
	return len(b), nil
}

// waitFor waits for a line that holds s; false if ctx ends first.
func (p *proc) waitFor(ctx context.Context, s string) bool {
	for seen := 0; ; {
		p.mu.Lock()
		for ; seen < len(p.lines); seen++ {
			if strings.Contains(p.lines[seen], s) {
				p.mu.Unlock()
				return true
			}
		}
		more := p.more
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return false
		case <-more:
		}
	}
}

// count counts the lines that hold s.
func (p *proc) count(s string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// started returns the trials the process started (from its log).
func (p *proc) started() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		if strings.Contains(l, "queue: trial started") {
			for _, f := range strings.Fields(l) {
				if id, ok := strings.CutPrefix(f, "trial="); ok {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}
