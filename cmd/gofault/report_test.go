package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

func TestReportWithoutDatabaseSaysWhatToDo(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var out, errb bytes.Buffer
	code := run([]string{"report", "--db", filepath.Join(t.TempDir(), "none.db")}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "run a campaign first") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

// TestReportRefuses checks that report fails loudly, without writing, on
// a database that is not gofault's, and on a campaign the database lacks.
func TestReportRefuses(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "gofault.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateCampaign(context.Background(), store.Campaign{Name: "x", ConfigHash: "h", Policy: "random"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", "--db", empty}, 1, "is empty, not a gofault database"},
		{[]string{"report", "--db", empty, "--trials"}, 1, "is empty, not a gofault database"},
		{[]string{"report", "--db", db, "--campaign", "99"}, 2, "no campaign 99 in"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("gofault %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, errb.String(), tc.code, tc.want)
		}
	}
	if data, _ := os.ReadFile(empty); len(data) != 0 {
		t.Errorf("report wrote %d bytes into an empty file", len(data))
	}
}

func TestReportDismissed(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "gofault.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	cid, err := st.CreateCampaign(ctx, store.Campaign{Name: "x", ConfigHash: "h", Policy: "random"})
	if err != nil {
		t.Fatal(err)
	}
	for i, node := range []string{"n1", "n3"} {
		tr := &record.Trial{Index: i, Status: record.StatusOK, Policy: "random", Verdicts: []record.Verdict{{Checker: check.NameLog,
			Dismissed: []record.Dismissal{{Rule: check.RuleConnectionWords, Node: node, Template: "warn  lost peer", Count: 2,
				Example: "[WRN] lost peer n2", Why: "crash of n2 at +1s, on peer " + node + ", by time"}}}}}
		if err := st.SaveTrial(ctx, cid, tr); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"report", "--db", db, "--dismissed"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, s := range []string{"connection-words: 4 lines in 2 trials, 1 templates", "4× in 2 trials on n1,n3: warn  lost peer", "e.g. 1-0: [WRN] lost peer n2"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("no %q in:\n%s", s, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"report", "--db", db, "--dismissed", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rules []report.RuleDismissals
	if err := json.Unmarshal(out.Bytes(), &rules); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	if len(rules) != 1 || rules[0].Rule != check.RuleConnectionWords || rules[0].Lines != 4 || len(rules[0].Templates) != 1 ||
		!reflect.DeepEqual(rules[0].Templates[0].Trials, []string{"1-0", "1-1"}) {
		t.Errorf("--dismissed --json = %s", out.String())
	}
	out.Reset()
	if code := run([]string{"report", "--db", db, "--trials", "--errors"}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "log dismissed 2× on n3 by connection-words (crash of n2 at +1s, on peer n3, by time): [WRN] lost peer n2") {
		t.Errorf("--trials --errors (exit %d):\n%s", code, out.String())
	}
}

// TestReportRejudgeJSON checks report --rejudge --json's shape, that
// trials it cannot judge again are named with why, not judged, and that it
// leaves the database as it was.
// minikvStore makes a store in a fresh work dir dir (db its path) with
// one campaign cid of minikv's, for the commands that read a store with
// minikv's config; the caller closes st.
func minikvStore(t *testing.T) (dir, db string, st *store.Store, cid int64) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir = t.TempDir()
	db = filepath.Join(dir, "gofault.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	cid, err = st.CreateCampaign(context.Background(), store.Campaign{Name: "minikv", ConfigHash: "h", Policy: "random"})
	if err != nil {
		t.Fatal(err)
	}
	return dir, db, st, cid
}

func TestReportRejudgeJSON(t *testing.T) {
	ctx := context.Background()
	dir, db, st, cid := minikvStore(t)
	for i, tr := range []*record.Trial{
		{Status: record.StatusOK, Dir: filepath.Join(dir, "trials", "1-0")},
		{Status: record.StatusError, Err: "cluster did not start: n1 exited", Dir: filepath.Join(dir, "trials", "1-1")},
	} {
		tr.Index, tr.Policy = i, "random"
		if err := st.SaveTrial(ctx, cid, tr); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	args := []string{"report", "--rejudge", "--json", "--db", db, "--config", "../../examples/minikv/gofault.yaml", "--set", "workdir=" + dir}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if after, err := os.ReadFile(db); err != nil || !bytes.Equal(before, after) {
		t.Errorf("report --rejudge changed the database (%v)", err)
	}
	var got struct {
		Version any                `json:"version"`
		Rejudge *campaign.Rejudged `json:"rejudge"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	r := got.Rejudge
	if got.Version == nil || r == nil || r.Trials != 0 || len(r.NotRejudged) != 2 || len(r.Campaigns) != 1 || r.Campaigns[0].ID != cid {
		t.Fatalf("--rejudge --json = %s", out.String())
	}
	for i, want := range []string{"trial dir gone", "never judged: the cluster did not start"} {
		if !strings.HasPrefix(r.NotRejudged[i].Why, want) {
			t.Errorf("not re-judged %+v: want %q", r.NotRejudged[i], want)
		}
	}
}
