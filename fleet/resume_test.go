package fleet

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// envCoordinator makes this test binary the coordinator process of
// TestQueueResumeAfterKill (TestQueueCoordinatorProcess): its value is
// the work dir, envQueue the server's address.
const (
	envCoordinator = "GOFAULT_FLEET_TEST_COORDINATOR"
	envQueue       = "GOFAULT_FLEET_TEST_QUEUE"
)

// resumeOptions are the campaign of TestQueueResumeAfterKill: the planted
// retry bug, 20 fault trials, delays long enough that the workers are
// running trials when the coordinator is killed.
func resumeOptions(work string, log *slog.Logger) gotest.Options {
	return gotest.Options{
		Module: "../gotest/testdata/retrystore", Package: ".", Env: []string{"RETRYSTORE_BUG=drop"}, WorkDir: work,
		Policy: "random", Seed: 1, Trials: 20, Delay: 300 * time.Millisecond, Log: log, Parallel: 0,
	}
}

// queue is Options.Queue for a coordinator of the server at addr,
// embedded (its data in the work dir's nats) when none answers; done
// closes what it opened.
func queue(addr string, log *slog.Logger) (q func(context.Context, gotest.Queued) (engine.Remote, error), done func()) {
	var closers []func()
	q = func(ctx context.Context, qd gotest.Queued) (engine.Remote, error) {
		conn, err := Dial(addr, Auth{}, filepath.Join(qd.WorkDir, "nats"), log)
		if err != nil {
			return nil, err
		}
		co, err := NewCoordinator(ctx, conn, CoordinatorOptions{Bundle: qd.Bundle, Catalog: qd.Catalog, Slots: 4, Log: log})
		if err != nil {
			conn.Close()
			return nil, err
		}
		closers = append(closers, co.Close, conn.Close)
		return co, nil
	}
	return q, func() {
		for _, f := range closers {
			f()
		}
	}
}

