package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/config"
)

// versioned is a test bug whose sides are versions of its module, one of
// them with an env setting too.
const versioned = `
bugs:
  - id: raft-restore
    test: {module: github.com/hashicorp/raft, package: ., run: '^TestRaft_UserRestore$', config: raft/gofault.yaml}
    scenario: [env.A=1]
    affected: {version: v1.3.7, set: [env.B=2]}
    fixed: v1.8.0
    match: {checker: test, symptom: 'TestRaft_UserRestore failed'}
`

// TestParseVersionedTestBug: a test bug whose sides name versions keeps
// its module path as written (Load makes only a directory absolute, and
// test.config), is Versioned, and its sides' env is the scenario's and
// the side's set.
func TestParseVersionedTestBug(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bugs.yaml")
	if err := os.WriteFile(path, []byte(versioned), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := Load(path, checkers)
	if err != nil {
		t.Fatal(err)
	}
	b := f.Bugs[0]
	if !b.Versioned() || b.Test.Module != "github.com/hashicorp/raft" || b.Affected.Version != "v1.3.7" || b.Fixed.Version != "v1.8.0" {
		t.Errorf("bug %+v (test %+v): want versioned, module github.com/hashicorp/raft, v1.3.7 and v1.8.0", b, b.Test)
	}
	if want := filepath.Join(filepath.Dir(path), "raft", "gofault.yaml"); b.Test.Config != want {
		t.Errorf("test.config %s, want %s", b.Test.Config, want)
	}
	if got := b.Env(Affected); !slices.Equal(got, []string{"A=1", "B=2"}) {
		t.Errorf("affected env %q, want A=1 B=2", got)
	}
	if got := b.Env(Fixed); !slices.Equal(got, []string{"A=1"}) {
		t.Errorf("fixed env %q, want A=1", got)
	}
	// The sides' versions are in the overrides, so a run's stored spec
	// changes with them (a resumed run must be of the same version).
	if got := b.Overrides(Fixed); !slices.Contains(got, "target.version=v1.8.0") {
		t.Errorf("fixed overrides %q lack the version", got)
	}
	env, err := Parse([]byte(testBug("m", "{set: [env.X=1]}", "{set: []}")), checkers)
	if err != nil {
		t.Fatal(err)
	}
	if env.Bugs[0].Versioned() {
		t.Errorf("a test bug with env sides is versioned")
	}
}

// testBug is a known-bug file of one test bug of module with the given
// sides.
func testBug(module, affected, fixed string) string {
	return "bugs:\n  - id: a\n    test: {module: " + module + "}\n    affected: " + affected + "\n    fixed: " + fixed +
		"\n    match: {checker: test, symptom: x}\n"
}

// TestParseVersionedTestBugErrors: the module of a versioned test bug is
// a module path, both sides name a full version of it; each error names
// the field and the fix.
func TestParseVersionedTestBugErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // empty: valid
	}{
		{"both versions", testBug("github.com/hashicorp/raft", "v1.3.7", "v1.8.0"), nil},
		{"versions and env", testBug("github.com/hashicorp/raft", "{version: v1.3.7, set: [env.X=1]}", "{version: v1.3.7}"), nil},
		{"major version path", testBug("github.com/google/renameio/v2", "v2.0.0", "v2.0.2"), nil},
		{"pseudo-version", testBug("github.com/hashicorp/raft", "v1.3.8-0.20220301000000-0123456789ab", "v1.8.0"), nil},
		{"one side only", testBug("github.com/hashicorp/raft", "v1.3.7", "{set: [env.X=1]}"),
			[]string{"bugs[0] (a).fixed.version: must be set; the other side names a version of the module", `"fixed: {version: v1.8.0}"`}},
		{"the other side only", testBug("github.com/hashicorp/raft", "{set: []}", "v1.8.0"),
			[]string{"bugs[0] (a).affected.version: must be set"}},
		{"same version", testBug("github.com/hashicorp/raft", "v1.8.0", "{version: v1.8.0}"),
			[]string{"bugs[0] (a).fixed: is the same release as affected"}},
		{"short version", testBug("github.com/hashicorp/raft", "v1.3", "v1.8.0"),
			[]string{`bugs[0] (a).affected.version: "v1.3" is not a module version; write a full module version such as "v1.8.0"`}},
		{"branch", testBug("github.com/hashicorp/raft", "main", "v1.8.0"),
			[]string{`bugs[0] (a).affected.version: "main" is not a module version`}},
		{"major version mismatch", testBug("github.com/google/renameio/v2", "v1.0.1", "v2.0.2"),
			[]string{"bugs[0] (a).affected.version: github.com/google/renameio/v2@v1.0.1: invalid version: should be v2, not v1", "a /vN path takes vN.x.y versions"}},
		{"relative directory", testBug("../gotest/testdata/retrystore", "v1.0.0", "v1.0.1"),
			[]string{`bugs[0] (a).test.module: "../gotest/testdata/retrystore" is a directory, and a local module has no versions to fetch`, "leave out version"}},
		{"one-element directory", testBug("retrystore", "v1.0.0", "v1.0.1"),
			[]string{`bugs[0] (a).test.module: "retrystore" is a directory`}},
		{"absolute directory", testBug("/src/raft", "v1.0.0", "v1.0.1"),
			[]string{`bugs[0] (a).test.module: "/src/raft" is a directory`}},
		{"not a path", testBug("github.com/hashicorp/raft@v1.3.7", "v1.3.7", "v1.8.0"),
			[]string{`bugs[0] (a).test.module: "github.com/hashicorp/raft@v1.3.7" is not a module path`, "as its go.mod's module line writes it"}},
		{"no module", "bugs:\n  - id: a\n    test: {package: .}\n    affected: v1.3.7\n    fixed: v1.8.0\n    match: {checker: test, symptom: x}\n",
			[]string{`bugs[0] (a).test.module: must be set; set the module path whose versions the sides name`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), checkers)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
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
}

