package fleet

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// TestDistributedTestCampaign runs gofault test's planted retry bug
// (gotest/testdata/retrystore, RETRYSTORE_BUG=drop) through a real
// embedded NATS server: the coordinator runs the fault-free pass and no
// fault trial itself (Parallel 0), one worker runs all 20 fault trials
// from the test bundle, asking the coordinator's policy; with Parallel 1
// the coordinator runs one at a time itself and the worker the others. The campaign must
// store every trial index once (6 fault-free runs and 20 fault trials),
// and the bug's one finding, TestSaveLoad failed at Save's write, must be
// there as in the local campaign (gotest's TestPlantedRetryBug).
func TestDistributedTestCampaign(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "nats://" + l.Addr().String()
	l.Close()
	conn, err := Dial(addr, Auth{}, t.TempDir(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	wconn, err := Dial(addr, Auth{}, "", quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer wconn.Close()
	wctx, stopWorker := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() {
		worked <- Work(wctx, wconn, WorkerOptions{Parallel: 1, Dir: t.TempDir(), Name: "w0", AckWait: 30 * time.Second, Log: quiet})
	}()
	defer func() {
		stopWorker()
		if err := <-worked; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()

	// The same worker serves both campaigns: all of the first's fault
	// trials; the second runs one at a time here too, the rest there.
	for _, tc := range []struct {
		name   string
		local  int
		want   string
		remote func(n int) bool
	}{
		{"all on the worker", 0, "20", func(n int) bool { return n == 20 }},
		{"one here too", 1, "1 to 19", func(n int) bool { return n >= 1 && n <= 19 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			var co *Coordinator
			sum, err := gotest.Run(ctx, gotest.Options{
				Module: "../gotest/testdata/retrystore", Package: ".", Env: []string{"RETRYSTORE_BUG=drop"}, WorkDir: work,
				Policy: "random", Seed: 1, Trials: 20, Delay: 50 * time.Millisecond, Log: quiet, Parallel: tc.local,
				Queue: func(ctx context.Context, q gotest.Queued) (campaign.Remote, error) {
					c, err := NewCoordinator(ctx, conn, CoordinatorOptions{Bundle: q.Bundle, Catalog: q.Catalog, Slots: 4, Log: quiet})
					co = c
					return c, err
				},
			})
			if co != nil {
				defer co.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum.Trials != 20 || !tc.remote(sum.RemoteTrials) || sum.Injected == 0 || sum.Parallel != tc.local {
				t.Errorf("fault trials %d, on the worker %d, injected %d, here at once %d; want 20, %s, some, %d", sum.Trials, sum.RemoteTrials, sum.Injected, sum.Parallel, tc.want, tc.local)
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
			for _, tr := range trials {
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
			t.Logf("%d of 20 fault trials failed, %d ran on the worker; campaign %.1fs (fault trials %.1fs)", failed, sum.RemoteTrials, sum.Seconds, sum.FaultSecs)
		})
	}
}
