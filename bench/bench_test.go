package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
)

var checkers = []string{"crash", "hang", "linearizability", "log", "replicas", "slow", "violations"}

const good = `
bugs:
  - id: etcd-17780
    title: crash during compaction
    link: https://github.com/etcd-io/etcd/issues/17780
    affected: v3.5.13
    fixed: {version: v3.5.14, set: [cluster.env.X=1]}
    scenario:
      - faults.kinds=[crash]
      - workload.env.ETCD_WORKLOAD_COMPACT_EVERY=100ms
    match:
      checker: violations
      symptom: 'revision-monotonic'
  - id: split
    affected: {set: [cluster.env.MINIKV_BUGS=split]}
    fixed: {set: []}
    match: {checker: replicas, symptom: "members' data differ"}
`

func TestParse(t *testing.T) {
	f, err := Parse([]byte(good), checkers)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Bugs) != 2 {
		t.Fatalf("%d bugs, want 2", len(f.Bugs))
	}
	b := f.Bugs[0]
	if got, want := strings.Join(b.Overrides(Affected), " "), "faults.kinds=[crash] workload.env.ETCD_WORKLOAD_COMPACT_EVERY=100ms target.version=v3.5.13"; got != want {
		t.Errorf("affected overrides %q, want %q", got, want)
	}
	if got, want := strings.Join(b.Overrides(Fixed), " "), "faults.kinds=[crash] workload.env.ETCD_WORKLOAD_COMPACT_EVERY=100ms target.version=v3.5.14 cluster.env.X=1"; got != want {
		t.Errorf("fixed overrides %q, want %q", got, want)
	}
	if got := f.Bugs[1].Fixed.String(); got != "config as is" {
		t.Errorf("empty release is %q", got)
	}
	if _, _, err := Load("../examples/minikv/bugs.yaml", checkers); err != nil {
		t.Errorf("examples/minikv/bugs.yaml: %v", err)
	}
}

