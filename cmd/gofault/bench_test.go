package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/bench"
	"github.com/gofault/gofault/store"
)

// TestBenchUsage checks what gofault bench refuses before it runs
// anything: bad flags exit 2 naming the fix, a bad known-bug file exits 1
// naming the field.
func TestBenchUsage(t *testing.T) {
	cfg := "../../examples/minikv/gofault.yaml"
	bugs := "../../examples/minikv/bugs.yaml"
	testBugs := "../../gotest/testdata/bugs.yaml"
	bad := filepath.Join(t.TempDir(), "bugs.yaml")
	if err := os.WriteFile(bad, []byte("bugs:\n  - id: x\n    matcher: {checker: hang}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"build", "--config", cfg, "--bugs", bugs}, 2, "--bugs builds bundles; give --bundle DIR too"},
		{[]string{"--config", cfg}, 2, "--bugs is required"},
		{[]string{"--config", cfg, "--bugs", bugs, "--policies", "nope"}, 2, `unknown policy "nope"`},
		{[]string{"--config", cfg, "--bugs", bugs, "--bug", "nope"}, 2, `no bug "nope" in the known-bug file (its bugs: split, snapshot, rotate, fence, retry, install, catchup, waitall, restream, rejoin, unchecked, swallow, ticklease, atrest)`},
		{[]string{"--config", cfg, "--bugs", bugs, "--seeds", "0"}, 2, "must be at least 1"},
		{[]string{"--config", cfg, "--bugs", bugs, "--bundle", "x", "--rebuild"}, 2, "--rebuild and --bundle"},
		{[]string{"--config", cfg, "--bugs", bugs, "--campaigns", "0"}, 2, `invalid value "0" for flag -campaigns: want "auto" or a number of at least 1`},
		{[]string{"--config", cfg, "--bugs", bugs, "--campaigns", "2", "--bundle", "x", "--queue", "nats://127.0.0.1:1"}, 2, "--campaigns with --queue"},
		{[]string{"--config", cfg, "--bugs", bad}, 1, `bugs[0]: unknown field "matcher"; did you mean "match"?`},
		{[]string{"--config", cfg, "--bugs", bugs, "--set", "workdir=" + work, "--bundle", filepath.Join(work, "none")}, 1, "gofault build --config"},
		{[]string{"--bugs", testBugs, "--bundle", "x"}, 2, "--bundle and --queue do not take test bugs"},
		{[]string{"--bugs", testBugs, "--set", "policy.seed=2"}, 2, "a bench of test bugs alone reads no config, so only --set workdir=..., --set store.db=... apply"},
	} {
		var out, errb bytes.Buffer
		args := tc.args
		if args[0] != "build" {
			args = append([]string{"bench"}, args...)
		}
		if code := run(args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("gofault %s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(args, " "), code, errb.String(), tc.code, tc.want)
		}
	}
}

// TestBenchTestBugs runs gofault bench on the planted test bugs of
// gotest/testdata (gotest/testdata/bugs.yaml: retrystore's dropped write
// error, memnet's leader that counts a cut follower's send as
// acknowledged), one seed of random, at most 10 fault trials: each is found
// on its affected side, its fixed side's campaign injects and shows no
// matching finding; run again, with the affected memnet run left running
// (an interrupted bench), the bench resumes by name: the done runs are
// kept and the running one continues its own campaign, which had shown
// the bug already and ends at once.
func TestBenchTestBugs(t *testing.T) {
	work := t.TempDir()
	args := []string{"bench", "--bugs", "../../gotest/testdata/bugs.yaml", "--policies", "random", "--seeds", "1", "--trials", "10",
		"--set", "workdir=" + work, "--json"}
	var sums []bench.Summary
	for i := range 2 {
		if i == 1 {
			leaveRunning(t, filepath.Join(work, "gofault.db"), sums[0].Name, "memnet-ack")
		}
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("gofault %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
		}
		var sum bench.Summary
		if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
			t.Fatalf("decode %s: %v", out.String(), err)
		}
		sums = append(sums, sum)
	}
	sum := sums[0]
	if len(sum.Rows) != 2 || sum.Rows[0].Bug != "retrystore-drop" || sum.Rows[1].Bug != "memnet-ack" {
		t.Fatalf("rows %+v, want retrystore-drop and memnet-ack", sum.Rows)
	}
	for _, r := range sum.Rows {
		t.Logf("%s: found %d/%d at median trial %.0f, %d fault trials (%.0f%% injected), %d false positives", r.Bug, r.Found, r.Seeds, r.MedianTrials, r.FaultTrials, 100*r.InjectionRate, r.FalsePositives)
		// The fixed side runs all its 10 trials; most inject.
		if r.Found != 1 || r.FalsePositives != 0 || r.FaultTrials < 11 || r.InjectionRate < 0.5 || r.FaultFreeAffected+r.FaultFreeFixed != 0 {
			t.Errorf("%s: %+v; want found 1/1, no false positive, 11 or more fault trials mostly injected, nothing without faults", r.Bug, r)
		}
	}
	// The second bench made no campaign: its rows are the first one's.
	for i, r := range sums[1].Rows {
		if sums[1].Name != sum.Name || !slices.Equal(r.Campaigns, sum.Rows[i].Campaigns) || r.Found != sum.Rows[i].Found {
			t.Errorf("second bench %s: %s with campaigns %v, want %s's %v", sums[1].Name, r.Bug, r.Campaigns, sum.Name, sum.Rows[i].Campaigns)
		}
	}
}

// leaveRunning marks bench's affected run of bug (random, seed 1) as
// running again, as an interrupted bench leaves it.
func leaveRunning(t *testing.T, db, name, bug string) {
	t.Helper()
	st, err := store.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.BenchRuns(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Bug == bug && r.Side == "affected" {
			r.Status, r.Result = store.StatusRunning, ""
			if err := st.PutBenchRun(context.Background(), *r); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("bench %s has no affected run of %s", name, bug)
}

// TestBenchTestVersions runs gofault bench on a test bug whose sides are
// two versions of a real module from the module proxy:
// github.com/google/renameio/v2 v2.0.0 and v2.0.2, whose TestSymlinkRoot
// only v2.0.2 has. Each side's campaign runs in a copy of its own version
// (the stored campaign's module is workDir/modules/...@<version>, holding
// that version's go.mod) and measured that version's tests; the fixed
// side's env setting reaches its runs, and both sides' the member rule
// of test.config. Run again, the bench is done: the same campaigns. (3–6 s
// with a warm Go build cache, 2 shared cores.)
func TestBenchTestVersions(t *testing.T) {
	const member = "github.com/google/renameio/v2.PendingFile.path"
	work := t.TempDir()
	bugs := filepath.Join(work, "bugs.yaml")
	if err := os.WriteFile(bugs, []byte(`bugs:
  - id: renameio-symlink
    test:
      module: github.com/google/renameio/v2
      package: .
      run: '^TestSymlink(Root)?$'
      kinds: [delay]
      delay: 10ms
      runs: 1
      config: renameio.yaml
    affected: v2.0.0
    fixed: {version: v2.0.2, set: [env.GOFAULT_BENCH_SIDE=fixed]}
    match: {checker: test, symptom: '^TestSymlinkRoot failed$'}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The fetched module has no gofault.yaml: test.config gives the rules.
	if err := os.WriteFile(filepath.Join(work, "renameio.yaml"), []byte("test:\n  member: "+member+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"bench", "--bugs", bugs, "--policies", "random", "--seeds", "1", "--trials", "2", "--json"}
	var sums []bench.Summary
	for range 2 {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("gofault %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
		}
		var sum bench.Summary
		if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
			t.Fatalf("decode %s: %v", out.String(), err)
		}
		sums = append(sums, sum)
	}
	row := sums[0].Rows[0]
	if len(row.Campaigns) != 2 || !slices.Equal(sums[1].Rows[0].Campaigns, row.Campaigns) {
		t.Fatalf("campaigns %v, then %v: want two, the same both times", row.Campaigns, sums[1].Rows[0].Campaigns)
	}
	st, err := store.OpenExisting(filepath.Join(work, ".gofault", "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, want := range []struct {
		version, goLine string
		tests           []string
		env             string
	}{
		{"v2.0.0", "go 1.13", []string{"TestSymlink"}, ""},
		{"v2.0.2", "go 1.25", []string{"TestSymlink", "TestSymlinkRoot"}, "GOFAULT_BENCH_SIDE=fixed"},
	} {
		c, err := st.Campaign(context.Background(), row.Campaigns[i])
		if err != nil {
			t.Fatal(err)
		}
		var conf struct {
			GoTest struct {
				Module string   `json:"module"`
				Env    []string `json:"env"`
				Member string   `json:"member"`
			} `json:"gofault_test"`
		}
		if err := json.Unmarshal([]byte(c.Config), &conf); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(work, ".gofault", "modules", "github.com", "google", "renameio", "v2@"+want.version)
		if conf.GoTest.Module != dir {
			t.Errorf("%s: campaign %d ran module %s, want %s", want.version, c.ID, conf.GoTest.Module, dir)
		}
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil || !strings.Contains(string(mod), want.goLine) {
			t.Errorf("%s: go.mod %q (%v), want %q", want.version, mod, err, want.goLine)
		}
		if conf.GoTest.Member != member {
			t.Errorf("%s: member rule %q, want test.config's %q", want.version, conf.GoTest.Member, member)
		}
		if got := strings.Join(conf.GoTest.Env, " "); got != want.env {
			t.Errorf("%s: env %q, want %q", want.version, got, want.env)
		}
		trials, err := st.Trials(context.Background(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		ran := map[string]bool{}
		for _, tr := range trials {
			for _, e := range tr.Client {
				if test, ok := strings.CutPrefix(e.Msg, "ran "); ok {
					ran[test] = true
				}
			}
		}
		if got := slices.Sorted(maps.Keys(ran)); !slices.Equal(got, want.tests) {
			t.Errorf("%s: campaign %d ran %v, want %v", want.version, c.ID, got, want.tests)
		}
	}
}

// TestBenchTestVersionUnknown: a side's version the go command cannot
// fetch stops the bench with an error naming the run, the field, the
// module@version and where to look for its versions.
func TestBenchTestVersionUnknown(t *testing.T) {
	t.Setenv("GOPROXY", "off") // the module cache alone answers: v2.99.99 is in none
	work := t.TempDir()
	bugs := filepath.Join(work, "bugs.yaml")
	if err := os.WriteFile(bugs, []byte(`bugs:
  - id: renameio-none
    test: {module: github.com/google/renameio/v2}
    affected: v2.99.99
    fixed: v2.0.2
    match: {checker: test, symptom: x}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "--bugs", bugs, "--policies", "random", "--seeds", "1", "--trials", "1"}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errb.String())
	}
	for _, w := range []string{
		"bench run renameio-none affected, policy random, seed 1: bug renameio-none: affected.version v2.99.99: fetch module github.com/google/renameio/v2@v2.99.99",
		"is v2.99.99 a version of github.com/google/renameio/v2? go list -m -versions github.com/google/renameio/v2 lists them",
	} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, errb.String())
		}
	}
}
