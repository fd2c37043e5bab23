package fleet

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// TestDistributedTestCampaign runs gofault test's planted retry bug
// (gotest/testdata/retrystore, RETRYSTORE_BUG=drop) through a real
// embedded NATS server and two workers, w0 and w1, each with a work dir
// of its own: the coordinator runs the fault-free pass and no fault trial
// itself (Parallel 0), the workers run all 20 fault trials from the test
// bundle, asking the coordinator's policy, and both run some; with
// Parallel 1 the coordinator runs one at a time itself and the workers
// the others. The campaign must store every trial index once (6
// fault-free runs and 20 fault trials), in index order, and the bug's one
// finding, TestSaveLoad failed at Save's write, must be there as in the
// local campaign (gotest's TestPlantedRetryBug).
func TestDistributedTestCampaign(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	conn := testServer(t, quiet)
	startWorkers(ctx, t, conn, quiet, "w0", "w1")

	// The same workers serve both campaigns: all of the first's fault
	// trials, both of them (each waits for a trial: the queue hands 4
	// out at once, and a trial's test process lasts longer than handing
	// one out, so one worker taking all 20 would mean the other never
	// got one); the second runs one at a time here too, the rest there.
	for _, tc := range []struct {
		name   string
		local  int
		want   string
		remote func(n int) bool
		both   bool // both workers must have run trials
	}{
		{"all on the workers", 0, "20", func(n int) bool { return n == 20 }, true},
		{"one here too", 1, "1 to 19", func(n int) bool { return n >= 1 && n <= 19 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			sum, err := gotest.Run(ctx, gotest.Options{
				Module: "../gotest/testdata/retrystore", Package: ".", Env: []string{"RETRYSTORE_BUG=drop"}, WorkDir: work,
				Policy: "random", Seed: 1, Trials: 20, Delay: 50 * time.Millisecond, Log: quiet, Parallel: tc.local,
				Queue: queueTo(t, conn, 4, quiet),
			})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Trials != 20 || !tc.remote(sum.RemoteTrials) || sum.Injected == 0 || sum.Parallel != tc.local {
				t.Errorf("fault trials %d, on the worker %d, injected %d, here at once %d; want 20, %s, some, %d", sum.Trials, sum.RemoteTrials, sum.Injected, sum.Parallel, tc.want, tc.local)
			}
			ran := 0
			for name, n := range sum.Workers {
				ran += n
				if name != "w0" && name != "w1" {
					t.Errorf("%d trials ran on worker %q, not w0 or w1", n, name)
				}
			}
			if ran != sum.RemoteTrials || (tc.both && (sum.Workers["w0"] == 0 || sum.Workers["w1"] == 0)) {
				t.Errorf("fault trials by worker %v, %d on workers; want them to add up%s", sum.Workers, sum.RemoteTrials, map[bool]string{true: ", both workers some"}[tc.both])
			}
			if sum.Bundle != filepath.Join(work, "bundle") {
				t.Errorf("bundle %q, want WORKDIR/bundle", sum.Bundle)
			}
			st, err := store.OpenExisting(filepath.Join(work, "gofault.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			trials, err := st.Trials(ctx, sum.Campaign)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int]int{}
			fault := 0
			for i, tr := range trials {
				if i > 0 && tr.Index <= trials[i-1].Index {
					t.Errorf("trial %d stored after trial %d: want index order", tr.Index, trials[i-1].Index)
				}
				seen[tr.Index]++
				if tr.Policy == "random" {
					fault++
					if tr.Dir != filepath.Join(work, "trials", tr.ID) || len(tr.Nodes) != 1 || tr.Nodes[0].Log != filepath.Join(tr.Dir, "n1.log") {
						t.Errorf("trial %s: dir %s, nodes %+v: want its files in the coordinator's trial dir", tr.ID, tr.Dir, tr.Nodes)
					}
				}
			}
			for i := 1; i <= 26; i++ {
				if seen[i] != 1 {
					t.Errorf("trial index %d stored %d times, want once", i, seen[i])
				}
			}
			if len(trials) != 26 || fault != 20 {
				t.Errorf("stored %d trials, %d fault trials; want 26 (3 tests x 2 fault-free runs + 20), 20", len(trials), fault)
			}
			findings := report.New(trials, report.Options{}).Findings
			if len(findings) != 1 {
				t.Fatalf("%d findings, want 1: %+v", len(findings), findings)
			}
			f := findings[0]
			if f.Symptom != "TestSaveLoad failed" || f.Sites[0].Fault.Site != "example.com/retrystore.Save:os.WriteFile#0" {
				t.Errorf("finding %q at %q, want TestSaveLoad failed at Save's os.WriteFile", f.Symptom, f.Sites[0].Fault.Site)
			}
			failed := 0
			for _, tr := range trials {
				if tr.Status == record.StatusFailed {
					failed++
				}
			}
			t.Logf("%d of 20 fault trials failed, %d ran on the workers %v; campaign %.1fs (fault trials %.1fs)", failed, sum.RemoteTrials, sum.Workers, sum.Seconds, sum.FaultSecs)
		})
	}
}

// queueTo is a gotest.Options.Queue that hands a campaign's fault trials
// to conn's workers through a coordinator of slots slots, closed when the
// test ends.
func queueTo(t *testing.T, conn *Conn, slots int, log *slog.Logger) func(context.Context, gotest.Queued) (engine.Remote, error) {
	return func(ctx context.Context, q gotest.Queued) (engine.Remote, error) {
		c, err := NewCoordinator(ctx, conn, CoordinatorOptions{Bundle: q.Bundle, Catalog: q.Catalog, Slots: slots, Log: log})
		if c != nil {
			t.Cleanup(c.Close)
		}
		return c, err
	}
}

// testServer starts an embedded NATS server with JetStream on a free
// port and returns the coordinator's connection to it.
func testServer(t testing.TB, log *slog.Logger) *Conn {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "nats://" + l.Addr().String()
	l.Close()
	conn, err := Dial(addr, Auth{}, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// startWorkers starts a worker of one slot per name, each with its own
// connection to conn's server and its own work dir, until the test ends.
func startWorkers(ctx context.Context, t *testing.T, conn *Conn, log *slog.Logger, names ...string) {
	t.Helper()
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, name := range names {
		wconn, err := Dial(conn.NC.ConnectedUrl(), Auth{}, "", log)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer wconn.Close()
			if err := Work(wctx, wconn, WorkerOptions{Parallel: 1, Dir: t.TempDir(), Name: name, AckWait: 30 * time.Second, Log: log}); err != nil {
				t.Errorf("worker %s: %v", name, err)
			}
		}()
	}
	t.Cleanup(func() { stop(); wg.Wait() })
}

// TestDistributedMemberCounts: a worker's result carries its trial's
// in-process member counts, so the summary counts the trials the workers
// ran. gotest/testdata/memcluster's member rule splits its requests over
// three members; the campaign's fault-free pass runs first (Trials 0),
// then a resume with the queue runs 6 fault trials, all on the worker,
// and measures nothing again: every member request and the most members
// of its summary are the workers'.
func TestDistributedMemberCounts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	conn := testServer(t, quiet)
	startWorkers(ctx, t, conn, quiet, "w0")
	work := t.TempDir()
	o := gotest.Options{
		Module: "../gotest/testdata/memcluster", Package: ".", WorkDir: work,
		Policy: "random", Seed: 1, Kinds: []catalog.Kind{catalog.KindError}, Delay: 50 * time.Millisecond, Log: quiet,
	}
	pass, err := gotest.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if pass.MemberRequests == 0 || pass.MostMembers != 3 {
		t.Fatalf("fault-free pass: %d member requests, at most %d members; want some, 3", pass.MemberRequests, pass.MostMembers)
	}
	o.Trials, o.Resume, o.Parallel = 6, true, 0
	o.Queue = queueTo(t, conn, 4, quiet)
	sum, err := gotest.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Campaign != pass.Campaign || sum.ResumedTests == 0 || sum.Trials != 6 || sum.Workers["w0"] != 6 {
		t.Fatalf("campaign %d (%d tests measured before), %d fault trials, by worker %v; want campaign %d resumed, 6 on w0", sum.Campaign, sum.ResumedTests, sum.Trials, sum.Workers, pass.Campaign)
	}
	if sum.MemberRequests == 0 || sum.MostMembers != 3 {
		t.Errorf("the workers' trials: %d member requests, at most %d members in a run; want some, 3", sum.MemberRequests, sum.MostMembers)
	}
	t.Logf("fault-free pass: %d member requests of %d; fault trials on the worker: %d of %d", pass.MemberRequests, pass.Requests, sum.MemberRequests, sum.Requests)
}

// TestDistributedLeak: the leak check's baseline travels with each fault
// trial to the worker that runs it (engine.RemoteJob.Left, Task.Left):
// gotest/testdata/leakstore's planted leak, all its fault trials on one
// worker, is the one finding, as in the local campaign (gotest's
// TestLeftEndToEnd).
func TestDistributedLeak(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	conn := testServer(t, quiet)
	startWorkers(ctx, t, conn, quiet, "w0")
	work := t.TempDir()
	sum, err := gotest.Run(ctx, gotest.Options{
		Module: "../gotest/testdata/leakstore", Package: ".", WorkDir: work,
		Policy: "random", Seed: 1, Trials: 6, Kinds: []catalog.Kind{catalog.KindError}, Log: quiet,
		Queue: queueTo(t, conn, 2, quiet),
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.RemoteTrials != 6 {
		t.Errorf("%d fault trials on the worker, want 6", sum.RemoteTrials)
	}
	st, err := store.OpenExisting(filepath.Join(work, "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	trials, err := st.Trials(ctx, sum.Campaign)
	if err != nil {
		t.Fatal(err)
	}
	findings := report.New(trials, report.Options{}).Findings
	if want := "TestStartLeaky" + gotest.LeftSymptom + "example.com/leakstore.(*Server).loop"; len(findings) != 1 || findings[0].Symptom != want {
		t.Errorf("findings %+v, want one: %q", findings, want)
	}
}