// TestShippedBugFiles loads the known-bug files gofault ships and applies
// every bug's overrides, on both releases, to its target's profile: a
// scenario that names a field the config does not have fails here, not in
// the middle of a bench.
func TestShippedBugFiles(t *testing.T) {
	checkers := check.Names()
	for _, tc := range []struct {
		bugs, config string
		ids          []string
	}{
		{"../examples/minikv/bugs.yaml", "../examples/minikv/gofault.yaml", []string{"split", "snapshot", "rotate", "fence", "retry", "install", "catchup", "waitall", "restream", "rejoin", "unchecked", "swallow", "ticklease", "atrest"}},
		{"../targets/etcd/bugs.yaml", "../targets/etcd/gofault.yaml", []string{"etcd-17780", "etcd-19179", "etcd-18089", "etcd-17529", "etcd-14685", "etcd-20418"}},
		{"../targets/nats/bugs.yaml", "../targets/nats/gofault.yaml", []string{"nats-6888", "nats-7556", "nats-6459"}},
		{"../targets/raft/bugs.yaml", "../targets/raft/gofault.yaml", []string{"raft-493", "raft-494"}},
	} {
		f, _, err := Load(tc.bugs, checkers)
		if err != nil {
			t.Errorf("%s: %v", tc.bugs, err)
			continue
		}
		var ids []string
		for _, b := range f.Bugs {
			ids = append(ids, b.ID)
			for _, side := range []Side{Affected, Fixed} {
				if _, err := config.Load(tc.config, b.Overrides(side)...); err != nil {
					t.Errorf("%s: bug %s, %s release: %v", tc.bugs, b.ID, side, err)
				}
			}
		}
		if !slices.Equal(ids, tc.ids) {
			t.Errorf("%s holds %v, want %v", tc.bugs, ids, tc.ids)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown field", "bugs:\n  - id: a\n    matcher: {checker: hang}\n",
			[]string{`line 3: bugs[0]: unknown field "matcher"; did you mean "match"?`, "valid fields: id, title"}},
		{"unknown release field", "bugs:\n  - id: a\n    affected: {versions: v1}\n",
			[]string{`bugs[0].affected: unknown field "versions"; did you mean "version"?`}},
		{"top level", "bug: []\n", []string{`unknown field "bug"; did you mean "bugs"?`}},
		{"wrong type", "bugs: {id: a}\n", []string{"line 1: bugs: want a list of bugs"}},
		{"empty", "", []string{"empty"}},
		{"no bugs", "bugs: []\n", []string{"bugs: no bugs"}},
		{"validation", `
bugs:
  - id: Bad_ID
    affected: 3.5.1
    fixed: 3.5.1
    scenario: [policy.name=random, cluster.nodez=3, nope]
    match: {checker: nosuch, symptom: "("}
  - id: dup
    affected: v1.0.0
    fixed: v1.0.1
    match: {checker: hang}
  - id: dup
    affected: v1.0.0
    fixed: {set: [target.version=v1.0.1]}
    match: {checker: hang, symptom: x, evidence: "[x"}
`, []string{
			`bugs[0] (Bad_ID).id: "Bad_ID" is not a valid bug ID`,
			"bugs[0] (Bad_ID).affected.version: must be a module version starting with v",
			"bugs[0] (Bad_ID).fixed: is the same release as affected",
			"bugs[0] (Bad_ID).scenario[0]: policy.name may not be set here; the bench runs every policy of --policies",
			`bugs[0] (Bad_ID).scenario[1]: --set: unknown field "cluster.nodez"; did you mean "cluster.nodes"?`,
			`bugs[0] (Bad_ID).scenario[2]: "nope" is not an override`,
			`bugs[0] (Bad_ID).match.checker: unknown checker "nosuch"; valid names: crash, hang`,
			"bugs[0] (Bad_ID).match.symptom: error parsing regexp",
			"bugs[1] (dup).match.symptom: must be set",
			`bugs[2] (dup).id: "dup" is used by an earlier bug`,
			"bugs[2] (dup).match.evidence: error parsing regexp",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), checkers)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	// Validation errors are FieldErrors.
	_, err := Parse([]byte("bugs:\n  - id: x\n    affected: v1\n    fixed: v2\n    match: {checker: hang}\n"), checkers)
	var fe *config.FieldError
	if !errors.As(err, &fe) || fe.Field != "bugs[0] (x).match.symptom" {
		t.Errorf("error %v is not a FieldError for match.symptom", err)
	}
	// target.version is refused in a scenario, allowed in a release's set.
	_, err = Parse([]byte("bugs:\n  - id: x\n    affected: v1\n    fixed: {set: [target.version=v2]}\n    scenario: [target.version=v3]\n    match: {checker: hang, symptom: x}\n"), checkers)
	if err == nil || !strings.Contains(err.Error(), "scenario[0]: target.version may not be set here") || strings.Contains(err.Error(), "fixed.set") {
		t.Errorf("target.version: %v", err)
	}
}

// TestParseTestBugs: a bug with a test section is a test bug: its module is
// made absolute against the file's directory, its sides and scenario are
// env settings (Env strips the env. prefix), its kinds parse.
func TestParseTestBugs(t *testing.T) {
	f, _, err := Load("../gotest/testdata/bugs.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Bugs) != 2 || f.Bugs[0].ID != "retrystore-drop" || f.Bugs[1].ID != "memnet-ack" {
		t.Fatalf("bugs %+v, want retrystore-drop and memnet-ack", f.Bugs)
	}
	b := f.Bugs[0]
	abs, _ := filepath.Abs("../gotest/testdata/retrystore")
	if b.Test == nil || b.Test.Module != abs || b.Test.Package != "." || b.Test.Delay != 50*time.Millisecond {
		t.Errorf("test section %+v, want module %s, package ., delay 50ms", b.Test, abs)
	}
	if got := b.Env(Affected); !slices.Equal(got, []string{"RETRYSTORE_BUG=drop"}) {
		t.Errorf("affected env %q, want RETRYSTORE_BUG=drop", got)
	}
	if got := b.Env(Fixed); len(got) != 0 {
		t.Errorf("fixed env %q, want none", got)
	}
	kinds, err := f.Bugs[1].Test.FaultKinds()
	if err != nil || !slices.Equal(kinds, []catalog.Kind{catalog.KindPartition}) || f.Bugs[1].Test.Runs != 1 || f.Bugs[1].Test.Run != "^TestQuorum$" {
		t.Errorf("memnet-ack: kinds %v (%v), test %+v", kinds, err, f.Bugs[1].Test)
	}
	withScenario, err := Parse([]byte(`
bugs:
  - id: x
    test: {module: m}
    scenario: [env.A=1]
    affected: {set: [env.B=2]}
    fixed: {set: []}
    match: {checker: test, symptom: x}
`), checkers)
	if err != nil {
		t.Fatal(err)
	}
	if got := withScenario.Bugs[0].Env(Affected); !slices.Equal(got, []string{"A=1", "B=2"}) {
		t.Errorf("env %q, want the scenario's then the side's", got)
	}
}

// TestParseTestBugErrors: a test bug's fields are checked as strictly as a
// cluster bug's, each error naming the field and the fix.
func TestParseTestBugErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown test field", "bugs:\n  - id: a\n    test: {modul: m}\n",
			[]string{`line 3: bugs[0].test: unknown field "modul"; did you mean "module"?`, "valid fields: module, package, run, kinds, delay, runs"}},
		{"bad delay", "bugs:\n  - id: a\n    test: {module: m, delay: soon}\n", []string{`bugs[0].test.delay: want a positive duration such as 50ms (got "soon")`}},
		{"bad runs", "bugs:\n  - id: a\n    test: {module: m, runs: 0}\n", []string{`bugs[0].test.runs: want a number of fault-free runs of at least 1`}},
		{"kinds not a list", "bugs:\n  - id: a\n    test: {module: m, kinds: error}\n", []string{`bugs[0].test.kinds: want a list of fault kinds`}},
		{"validation", `
bugs:
  - id: a
    test: {run: "(", kinds: [crash, nope, error]}
    scenario: [workload.env.X=1]
    affected: v1.2.3
    fixed: {set: [env.=1, env.X]}
    match: {checker: violations, symptom: x}
  - id: b
    test: {module: m}
    affected: {set: [env.X=1]}
    fixed: {set: [env.X=1]}
    match: {checker: test, symptom: x}
`, []string{
			"bugs[0] (a).test.module: must be set",
			"bugs[0] (a).test.run: error parsing regexp",
			`bugs[0] (a).test.kinds[0]: fault kind "crash" is not offered in-process`,
			`bugs[0] (a).test.kinds[1]: unknown fault kind "nope"`,
			"bugs[0] (a).fixed.version: must be set; the other side names a version of the module",
			`bugs[0] (a).fixed.set[0]: "env.=1" is not env.KEY=VALUE`,
			`bugs[0] (a).fixed.set[1]: "env.X" is not env.KEY=VALUE`,
			`bugs[0] (a).scenario[0]: "workload.env.X=1" is not env.KEY=VALUE`,
			`bugs[0] (a).match.checker: is "violations"; a test bug's findings are the test's own outcome: set "checker: test"`,
			"bugs[1] (b).fixed: is the same release as affected",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), checkers)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	// A cluster bug may not name the test checker, which only test bugs have.
	if _, err := Parse([]byte("bugs:\n  - id: a\n    affected: v1\n    fixed: v2\n    match: {checker: test, symptom: x}\n"), checkers); err == nil || !strings.Contains(err.Error(), `unknown checker "test"`) {
		t.Errorf("cluster bug with checker test: %v", err)
	}
}

