package campaign

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// TestTemplateStart runs a real etcd crash campaign with cluster.template
// (exhaustive: a crash at the first request of every trial):
// the trials start from templates (one per parallel slot at most), every
// trial runs and injects its crash, the crashed members come back from the
// copied data, and the templates, their ports and processes are gone after
// the campaign.
func TestTemplateStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds etcd and runs real clusters")
	}
	work := t.TempDir()
	cfg, err := config.Open("../targets/etcd/gofault.yaml",
		config.Known{Policies: policy.Names(), Checkers: check.Names()},
		"workdir="+work, "checkers.baseline=1", "checkers.progress=3s", "policy.name=exhaustive",
		"faults.kinds=[crash]", "cluster.template=true")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), Options{Config: cfg, Trials: 3, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d templates formed in %.1fs; median trial %.1fs", sum.Templates, sum.TemplateSeconds, sum.MedianTrial)
	if sum.Templates < 1 || sum.Templates > 2 {
		t.Errorf("%d templates formed; want one per parallel slot used (1 or 2)", sum.Templates)
	}
	if sum.Trials != 3 || sum.InjectedTrials != 3 || sum.ErrorTrials != 0 {
		t.Errorf("summary %+v; want 3 fault trials, each injected, none that could not run", sum)
	}
	for _, tr := range storedTrials(t, sum) {
		if tr.Status == record.StatusError || tr.Err != "" {
			t.Errorf("trial %s: %s %s", tr.ID, tr.Status, tr.Err)
		}
		for _, n := range tr.Nodes {
			if n.RestartErr != "" {
				t.Errorf("trial %s: %s did not come back from its crash: %s", tr.ID, n.Name, n.RestartErr)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(work, "templates")); !os.IsNotExist(err) {
		t.Errorf("templates left in the work dir: %v", err)
	}
	if procs := running(t, filepath.Join(work, "bin", cfg.Name)); len(procs) > 0 {
		t.Errorf("node processes left: %v", procs)
	}
}

// storedTrials returns the trials campaign sum stored.
func storedTrials(t *testing.T, sum *Summary) []*record.Trial {
	t.Helper()
	st, err := store.Open(sum.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	trials, err := st.Trials(context.Background(), sum.Campaign)
	if err != nil {
		t.Fatal(err)
	}
	return trials
}
