package gotest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// saveSite is the write in Save's retry loop.
const saveSite = "example.com/retrystore.Save:os.WriteFile#0"

// TestPlantedRetryBug runs gofault test with the random policy on
// testdata/retrystore, whose Save drops a failed write's error when
// RETRYSTORE_BUG=drop: the bug must be found within 20 trials, as a
// finding of TestSaveLoad at Save's write, and nothing with the bug off
// although errors struck the same write. It takes about 5 s (two builds of
// a one-package test binary, 2 x 26 runs).
func TestPlantedRetryBug(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     []string
		finding bool
	}{
		{"bug on", []string{"RETRYSTORE_BUG=drop"}, true},
		{"bug off", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sum, err := Run(context.Background(), Options{
				Module: "testdata/retrystore", Package: ".", Env: tc.env, WorkDir: dir,
				Policy: "random", Seed: 1, Trials: 20, Delay: 50 * time.Millisecond,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(sum.Selection.Chosen); got != 2 {
				t.Errorf("chosen tests = %d (%+v), want 2: TestSaveLoad and TestLoadMissing reach a site", got, sum.Selection)
			}
			if len(sum.Selection.NoSites) != 1 || sum.Selection.NoSites[0].Test != "TestNoIO" {
				t.Errorf("left out for reaching no site = %+v, want TestNoIO", sum.Selection.NoSites)
			}
			if sum.Trials != 20 || sum.Injected == 0 {
				t.Errorf("trials = %d, injected %d; want 20, some injected", sum.Trials, sum.Injected)
			}
			st, err := store.OpenExisting(filepath.Join(dir, "gofault.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			trials, err := st.Trials(context.Background(), sum.Campaign)
			if err != nil {
				t.Fatal(err)
			}
			if want := 3*2 + 20; len(trials) != want {
				t.Errorf("stored trials = %d, want %d (3 tests x 2 fault-free runs + 20)", len(trials), want)
			}
			findings := report.New(trials, report.Options{}).Findings
			if !tc.finding {
				if len(findings) != 0 {
					t.Errorf("bug off: findings %+v, want none", findings)
				}
				struck := 0
				for _, tr := range trials {
					for _, in := range tr.Injections {
						if in.SiteID == saveSite && in.Kind == catalog.KindError {
							struck++
						}
					}
				}
				if struck == 0 {
					t.Error("bug off: no error struck Save's write, so finding nothing proves nothing")
				}
				return
			}
			if len(findings) != 1 {
				t.Fatalf("bug on: %d findings, want 1: %+v", len(findings), findings)
			}
			f := findings[0]
			if f.Symptom != "TestSaveLoad failed" || f.Sites[0].Fault.Site != saveSite {
				t.Errorf("finding = %q at %q, want TestSaveLoad failed at Save's os.WriteFile", f.Symptom, f.Sites[0].Fault.Site)
			}
			var first int
			for _, tr := range trials {
				if tr.Status == record.StatusFailed && len(tr.Injections) > 0 && (first == 0 || tr.Index < first) {
					first = tr.Index
				}
			}
			t.Logf("bug found first in trial %d (fault trial %d of 20)", first, first-6)
			// The replay of the finding's trial fails the same way again;
			// the stored options name the module by an absolute path, so
			// that a replay from another directory builds the same one.
			id := f.Trials[0]
			camp, err := st.Campaign(context.Background(), sum.Campaign)
			if err != nil {
				t.Fatal(err)
			}
			if o, ok := optionsOf(camp.Config); !ok || !filepath.IsAbs(o.Module) || !filepath.IsAbs(o.WorkDir) || !filepath.IsAbs(o.DB) {
				t.Errorf("stored options %+v: want absolute module, work dir and db", o)
			}
			r, err := Replay(context.Background(), st, id, 1, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if r.Test != "TestSaveLoad" || r.Recurred != 1 || r.Missing != 0 {
				t.Errorf("replay of %s = %+v, want TestSaveLoad failed again, nothing missing", id, r)
			}
		})
	}
}

// TestAbsolute: the options a campaign stores name their directories and
// files absolutely; an empty one (no --config) stays empty.
func TestAbsolute(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, want string
	}{
		{".", wd},
		{"testdata/retrystore", filepath.Join(wd, "testdata", "retrystore")},
		{"/abs/mod", "/abs/mod"},
		{"", ""},
	} {
		o := Options{Module: tc.in, WorkDir: tc.in, DB: tc.in, Config: tc.in}
		if err := o.absolute(); err != nil {
			t.Fatal(err)
		}
		for _, got := range []string{o.Module, o.WorkDir, o.DB, o.Config} {
			if got != tc.want {
				t.Errorf("absolute(%q) = %q, want %q", tc.in, got, tc.want)
			}
		}
	}
}

// storedTrials returns the trials of campaign in the store of work dir
// dir.
func storedTrials(t *testing.T, dir string, campaign int64) []*record.Trial {
	t.Helper()
	st, err := store.OpenExisting(filepath.Join(dir, "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	trials, err := st.Trials(context.Background(), campaign)
	if err != nil {
		t.Fatal(err)
	}
	return trials
}