// TestShippedTestBugFiles: the shipped files of versioned test bugs load,
// and their test.config's test section is valid.
func TestShippedTestBugFiles(t *testing.T) {
	for _, tc := range []struct {
		bugs string
		ids  []string
	}{
		{"../targets/raft/testbugs.yaml", []string{"raft-493-tests"}},
	} {
		f, _, err := Load(tc.bugs, checkers)
		if err != nil {
			t.Errorf("%s: %v", tc.bugs, err)
			continue
		}
		var ids []string
		for _, b := range f.Bugs {
			ids = append(ids, b.ID)
			if !b.Versioned() {
				t.Errorf("%s: bug %s: sides are not versions", tc.bugs, b.ID)
			}
			if b.Test.Config == "" {
				continue
			}
			if _, err := config.LoadTest(b.Test.Config); err != nil {
				t.Errorf("%s: bug %s: test.config: %v", tc.bugs, b.ID, err)
			}
		}
		if !slices.Equal(ids, tc.ids) {
			t.Errorf("%s holds %v, want %v", tc.bugs, ids, tc.ids)
		}
	}
}

// TestDeclaredKinds: the fault kinds a bug's file declares are a test
// bug's test.kinds or the last faults.kinds of its scenario and affected
// release; none declared is nil.
func TestDeclaredKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		bug  Bug
		want []string
	}{
		{"scenario", Bug{Scenario: []string{"faults.kinds=[crash]", "cluster.nodes=1"}}, []string{"crash"}},
		{"release wins", Bug{Scenario: []string{"faults.kinds=[crash]"}, Affected: Release{Set: []string{"faults.kinds=[delay]"}}}, []string{"delay"}},
		{"none", Bug{Scenario: []string{"cluster.nodes=1"}}, nil},
		{"test bug", Bug{Test: &Test{Kinds: []string{"error"}}, Scenario: []string{"env.X=1"}}, []string{"error"}},
	} {
		if got := c.bug.DeclaredKinds(); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