// TestQueueCoordinatorProcess is the coordinator that
// TestQueueResumeAfterKill starts as a process of its own and kills; it
// does nothing in a test run.
func TestQueueCoordinatorProcess(t *testing.T) {
	work := os.Getenv(envCoordinator)
	if work == "" {
		t.Skip("the coordinator process of TestQueueResumeAfterKill")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o := resumeOptions(work, log)
	o.Progress = os.Stdout // a line per trial stored: the test counts them
	var done func()
	o.Queue, done = queue(os.Getenv(envQueue), log)
	defer done()
	if _, err := gotest.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

// TestQueueResumeAfterKill: gofault test --queue's coordinator, with its
// embedded NATS server, is SIGKILLed part way through its fault trials
// while two workers run them; a resume (Options.Resume, the coordinator
// and its server started again on the same work dir) finishes the
// campaign on the same workers. Every trial index must be stored once, in
// order (6 fault-free runs, 20 fault trials); the trials the workers were
// running at the kill are not stored by it: the resume runs them again
// under their index, and the workers drop the dead coordinator's tasks
// and delete the results they put for it (no result object is left in
// the bucket).
func TestQueueResumeAfterKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "nats://" + l.Addr().String()
	l.Close()
	work := t.TempDir()

	// The coordinator process, killed once 8 fault trials are stored.
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestQueueCoordinatorProcess$", "-test.v")
	cmd.Env = append(os.Environ(), envCoordinator+"="+work, envQueue+"="+addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stored := make(chan int, 1)
	go func() {
		n := 0
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "trial ") {
				if n++; n == 8 {
					stored <- n
				}
			}
		}
		close(stored)
	}()

	// Two workers, once the coordinator's server answers; they outlive it.
	var dropped dropLog
	wlog := slog.New(&dropped)
	wctx, stopWorkers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopWorkers(); wg.Wait() }()
	for _, name := range []string{"w0", "w1"} {
		var wconn *Conn
		for wconn == nil {
			if wconn, err = Dial(addr, Auth{}, "", quiet); err != nil {
				if ctx.Err() != nil {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("no server at %s: %v; the coordinator's log:\n%s", addr, err, stderr.String())
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer wconn.Close()
			if err := Work(wctx, wconn, WorkerOptions{Parallel: 1, Dir: dir, Name: name, AckWait: 5 * time.Second, Log: wlog}); err != nil {
				t.Errorf("worker %s: %v", name, err)
			}
		}()
	}
	if _, ok := <-stored; !ok {
		cmd.Wait()
		t.Fatalf("the coordinator ended before 8 fault trials were stored; its log:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	st, err := store.OpenExisting(filepath.Join(work, "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	before, err := st.Trials(ctx, 1)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	// The resume, with its server started again where the dead one kept
	// its data.
	o := resumeOptions(work, quiet)
	o.Resume = true
	var done func()
	o.Queue, done = queue(addr, quiet)
	defer done()
	sum, err := gotest.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	st, err = store.OpenExisting(filepath.Join(work, "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	trials, err := st.Trials(ctx, sum.Campaign)
	if err != nil {
		t.Fatal(err)
	}
	fault := 0
	for i, tr := range trials {
		if tr.Index != i+1 {
			t.Errorf("stored trial %d has index %d: want every index from 1 once, in order", i+1, tr.Index)
		}
		if tr.Policy == "random" {
			fault++
			if _, err := os.Stat(filepath.Join(work, "trials", tr.ID, "n1.log")); err != nil {
				t.Errorf("trial %s: its log: %v", tr.ID, err)
			}
		}
	}
	ranBefore := len(before) - 6
	if len(trials) != 26 || fault != 20 || sum.ResumedTrials != ranBefore || sum.Trials != 20 || sum.RemoteTrials != 20-ranBefore {
		t.Errorf("stored %d trials (%d fault trials), resumed from %d, %d run by the workers after it; want 26 (20), %d, %d", len(trials), fault, sum.ResumedTrials, sum.RemoteTrials, ranBefore, 20-ranBefore)
	}
	if sum.Workers["w0"]+sum.Workers["w1"] != sum.RemoteTrials {
		t.Errorf("the resumed trials by worker %v: want all on w0 and w1", sum.Workers)
	}
	failed := 0
	for _, tr := range trials {
		if tr.Status == record.StatusFailed {
			failed++
		}
	}
	if failed == 0 {
		t.Error("no fault trial failed: the planted bug was not found")
	}

	// What the dead coordinator left: its tasks are dropped and the
	// results put for it deleted once a worker sees that nobody listens.
	// The resumed coordinator's server is still up; give the workers time
	// to see the dead coordinator's tasks that they held (redelivered
	// after the ack deadline).
	deadline := time.Now().Add(15 * time.Second)
	var left []string
	for {
		left, err = resultObjects(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("result objects left in the bucket: %v", left)
	}
	t.Logf("killed after %d fault trials stored; the resume ran %d (by worker %v); the workers dropped the dead coordinator's tasks: %s", ranBefore, sum.RemoteTrials, sum.Workers, dropped.String())
}

// resultObjects lists the trial results in the bucket of the server at
// addr.
func resultObjects(ctx context.Context, addr string) ([]string, error) {
	conn, err := Dial(addr, Auth{}, "", nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_, obj, err := setup(ctx, conn.JS)
	if err != nil {
		return nil, err
	}
	infos, err := obj.List(ctx)
	if err != nil && !strings.Contains(err.Error(), "no objects found") {
		return nil, err
	}
	var out []string
	for _, in := range infos {
		if strings.HasPrefix(in.Name, "result-") {
			out = append(out, in.Name)
		}
	}
	return out, nil
}

// dropLog is a slog.Handler that counts the workers' "trial dropped"
// records by why, for the test's log.
type dropLog struct {
	mu  sync.Mutex
	why map[string]int
}

func (d *dropLog) Enabled(context.Context, slog.Level) bool { return true }
func (d *dropLog) WithAttrs([]slog.Attr) slog.Handler       { return d }
func (d *dropLog) WithGroup(string) slog.Handler            { return d }

func (d *dropLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "queue: trial dropped" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "why" {
			why := a.Value.String()
			for _, call := range []string{"begin", "result"} {
				if strings.Contains(why, "gone: "+call+":") {
					why = "coordinator gone at " + call
				}
			}
			d.mu.Lock()
			if d.why == nil {
				d.why = map[string]int{}
			}
			d.why[why]++
			d.mu.Unlock()
		}
		return true
	})
	return nil
}

func (d *dropLog) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fmt.Sprint(d.why)
}
