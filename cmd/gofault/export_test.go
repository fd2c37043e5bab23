package main

import (
	"bytes"
	"context"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// exportDB writes a database with one campaign: a trial that failed after
// a crash (a finding) and one that failed without a fault (a fault-free
// failure), and returns it with the two findings' IDs.
func exportDB(t *testing.T) (db, found, faultFree string) {
	t.Helper()
	ctx := context.Background()
	db = filepath.Join(t.TempDir(), "gofault.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cid, err := st.CreateCampaign(ctx, store.Campaign{Name: "x", ConfigHash: "h", Policy: "random"})
	if err != nil {
		t.Fatal(err)
	}
	failed := []record.Verdict{{Checker: "replicas", Failed: true, Symptom: "members' data differ"}}
	trials := []*record.Trial{
		{Index: 0, Status: record.StatusFailed, Policy: "random", Verdicts: failed, Injections: []record.Injection{{
			Node: "n3", Site: 7, SiteID: "server.(*Node).snapshot:os.Rename#1", Kind: catalog.KindCrash, Occurrence: 2, Role: "StateFollower",
			Time:  time.Now(),
			Stack: []record.Frame{{Func: "server.(*Node).snapshot", File: "/home/u/kv/server/snap.go", Line: 40}},
		}, {Node: "n1", SiteID: "transport.send:net.Dial#0", Kind: catalog.KindDelay, Delay: 1500 * time.Millisecond, Error: ""}}},
		{Index: 1, Status: record.StatusFailed, Policy: "random", Verdicts: []record.Verdict{{Checker: "hang", Failed: true, Symptom: "no progress"}}},
	}
	for _, tr := range trials {
		if err := st.SaveTrial(ctx, cid, tr); err != nil {
			t.Fatal(err)
		}
	}
	rep := report.New(trials, report.Options{})
	if len(rep.Findings) != 1 || len(rep.FaultFree) != 1 {
		t.Fatalf("%d findings, %d fault-free failures; want 1 and 1", len(rep.Findings), len(rep.FaultFree))
	}
	return db, rep.Findings[0].ID, rep.FaultFree[0].ID
}

func TestExportGoTest(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	db, found, _ := exportDB(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "api_test.go"), []byte("package kv_test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "regress_test.go")
	var out, errb bytes.Buffer
	args := []string{"export", "--db", db, "--go-test", "-o", file, "--runs", "5", "--test-set", "cluster.env.SNAP_EVERY=1", found}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "wrote "+file+": go test -run '^TestGofault"+found+"$'") {
		t.Errorf("stdout %q", out.String())
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := format.Source(src); err != nil || !bytes.Equal(f, src) {
		t.Errorf("the test is not gofmt'ed (%v):\n%s", err, src)
	}
	for _, want := range []string{
		"package kv_test\n",
		"// TestGofault" + found + " is a regression test of gofault finding " + found,
		"//\t[replicas] members' data differ",
		"from trial 1-0, which\n// `gofault replay --db " + db + " 1-0` replays",
		"//\tfault 1: crash at server.(*Node).snapshot:os.Rename#1 on n3 (StateFollower), occurrence 2",
		"//\t  server.(*Node).snapshot snap.go:40",
		"//\tfault 2: delay at transport.send:net.Dial#0 on n1, for 1.5s",
		"workload 5 times", "the replicas\n// checker fails in any run",
		`gofaulttest.Run(t, "gofault.yaml", gofaulttest.Replay(finding` + found + `), gofaulttest.Trials(5),`,
		`gofaulttest.Set("cluster.env.SNAP_EVERY=1"))`,
		`{Node: "n3", SiteID: "server.(*Node).snapshot:os.Rename#1", Kind: catalog.KindCrash, Role: "StateFollower", Occurrence: 2,`,
		`{Func: "server.(*Node).snapshot", File: "snap.go", Line: 40},`,
		`Kind: catalog.KindDelay, Delay: 1500 * time.Millisecond},`,
		"\t\"time\"\n",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the test lacks %q:\n%s", want, src)
		}
	}
}

func TestExportRefuses(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	db, found, faultFree := exportDB(t)
	out := filepath.Join(t.TempDir(), "x_test.go")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--db", db, found}, 2, "want --go-test"},
		{[]string{"--db", db, "--go-test"}, 2, "one finding ID"},
		{[]string{"--db", db, "--go-test", "--runs", "0", found}, 2, "--runs of at least 1"},
		{[]string{"--db", filepath.Join(t.TempDir(), "none.db"), "--go-test", found}, 1, "run a campaign first"},
		{[]string{"--db", db, "--go-test", "0123456789"}, 2, `"0123456789" is no finding of campaign 1 (gofault report lists them`},
		{[]string{"--db", db, "--go-test", found + "/2"}, 2, "has 1 sites; pick one of 1..1"},
		{[]string{"--db", db, "--go-test", "-o", out, faultFree}, 1, "injected no fault (a fault-free failure): there is nothing to replay"},
		{[]string{"--db", db, "--go-test", "-o", filepath.Join(t.TempDir(), "x_test.go"), found}, 1, "name it with --package"},
	} {
		var stdout, errb bytes.Buffer
		if code := run(append([]string{"export"}, tc.args...), &stdout, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("gofault export %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, errb.String(), tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused export wrote %s", out)
	}
}