func TestSelectAndMatrix(t *testing.T) {
	f, err := Parse([]byte(good), checkers)
	if err != nil {
		t.Fatal(err)
	}
	bugs, err := f.Select([]string{"split"})
	if err != nil || len(bugs) != 1 || bugs[0].ID != "split" {
		t.Fatalf("Select(split) = %v, %v", bugs, err)
	}
	if _, err := f.Select([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "its bugs: etcd-17780, split") {
		t.Errorf("Select(nope): %v", err)
	}
	runs := Matrix(f.Bugs, []string{"bsrr", "random"}, 2)
	if len(runs) != 2*2*2*2 {
		t.Fatalf("%d runs, want 16", len(runs))
	}
	if runs[0] != (Run{"etcd-17780", Affected, "bsrr", 1}) || runs[1] != (Run{"etcd-17780", Affected, "bsrr", 2}) ||
		runs[4] != (Run{"etcd-17780", Fixed, "bsrr", 1}) || runs[8].Bug != "split" {
		t.Errorf("matrix order: %v", runs)
	}
}

func TestName(t *testing.T) {
	n := func(trials int, sets ...string) string {
		return Name([]byte("cfg"), []byte("bugs"), sets, []string{"a"}, []string{"random"}, 2, trials)
	}
	a, b := n(8), n(8)
	if a != b || n(8) == n(9) || n(8) == n(8, "x=1") || !strings.HasPrefix(n(8), "bench-") {
		t.Errorf("names: %s %s %s", n(8), n(9), n(8, "x=1"))
	}
	if Name([]byte("ab"), []byte("c"), nil, nil, nil, 1, 1) == Name([]byte("a"), []byte("bc"), nil, nil, nil, 1, 1) {
		t.Error("the config and bugs data run together")
	}
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// trial makes trial index of campaign 1, one minute long starting at
// minute index, with a fault if injected and the failing verdict
// checker/symptom if checker is set.
func trial(index int, policy string, injected bool, checker, symptom string) *record.Trial {
	t := &record.Trial{ID: record.TrialID(1, index), Index: index, Policy: policy,
		Start: t0.Add(time.Duration(index) * time.Minute), End: t0.Add(time.Duration(index+1) * time.Minute)}
	if injected {
		t.Injections = []record.Injection{{Kind: catalog.KindCrash, SiteID: "s", Node: "n1"}}
	}
	if checker != "" {
		t.Verdicts = []record.Verdict{{Checker: checker, Failed: true, Symptom: symptom}}
	}
	return t
}

func TestScore(t *testing.T) {
	m := Matcher{Checker: "replicas", Symptom: "data differ"}
	ts := []*record.Trial{
		trial(3, "random", true, "replicas", `members' data differ at "end"`),
		trial(0, record.BaselinePolicy, false, "", ""),
		trial(1, "random", false, "replicas", `members' data differ at "end"`), // no fault: not a finding
		trial(2, "random", true, "hang", "members' data differ"),               // another checker
		trial(4, "random", true, "replicas", `members' data differ at "x"`),
	}
	res, err := Score(7, ts, m, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Hit{Trial: 3, TrialID: "1-3", Minutes: 4, Symptom: `replicas: members' data differ at "end"`}
	if res.Campaign != 7 || res.Trials != 4 || res.Injected != 3 || res.Minutes != 5 || res.Hit == nil || *res.Hit != want {
		t.Errorf("Score = %+v, hit %+v; want 4 trials, 3 injected, 5 minutes, hit %+v", res, res.Hit, want)
	}
	if res.FaultFree != 1 {
		t.Errorf("Score counted %d matching trials without faults, want 1 (trial 1)", res.FaultFree)
	}
	res, _ = Score(7, ts, Matcher{Checker: "replicas", Symptom: "nothing"}, report.Options{})
	if res.Hit != nil {
		t.Errorf("no match wanted, got %+v", res.Hit)
	}
	if _, err := Score(7, ts, Matcher{Checker: "x", Symptom: "("}, report.Options{}); err == nil {
		t.Error("a bad regexp judged")
	}
	if res, err := Score(7, nil, m, report.Options{}); err != nil || res.Trials != 0 || res.Hit != nil {
		t.Errorf("no trials: %+v, %v", res, err)
	}
}

func TestSummarise(t *testing.T) {
	bugs := []Bug{{ID: "split"}}
	hit := func(n int, min float64) *Hit {
		return &Hit{Trial: n, TrialID: "x-" + string(rune('0'+n)), Minutes: min}
	}
	results := map[Run]Result{
		{"split", Affected, "random", 1}: {Campaign: 1, Trials: 3, Injected: 3, Minutes: 1, Hit: hit(3, 0.5)},
		{"split", Affected, "random", 2}: {Campaign: 2, Trials: 8, Injected: 6, Minutes: 4, FaultFree: 2},
		{"split", Affected, "random", 3}: {Campaign: 3, Trials: 5, Injected: 5, Minutes: 2, Hit: hit(5, 1.5)},
		{"split", Fixed, "random", 1}:    {Campaign: 4, Trials: 8, Injected: 8, Minutes: 4},
		{"split", Fixed, "random", 2}:    {Campaign: 5, Trials: 8, Injected: 8, Minutes: 4, Hit: hit(2, 1)},
		{"split", Fixed, "random", 3}:    {Campaign: 6, Trials: 8, Injected: 0, Minutes: 4, FaultFree: 1},
		{"split", Affected, "bsrr", 1}:   {Campaign: 7, Trials: 8, Injected: 8, Minutes: 4},
		{"split", Affected, "bsrr", 2}:   {Campaign: 8, Trials: 8, Injected: 8, Minutes: 4},
		{"split", Affected, "bsrr", 3}:   {Campaign: 9, Trials: 2, Injected: 2, Minutes: 1, Hit: hit(2, 0.25)},
		{"split", Fixed, "bsrr", 1}:      {Campaign: 10, Trials: 8, Injected: 8, Minutes: 4},
		{"split", Fixed, "bsrr", 2}:      {Campaign: 11, Trials: 8, Injected: 8, Minutes: 4},
		{"split", Fixed, "bsrr", 3}:      {Campaign: 12, Trials: 8, Injected: 8, Minutes: 4, BaselineFails: true},
	}
	s, err := Summarise("b", bugs, []string{"random", "bsrr"}, 3, 8, results)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Rows[0]
	// Trials to the finding 3, 8 (a miss: the cap), 5: median 5; minutes
	// 0.5, 4 (the miss's whole campaign), 1.5: median 1.5.
	if r.Found != 2 || r.MedianTrials != 5 || r.MedianMinutes != 1.5 || r.FalsePositives != 1 || r.FalsePositiveTrials[0] != "x-2" ||
		r.InjectionRate != 30.0/40 || len(r.Campaigns) != 6 || r.FaultFreeAffected != 1 || r.FaultFreeFixed != 1 {
		t.Errorf("random row %+v", r)
	}
	if r := s.Rows[1]; r.Found != 1 || r.MedianTrials != 8 || r.FalsePositives != 0 || len(r.BaselineFails) != 1 {
		t.Errorf("bsrr row %+v", r)
	}
	if s.Minutes != 1+4+2+4+4+4+4+4+1+4+4+4 {
		t.Errorf("minutes %v", s.Minutes)
	}
	var buf bytes.Buffer
	if err := s.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	// The CI of 3 seeds is their min and max, at 1 − 2/8 = 75%; seed by
	// seed random found at 3, missed, found at 5, bsrr missed, missed,
	// found at 2: random sooner in seed 1 (bsrr missed), bsrr in seed 3
	// (5 − 2), both missed seed 2.
	want := `
bug    policy  found  median trials  CI of median trials  median minutes  injected  false positives (fixed)  without faults (affected, fixed)
split  random  2/3    5.0            [3, >8] 75%          1.50            75%       1/3 (x-2)                1/3, 1/3
split  bsrr    1/3    >=8.0          [2, >8] 75%          >=4.00          100%      0/3                      0/3, 0/3
split, bsrr: fixed seed 3, campaign 12: stopped before any fault, its baseline fails without faults (gofault report --fault-free shows why)

policies (A vs B)  pairs (bugs)  A sooner (B missed)  B sooner (A missed)  ties (both missed)  median A − B (both found)  sign test p  verdict
random vs bsrr     3 (1)         1 (1)                1 (0)                1 (1)               +3.0 (1)                   1.000        not more than noise
`
	if !strings.Contains(buf.String(), want) {
		t.Errorf("table:\n%s\nwant it to hold:%s", buf.String(), want)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing space: %q", line)
		}
	}
	delete(results, Run{"split", Fixed, "bsrr", 3})
	if _, err := Summarise("b", bugs, []string{"random", "bsrr"}, 3, 8, results); err == nil {
		t.Error("a missing result summarised")
	}
}

// TestSummariseCannot: a policy with no fault of the bug's kinds (sieve
// under crash: no fault trial ran) cannot find it in any seed, a campaign
// whose baseline failed cannot in its seed; neither is a miss: both are
// left out of found's misses, the medians, the interval, the comparisons
// and --fail-on failures, and the table says why. Five seeds of random
// against bsrr bound the median at 93.75% and, five sooner of five, are
// still noise for the sign test.
func TestSummariseCannot(t *testing.T) {
	bugs := []Bug{{ID: "etcd-17780", Scenario: []string{"faults.kinds=[crash, crash-after]"}}}
	results := map[Run]Result{}
	for seed := int64(1); seed <= 5; seed++ {
		for _, side := range []Side{Affected, Fixed} {
			results[Run{"etcd-17780", side, "sieve", seed}] = Result{Campaign: 100 + seed}
			results[Run{"etcd-17780", side, "random", seed}] = Result{Campaign: seed, Trials: 10, Injected: 10, Minutes: 1}
			results[Run{"etcd-17780", side, "bsrr", seed}] = Result{Campaign: 10 + seed, Trials: 10, Injected: 9, Minutes: 1}
		}
		// random finds at trials 2..5 (seeds 1..4); bsrr at 7 in seed 1
		// and misses the rest.
		if seed < 5 {
			results[Run{"etcd-17780", Affected, "random", seed}] = Result{Campaign: seed, Trials: int(seed + 1), Injected: int(seed + 1), Minutes: 0.5,
				Hit: &Hit{Trial: int(seed + 1), TrialID: fmt.Sprintf("%d-%d", seed, seed+1), Minutes: 0.5}}
		}
	}
	results[Run{"etcd-17780", Affected, "bsrr", 1}] = Result{Campaign: 11, Trials: 7, Injected: 7, Minutes: 1, Hit: &Hit{Trial: 7, TrialID: "11-7", Minutes: 1}}
	results[Run{"etcd-17780", Affected, "random", 5}] = Result{Campaign: 5, BaselineFails: true}
	s, err := Summarise("b", bugs, []string{"random", "sieve", "bsrr"}, 5, 10, results)
	if err != nil {
		t.Fatal(err)
	}
	random, sieve, bsrr := s.Rows[0], s.Rows[1], s.Rows[2]
	if random.Found != 4 || random.Cannot != 1 || random.MedianTrials != 3.5 || !random.Outcomes[4].Cannot || random.Lower() ||
		*random.TrialsCI != (Interval{Low: 2, High: 5, Confidence: 1 - 2.0/16, Seeds: 4}) {
		t.Errorf("random row %+v, CI %+v", random, random.TrialsCI)
	}
	if sieve.Cannot != 5 || sieve.Found != 0 || sieve.TrialsCI != nil || sieve.MedianTrials != 0 ||
		sieve.CannotWhy != "5 campaigns ran no fault trial: the policy has no fault to inject under the fault kinds crash, crash-after" {
		t.Errorf("sieve row %+v", sieve)
	}
	if bsrr.Cannot != 0 || bsrr.MedianTrials != 10 || !bsrr.Lower() ||
		*bsrr.TrialsCI != (Interval{Low: 7, High: 10, HighMissed: true, Confidence: 1 - 2.0/32, Seeds: 5}) {
		t.Errorf("bsrr row %+v, CI %+v", bsrr, bsrr.TrialsCI)
	}
	got := s.Failures(true)
	want := []string{"etcd-17780/bsrr: missed in 4 of 5 seeds", "etcd-17780/random: 1 campaign whose baseline failed"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("failures %q, want %q", got, want)
	}
	var buf bytes.Buffer
	if err := s.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	// random against bsrr: random sooner in seeds 1 (2 against 7) and
	// 2..4 (bsrr missed), seed 5 left out: 4 of 4 is p = 2/16.
	table := `
bug         policy  found          median trials  CI of median trials  median minutes  injected  false positives (fixed)  without faults (affected, fixed)
etcd-17780  random  4/5, 1 cannot  3.5            [2, 5] 88%           0.50            100%      0/5                      0/5, 0/5
etcd-17780  sieve   cannot         -              -                    -               nothing   0/5                      0/5, 0/5
etcd-17780  bsrr    1/5            >=10.0         [7, >10] 94%         >=1.00          91%       0/5                      0/5, 0/5
etcd-17780, random: affected seed 5, campaign 5: stopped before any fault, its baseline fails without faults (gofault report --fault-free shows why)
etcd-17780, random: cannot find it in 1 of 5 seeds: 1 campaign stopped before any fault: the baseline fails without faults
etcd-17780, sieve: cannot find it in 5 of 5 seeds: 5 campaigns ran no fault trial: the policy has no fault to inject under the fault kinds crash, crash-after

policies (A vs B)  pairs (bugs)     A sooner (B missed)  B sooner (A missed)  ties (both missed)  median A − B (both found)  sign test p  verdict
random vs sieve    0 (0), 5 cannot  0 (0)                0 (0)                0 (0)               -                          -            no pair both could run
random vs bsrr     4 (1), 1 cannot  4 (3)                0 (0)                0 (0)               -5.0 (1)                   0.125        not more than noise
sieve vs bsrr      0 (0), 5 cannot  0 (0)                0 (0)                0 (0)               -                          -            no pair both could run
`
	if !strings.Contains(buf.String(), table) {
		t.Errorf("table:\n%s\nwant it to hold:%s", buf.String(), table)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"cannot":5`, `"trials_ci":{"low":7,"high":10,"high_missed":true,"confidence":0.9375,"seeds":5}`,
		`"outcomes":[{"seed":1,"trial":7},{"seed":2}`, `"pairs":[{"a":"random","b":"sieve","pairs":0,"bugs":0,"cannot":5`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("JSON %s\nlacks %s", data, field)
		}
	}
}

// TestScoreCoOccurring: a known bug whose symptom is co-occurring — the
// same fault also lost a watch event, the primary symptom — is still
// found, at the first trial that showed it; a symptom no trial showed is
// not.
func TestScoreCoOccurring(t *testing.T) {
	withOrder := func(index int) *record.Trial {
		tr := trial(index, "random", true, "violations", "workload saw watch-lost-event violated")
		tr.Verdicts[0].Symptoms = []string{"workload saw watch-lost-event violated", "workload saw revision-monotonic violated"}
		return tr
	}
	ts := []*record.Trial{
		trial(1, "random", true, "violations", "workload saw watch-lost-event violated"),
		withOrder(2),
		withOrder(3),
	}
	for _, tc := range []struct {
		name  string
		m     Matcher
		trial int
	}{
		{"primary", Matcher{Checker: "violations", Symptom: "watch-lost-event"}, 1},
		{"co-occurring", Matcher{Checker: "violations", Symptom: "revision-monotonic"}, 2},
		{"absent", Matcher{Checker: "violations", Symptom: "watch-order"}, 0},
		{"another checker's", Matcher{Checker: "hang", Symptom: "revision-monotonic"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Score(1, ts, tc.m, report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			if res.Hit != nil {
				got = res.Hit.Trial
			}
			if got != tc.trial {
				t.Errorf("hit at trial %d (%+v), want %d", got, res.Hit, tc.trial)
			}
		})
	}
}

// TestScoreEvidence: a matcher with evidence takes only the trials whose
// checker's evidence has the bug's signature — raft-493's leader refusing
// writes, not hashicorp/raft #697's follower stuck re-installing a
// snapshot, both "saw recovery violated".
func TestScoreEvidence(t *testing.T) {
	withEvidence := func(index int, injected bool, lines ...string) *record.Trial {
		tr := trial(index, "fuzz", injected, "violations", "workload saw recovery violated")
		tr.Verdicts[0].Evidence = lines
		return tr
	}
	ts := []*record.Trial{
		withEvidence(1, true, "n1/0 [recovery]: node n1 served no linearizable read and write within 8s after the load stopped; last error: 503 context deadline exceeded"),
		withEvidence(2, true, "n2/0 [recovery]: node n2 served no linearizable read and write within 8s after the load stopped; last error: 503 leadership transfer in progress"),
		withEvidence(3, false, "n3/0 [recovery]: node n3 served no linearizable read and write within 8s after the load stopped; last error: 503 leadership transfer in progress"),
	}
	transfer := Matcher{Checker: "violations", Symptom: "recovery", Evidence: "leadership transfer in progress"}
	for _, tc := range []struct {
		name      string
		m         Matcher
		hit       int
		faultFree int
	}{
		{"signature", transfer, 2, 1},
		{"no evidence asked", Matcher{Checker: "violations", Symptom: "recovery"}, 1, 1},
		{"signature absent", Matcher{Checker: "violations", Symptom: "recovery", Evidence: "snapshot"}, 0, 0},
		{"another checker's evidence", Matcher{Checker: "hang", Symptom: ".", Evidence: "transfer"}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Score(1, ts, tc.m, report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			if res.Hit != nil {
				got = res.Hit.Trial
			}
			if got != tc.hit || res.FaultFree != tc.faultFree {
				t.Errorf("hit at trial %d, %d without faults; want %d, %d", got, res.FaultFree, tc.hit, tc.faultFree)
			}
		})
	}
	if _, err := Score(1, ts, Matcher{Checker: "violations", Symptom: ".", Evidence: "("}, report.Options{}); err == nil {
		t.Error("a bad evidence regexp judged")
	}
}
