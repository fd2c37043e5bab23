package campaign

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// TestReplayVerdict judges replays of one original (two failures, one
// crash) run after run: what each run shows as text, the tally, and
// whether the replay as a whole did not reproduce (exit 3).
func TestReplayVerdict(t *testing.T) {
	crash := record.Injection{Node: "n2", SiteID: "wal.go:3", Kind: catalog.KindCrash, Occurrence: 4}
	orig := &record.Trial{ID: "1-7", Status: record.StatusFailed, Injections: []record.Injection{crash},
		Verdicts: []record.Verdict{{Checker: "replicas", Failed: true, Symptom: "replicas diverged"}, {Checker: "hang", Failed: true, Symptom: "client n1/0 made no progress"}}}
	run := func(id string, injected bool, failed ...string) *record.Trial {
		tr := &record.Trial{ID: id, Status: record.StatusOK, Dir: "/w/trials/" + id}
		if injected {
			tr.Injections = []record.Injection{crash}
		}
		for _, c := range failed {
			tr.Status = record.StatusFailed
			tr.Verdicts = append(tr.Verdicts, record.Verdict{Checker: c, Failed: true, Symptom: c + " again"})
		}
		return tr
	}
	for _, tt := range []struct {
		name                 string
		runs                 []*record.Trial
		reproduced, recurred int
		lastLines            []string // each run's verdict line
		notReproduced        string   // in Err, "" for nil
	}{
		{"reproduced", []*record.Trial{run("2-7", true, "replicas", "hang")}, 1, 1,
			[]string{"reproduced"}, ""},
		{"partly", []*record.Trial{run("2-7", true, "hang")}, 0, 1,
			[]string{"partly reproduced: did not recur: replicas: replicas diverged"}, ""},
		{"not reproduced, faults injected", []*record.Trial{run("2-7", true)}, 0, 0,
			[]string{"not reproduced: did not recur: replicas: replicas diverged; hang: client n* made no progress"},
			"none of 1-7's failures recurred in 1 run(s) (replicas: replicas diverged; hang: client n* made no progress)"},
		{"not reproduced, once not injected", []*record.Trial{run("2-7", false), run("3-7", true)}, 0, 0,
			[]string{"not reproduced: did not recur: replicas: replicas diverged; hang: client n* made no progress", "not reproduced: did not recur: replicas: replicas diverged; hang: client n* made no progress"},
			"in 1 of them the original's faults were not all injected"},
		{"recurred in the second run", []*record.Trial{run("2-7", true), run("3-7", true, "replicas", "hang")}, 1, 1,
			[]string{"not reproduced: did not recur: replicas: replicas diverged; hang: client n* made no progress", "reproduced"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var runs []ReplayRun
			for i, tr := range tt.runs {
				r := judgeReplay(orig, tr, nil)
				var b strings.Builder
				r.WriteText(&b, orig)
				lines := strings.Split(strings.TrimSpace(b.String()), "\n")
				if want := "replayed 1-7 as " + tr.ID + ": "; !strings.HasPrefix(lines[0], want) {
					t.Errorf("run %d: first line %q, want it to begin %q", i, lines[0], want)
				}
				if got := lines[len(lines)-1]; got != tt.lastLines[i] {
					t.Errorf("run %d: last line %q, want %q", i, got, tt.lastLines[i])
				}
				if notInj := strings.Contains(b.String(), "not injected: crash at wal.go:3 on n2, occurrence 4"); notInj == (len(tr.Injections) > 0) {
					t.Errorf("run %d: text says not injected = %v:\n%s", i, notInj, b.String())
				}
				runs = append(runs, r)
			}
			got := countRuns(orig, runs)
			if got.Runs != len(tt.runs) || got.Reproduced != tt.reproduced || got.Recurred != tt.recurred {
				t.Errorf("tally: %d runs, %d reproduced, %d recurred; want %d, %d, %d", got.Runs, got.Reproduced, got.Recurred, len(tt.runs), tt.reproduced, tt.recurred)
			}
			err := got.Err()
			switch {
			case tt.notReproduced == "" && err != nil:
				t.Errorf("Err() = %v, want nil", err)
			case tt.notReproduced != "" && (!errors.Is(err, ErrNotReproduced) || !strings.Contains(err.Error(), tt.notReproduced)):
				t.Errorf("Err() = %v, want ErrNotReproduced saying %q", err, tt.notReproduced)
			}
		})
	}
	// An original that did not fail has nothing to reproduce.
	ok := &record.Trial{ID: "1-8", Status: record.StatusOK}
	if err := countRuns(ok, []ReplayRun{judgeReplay(ok, run("2-8", false), nil)}).Err(); err != nil {
		t.Errorf("replay of a trial that passed: Err() = %v", err)
	}
}

// TestReplaySetup follows Replay up to its first run: the trial named, its
// campaign's stored config, the work dir's lock (released however the
// replay ends) and the build, each of which can stop it.
func TestReplaySetup(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	good, err := st.CreateCampaign(ctx, store.Campaign{Name: "minikv", Policy: "random", Config: `{"name":"minikv"}`})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := st.CreateCampaign(ctx, store.Campaign{Name: "broken", Policy: "random", Config: `{`})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{good, bad} {
		if err := st.SaveTrial(ctx, id, &record.Trial{ID: record.TrialID(id, 1), Index: 1, Policy: "random", Status: record.StatusFailed}); err != nil {
			t.Fatal(err)
		}
	}
	errBusy, errBuild := errors.New("work dir busy"), errors.New("build failed")
	for _, tt := range []struct {
		name          string
		trial         string
		lockErr       error
		want          string // in the error
		locked, built bool   // Lock and Build were called
	}{
		{"not a trial ID", "2ee8b133dc", nil, "not a trial ID", false, false},
		{"no such trial", record.TrialID(good, 9), nil, "not found", false, false},
		{"stored config unreadable", record.TrialID(bad, 1), nil, "stored config", false, false},
		{"work dir busy", record.TrialID(good, 1), errBusy, errBusy.Error(), true, false},
		{"build fails", record.TrialID(good, 1), nil, errBuild.Error(), true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var locked, built, released bool
			_, err := Replay(ctx, st, ReplayOptions{
				Trial: tt.trial,
				Lock: func(cfg *config.Config) (func(), error) {
					locked = true
					if cfg.Name != "minikv" {
						t.Errorf("lock of config %q, want the campaign's (minikv)", cfg.Name)
					}
					if tt.lockErr != nil {
						return nil, tt.lockErr
					}
					return func() { released = true }, nil
				},
				Build: func(ctx context.Context, cfg *config.Config) (*build.Built, error) {
					built = true
					return nil, errBuild
				},
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Replay: %v, want an error saying %q", err, tt.want)
			}
			if locked != tt.locked || built != tt.built || released != (tt.locked && tt.lockErr == nil) {
				t.Errorf("locked %v, built %v, released %v; want %v, %v, %v", locked, built, released, tt.locked, tt.built, tt.locked && tt.lockErr == nil)
			}
		})
	}
}
