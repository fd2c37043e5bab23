package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// rejudgeT0 is when the synthetic trials of TestRejudge begin.
var rejudgeT0 = time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)

// TestRejudge stores a synthetic campaign judged as the runner judges
// (judgeTrial, the log baseline learned from its baseline trial) and
// re-judges it: with the same checker settings no trial changes; with a
// checkers.log_ignore pattern added the trial whose only failure it
// ignores goes failed→ok, its finding goes, and nothing else changes; a
// trial whose dir is gone is not re-judged and says so.
func TestRejudge(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	known := config.Known{Policies: policy.Names(), Checkers: check.Names()}
	cfg, err := config.Open("../examples/minikv/gofault.yaml", known, "workdir="+work)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(work, "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.CreateCampaign(ctx, store.Campaign{Name: cfg.Name, Policy: "random", Config: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	env := judgeEnv{baseline: &record.LogBaseline{}, bound: cfg.Checkers.Progress.Duration()}
	// The baseline trial, then fault trials: two with a new error line
	// each (two log findings), one quiet, one whose dir is removed.
	trials := []struct {
		id, site, line string
	}{
		{"1-0", "", "[WARN] peer n2 slow to answer"},
		{"1-1", "s1", "[ERROR] disk sad after 17 tries"},
		{"1-2", "s2", "[ERROR] snapshot torn at 4 bytes"},
		{"1-3", "s3", "[WARN] peer n3 slow to answer"},
		{"1-4", "s4", "[WARN] peer n2 slow to answer"},
	}
	for i, c := range trials {
		tr := rejudgeTrialRecord(t, work, i, c.id, c.site, c.line)
		if err := judgeTrial(ctx, cfg, tr, trialJudged{baseline: c.site == ""}, env); err != nil {
			t.Fatal(err)
		}
		if c.site == "" {
			if err := check.Learn(env.baseline, tr, os.DirFS(tr.Dir), cfg.Checkers.LogFormat); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.SaveTrial(ctx, id, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutBaseline(ctx, id, env.baseline); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(work, "trials", "1-4")); err != nil {
		t.Fatal(err)
	}
	stored, err := st.Trials(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range stored {
		t.Logf("stored %s: %+v", tr.ID, judgementOf(tr))
	}
	if j := judgementOf(stored[1]); j.Status != record.StatusFailed || len(j.Failing) != 1 || !strings.HasPrefix(j.Failing[0], "log: ") {
		t.Fatalf("trial 1-1 stored as %+v; want failed by the log checker alone", j)
	}

	same, err := Rejudge(ctx, st, cfg, []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	if same.Trials != 4 || same.Unchanged != 4 || len(same.Changed) != 0 || len(same.Gone) != 0 || len(same.Appeared) != 0 {
		t.Errorf("same checkers: %+v; want 4 trials re-judged, all unchanged, no finding gone or new", same)
	}
	if len(same.NotRejudged) != 1 || same.NotRejudged[0].Trial != "1-4" || !strings.HasPrefix(same.NotRejudged[0].Why, "trial dir gone") {
		t.Errorf("not re-judged %+v; want 1-4, its trial dir gone", same.NotRejudged)
	}

	loose, err := config.Open("../examples/minikv/gofault.yaml", known, "workdir="+work, "checkers.log_ignore=disk sad")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Rejudge(ctx, st, loose, []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	got.WriteText(&text)
	t.Logf("with checkers.log_ignore=disk sad:\n%s", text.String())
	if got.Trials != 4 || got.Unchanged != 3 || got.FailedToOK != 1 || len(got.Changed) != 1 || got.Changed[0].Trial != "1-1" || got.Changed[0].New.Status != record.StatusOK {
		t.Errorf("log_ignore added: %+v; want 1-1 failed→ok and the 3 others unchanged", got)
	}
	if len(got.Gone) != 1 || !strings.Contains(got.Gone[0].Symptom, "disk sad") || len(got.Appeared) != 0 {
		t.Errorf("findings gone %+v, new %+v; want the disk-sad one gone and none new", got.Gone, got.Appeared)
	}
	for _, want := range []string{"1-1: failed (log: ", "→ ok", "1 changed (1 failed→ok, 0 ok→failed, 0 other)", "findings gone: 1", "not re-judged 1-4: trial dir gone"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
}

// rejudgeTrialRecord writes the dir of trial id (index i) under work, its
// three nodes' logs holding line on n1, and returns its record: three
// clients making steady progress for 6 s and, with site, an error
// injected at it on n1 at 1 s.
func rejudgeTrialRecord(t *testing.T, work string, i int, id, site, line string) *record.Trial {
	t.Helper()
	at := func(ms int) time.Time { return rejudgeT0.Add(time.Duration(ms) * time.Millisecond) }
	dir := filepath.Join(work, "trials", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := &record.Trial{ID: id, Campaign: "minikv", Index: i, Policy: "random", Start: rejudgeT0, End: at(10000), Dir: dir}
	if site == "" {
		tr.Policy = baselinePolicy
	} else {
		tr.Injections = []record.Injection{{Time: at(1000), Node: "n1", Kind: catalog.KindError, SiteID: site, Error: "EIO"}}
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		lines := at(500).Format("2006-01-02T15:04:05.000Z") + " [INFO] started " + n + "\n"
		if n == "n1" {
			lines += at(2000).Format("2006-01-02T15:04:05.000Z") + " " + line + "\n"
		}
		log := filepath.Join(dir, n+".log")
		if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
		tr.Nodes = append(tr.Nodes, record.Node{Name: n, PID: 100, Log: log})
		for ms := 0; ms <= 6000; ms += 100 {
			tr.Client = append(tr.Client, record.ClientEvent{Time: at(ms), Client: n + "/0", Node: n, Kind: record.EvProgress, Msg: fmt.Sprintf("put k%d", ms)})
		}
	}
	tr.Client = append(tr.Client, record.ClientEvent{Time: at(6001), Client: "workload", Kind: record.EvPhase, Msg: "mixed"})
	return tr
}
