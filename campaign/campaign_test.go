package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// TestInterruptAndResume stops a real etcd campaign the way Ctrl-C does,
// right after its first fault trial, then resumes it: the interrupted trial
// is not recorded, no node process is left, and the resumed campaign
// completes the trials with contiguous indices.
func TestInterruptAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds etcd and runs real clusters")
	}
	work := t.TempDir()
	cfg, err := config.Open("../targets/etcd/gofault.yaml",
		config.Known{Policies: policy.Names(), Checkers: check.Names()},
		"workdir="+work, "checkers.baseline=1", "policy.name=random")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, err := Run(ctx, Options{Config: cfg, Trials: 3, Parallel: 2, AfterTrial: func(p Tally) {
		if !p.Baseline && p.Done == 1 {
			cancel() // what Ctrl-C does, with the other trial still running
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Stopped || sum.Trials != 1 || sum.BaselineTrials != 1 {
		t.Fatalf("interrupted run: %+v; want stopped after 1 fault trial and 1 baseline trial", sum)
	}
	if procs := running(t, filepath.Join(work, "bin", cfg.Name)); len(procs) > 0 {
		t.Fatalf("node processes left after the interrupt: %v", procs)
	}
	// The profile's progress bound is calibrated (a failover trial) once,
	// when the campaign begins; the resumed run keeps it.
	bound, how := sum.ProgressBound, sum.ProgressHow
	t.Logf("progress bound %.1fs (%s)", bound, how)
	if bound < check.DefaultProgress.Seconds() || how == "" || how == howExplicit {
		t.Errorf("calibrated progress bound %.1fs (%s); want one chosen by calibration, at least the floor", bound, how)
	}

	sum, err = Run(context.Background(), Options{Config: cfg, Trials: 3, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stopped || sum.Trials != 3 || sum.BaselineTrials != 1 {
		t.Fatalf("resumed run: %+v; want 3 fault trials and the 1 baseline trial in all", sum)
	}
	if sum.ProgressBound != bound || sum.ProgressHow != how {
		t.Errorf("resumed run's progress bound %.1fs (%s); want the campaign's %.1fs (%s)", sum.ProgressBound, sum.ProgressHow, bound, how)
	}
	st, err := store.Open(sum.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	idx, err := st.TrialIndexes(context.Background(), sum.Campaign)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range idx {
		if x != idx[0]+i {
			t.Fatalf("trial indices %v are not contiguous", idx)
		}
	}
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Bounded disk: every judged trial keeps its logs; only failed ones
	// keep their members' data dirs.
	trials, err := st.Trials(context.Background(), sum.Campaign)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if _, err := os.Stat(filepath.Join(tr.Dir, "n1.log")); err != nil {
			t.Errorf("trial %s lost its log: %v", tr.ID, err)
		}
		if holdsData(tr.Dir) != (tr.Status == record.StatusFailed) {
			t.Errorf("trial %s (%s) holds data: %v", tr.ID, tr.Status, holdsData(tr.Dir))
		}
	}
	if sum.WorkDirBytes <= 0 {
		t.Errorf("work dir size %d", sum.WorkDirBytes)
	}
	t.Logf("work dir %.1f MB after %d trials", float64(sum.WorkDirBytes)/(1<<20), len(trials))
}

// running lists the PIDs of processes running the binary bin.
func running(t *testing.T, bin string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []string
	for _, e := range ents {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.TrimSuffix(exe, " (deleted)") == bin {
			out = append(out, e.Name())
		}
	}
	return out
}
