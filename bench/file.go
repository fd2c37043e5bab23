// Package bench holds the pure parts of gofault bench: the known-bug file
// (what each bug is, the releases it affects and where it is fixed, the
// scenario that makes it reachable and the finding that shows it), the
// matrix of campaigns a bench runs, matching a campaign's findings against
// a bug, and the aggregation of the results, their statistics (a
// confidence interval per bug and policy, paired comparisons of the
// policies) and their table. Running the campaigns and keeping them in
// the store is Measure's.
package bench

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// File is a known-bug file (targets/<t>/bugs.yaml).
type File struct {
	Bugs []Bug `yaml:"bugs" want:"a list of bugs, each a mapping starting with \"- id: ...\""`
}

// Bug is one known bug of a target.
type Bug struct {
	// ID names the bug: unique in its file, of a-z, 0-9 and -.
	ID    string `yaml:"id"`
	Title string `yaml:"title"`
	Link  string `yaml:"link"`
	// Affected is a release that has the bug; Fixed one that does not
	// (the false-positive control).
	Affected Release `yaml:"affected" want:"a version such as \"v3.5.13\", or a mapping {version: v3.5.13, set: [path=value, ...]}"`
	Fixed    Release `yaml:"fixed" want:"a version such as \"v3.5.13\", or a mapping {version: v3.5.13, set: [path=value, ...]}"`
	// Scenario are config overrides ("path=value", as --set takes) that
	// make the bug reachable on both releases.
	Scenario []string `yaml:"scenario" want:"a list of config overrides such as [faults.kinds=[crash]]"`
	// Match says which finding is the bug.
	Match Matcher `yaml:"match"`
	// Test, when set, makes the bug's campaigns gofault test campaigns of
	// a package's own Go tests (docs/gotest.md) instead of cluster
	// campaigns: its scenario and releases' sets are then env.KEY=VALUE
	// settings of the test runs, its releases' versions (both or
	// neither) versions of Test.Module (Versioned), and its checker is
	// TestChecker.
	Test *Test `yaml:"test,omitempty" json:",omitempty"`
}

// TestChecker is the checker of a test bug's findings: the test's own
// outcome (gotest.Checker).
const TestChecker = "test"

// EnvPrefix starts an override of a test bug (scenario, release set):
// env.KEY=VALUE sets KEY=VALUE for every run of the test binary.
const EnvPrefix = "env."

// Test is what a test bug's campaigns run: gofault test on Package of
// the module in Module, the tests Run matches, with faults of Kinds.
type Test struct {
	// Module is the module that holds the package. For a bug whose sides
	// are env settings alone it is the module's directory, as written
	// relative to the known-bug file's directory (Load makes it
	// absolute); its gofault.yaml's test section (member and transport
	// rules), if any, is read as gofault test reads it. For a bug whose
	// sides name versions (Bug.Versioned) it is the module path
	// (github.com/hashicorp/raft): each side runs the module's source at
	// its version, fetched from the module proxy.
	Module string `yaml:"module" json:"module"`
	// Package is the package under test, relative to Module (default ".").
	Package string `yaml:"package" json:"package"`
	// Run, if set, keeps only the tests this Go regexp matches (go test's -run).
	Run string `yaml:"run" json:"run,omitempty"`
	// Kinds are the fault kinds (default error and delay, as gofault test's).
	Kinds []string `yaml:"kinds" json:"kinds,omitempty" want:"a list of fault kinds such as [error, delay]"`
	// Delay is an injected delay's length (default gofault test's, 2s).
	Delay time.Duration `yaml:"delay" json:"delay,omitempty" want:"a positive duration such as 50ms" min:"1"`
	// Runs is the fault-free runs of every test (default gofault test's, 2).
	Runs int `yaml:"runs" json:"runs,omitempty" want:"a number of fault-free runs of at least 1" min:"1"`
	// Config, if set, is the gofault.yaml whose test section (member and
	// transport rules) the campaigns read instead of the module's own, as
	// gofault test --config: written relative to the known-bug file's
	// directory (Load makes it absolute). A module fetched at a version
	// has no gofault.yaml of its own.
	Config string `yaml:"config" json:"config,omitempty"`
}

// FaultKinds returns the test's fault kinds, parsed (Validate checked them).
func (t *Test) FaultKinds() ([]catalog.Kind, error) {
	var out []catalog.Kind
	for _, k := range t.Kinds {
		kind, err := catalog.ParseKind(k)
		if err != nil {
			return nil, err
		}
		out = append(out, kind)
	}
	return out, nil
}

// Versioned reports whether b is a test bug whose sides are versions of
// its module (Test.Module a module path): a side's campaigns run the
// module's source at the side's Release.Version.
func (b *Bug) Versioned() bool {
	return b.Test != nil && (b.Affected.Version != "" || b.Fixed.Version != "")
}

// Env returns the environment of a test bug's runs on side s: the
// scenario's env.KEY=VALUE settings, then the release's, as KEY=VALUE.
func (b *Bug) Env(s Side) []string {
	var out []string
	for _, o := range b.Overrides(s) {
		if kv, ok := strings.CutPrefix(strings.TrimSpace(o), EnvPrefix); ok {
			out = append(out, kv)
		}
	}
	return out
}

// Release is one side of a bug: a target version (target.version) and
// config overrides. In YAML it is a version string ("v3.5.13") or a
// mapping {version: v3.5.13, set: [...]}.
type Release struct {
	Version string   `yaml:"version"`
	Set     []string `yaml:"set" want:"a list of config overrides such as [faults.kinds=[crash]]"`
}

// UnmarshalYAML reads a release written as its version alone
// ("v3.5.13") or as a mapping of its fields.
func (r *Release) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		r.Version = n.Value
		return nil
	}
	type fields Release // without this method
	return n.Decode((*fields)(r))
}

// Overrides returns the release's config overrides: target.version first
// (when set), then Set.
func (r Release) Overrides() []string {
	var out []string
	if r.Version != "" {
		out = append(out, "target.version="+r.Version)
	}
	return append(out, r.Set...)
}

// String names the release for humans: its version, its overrides, or
// "config as is".
func (r Release) String() string {
	if o := r.Overrides(); len(o) > 0 {
		return strings.Join(o, " ")
	}
	return "config as is"
}

// Matcher picks the finding that shows a bug: a finding of Checker whose
// symptom matches the Go regular expression Symptom and, when Evidence is
// set, in a trial where one of Checker's evidence lines matches the Go
// regular expression Evidence — the bug's own signature, where its symptom
// is one other bugs share (a cluster that stops serving: raft-493's leader
// answers "leadership transfer in progress", hashicorp/raft #697's
// follower keeps re-installing a snapshot).
type Matcher struct {
	Checker  string `yaml:"checker"`
	Symptom  string `yaml:"symptom"`
	Evidence string `yaml:"evidence,omitempty" json:",omitempty"`
}

// Side is the release a bench run runs: the affected or the fixed one.
type Side string

// The two sides of a bug.
const (
	Affected Side = "affected"
	Fixed    Side = "fixed"
)

// Release returns the bug's release on side s.
func (b *Bug) Release(s Side) Release {
	if s == Fixed {
		return b.Fixed
	}
	return b.Affected
}

// Overrides returns the config overrides of a run of the bug on side s:
// the scenario, then the release's.
func (b *Bug) Overrides(s Side) []string {
	return append(slices.Clone(b.Scenario), b.Release(s).Overrides()...)
}

// DeclaredKinds returns the fault kinds the known-bug file declares for
// the bug's campaigns on its affected release: a test bug's test.kinds,
// or the faults.kinds its scenario and release set; nil where it declares
// none (the config's, or gofault test's default, apply). The bench names
// them where a policy could not find the bug (Row.CannotWhy).
func (b *Bug) DeclaredKinds() []string {
	if b.Test != nil {
		return b.Test.Kinds
	}
	cfg, err := config.Parse(nil, b.Overrides(Affected)...)
	if err != nil {
		return nil // Validate refused the file already
	}
	return cfg.Faults.Kinds
}

// Load reads and validates a known-bug file; checkers are the known
// checker names (empty: not checked).
func Load(path string, checkers []string) (*File, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read known-bug file: %w", err)
	}
	f, err := Parse(data, checkers)
	if err != nil {
		return nil, nil, fmt.Errorf("known-bug file %s: %w", path, err)
	}
	for _, b := range f.Bugs {
		if b.Test == nil {
			continue
		}
		for _, fp := range []struct {
			name string
			p    *string
		}{{"module", &b.Test.Module}, {"config", &b.Test.Config}} {
			if *fp.p == "" || filepath.IsAbs(*fp.p) || (fp.name == "module" && b.Versioned()) {
				continue
			}
			abs, err := filepath.Abs(filepath.Join(filepath.Dir(path), *fp.p))
			if err != nil {
				return nil, nil, fmt.Errorf("known-bug file %s: bug %s: test.%s: %w", path, b.ID, fp.name, err)
			}
			*fp.p = abs
		}
	}
	return f, data, nil
}

// Parse decodes and validates a known-bug file. Decoding is strict: an
// unknown field is an error naming it, its line and the valid fields.
func Parse(data []byte, checkers []string) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse yaml: %w", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, errors.New(`empty: want "bugs:" and a list of bugs (see docs/bench.md)`)
	}
	f := &File{}
	if err := fileStrict.Decode(doc.Content[0], f); err != nil {
		return nil, err
	}
	if err := f.Validate(checkers); err != nil {
		return nil, err
	}
	return f, nil
}

// fileStrict decodes a known-bug file: an unknown field names the valid
// ones of its mapping.
var fileStrict = config.Strict{
	Root: "known-bug file",
	Unknown: func(parent, key string, line int, valid []string) error {
		return fmt.Errorf("line %d: %s: unknown field %q; did you mean %q? (valid fields: %s; see docs/bench.md)",
			line, cmp.Or(parent, "known-bug file"), key, config.Closest(key, valid), strings.Join(valid, ", "))
	},
}

// bugID is the form of a bug ID.
var bugID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// reserved are the config paths a bench sets itself, refused in a scenario
// and (but target.version) in a release's set.
var reserved = map[string]string{
	"policy.name":    "the bench runs every policy of --policies",
	"policy.seed":    "the bench runs seeds 1..--seeds",
	"target.version": "give the version as affected/fixed (affected: v3.5.13, or {version: v3.5.13})",
	"store.db":       "every run of a bench is kept in the config's store",
	"workdir":        "every run of a bench uses the config's work dir",
}

// Validate checks the bugs and returns every problem, joined; each is a
// *config.FieldError naming the field and the fix. checkers are the known
// checker names (empty: not checked).
func (f *File) Validate(checkers []string) error {
	var errs []error
	bad := func(field, fix, format string, args ...any) {
		errs = append(errs, &config.FieldError{Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix})
	}
	if len(f.Bugs) == 0 {
		bad("bugs", `add a bug, e.g. "- id: my-bug" with affected, fixed, scenario and match (see docs/bench.md)`, "no bugs")
	}
	seen := map[string]bool{}
	for i, b := range f.Bugs {
		p := fmt.Sprintf("bugs[%d]", i)
		if b.ID != "" {
			p = fmt.Sprintf("bugs[%d] (%s)", i, b.ID)
		}
		switch {
		case b.ID == "":
			bad(p+".id", `set e.g. "id: etcd-17780"`, "must be set")
		case !bugID.MatchString(b.ID):
			bad(p+".id", "use lower-case letters, digits and -, e.g. etcd-17780", "%q is not a valid bug ID", b.ID)
		case seen[b.ID]:
			bad(p+".id", "give each bug its own ID", "%q is used by an earlier bug", b.ID)
		}
		seen[b.ID] = true
		if b.Test != nil {
			validateTest(bad, p, &b)
		} else {
			for _, s := range []Side{Affected, Fixed} {
				r := b.Release(s)
				rp := p + "." + string(s)
				if r.Version != "" && !strings.HasPrefix(r.Version, "v") {
					bad(rp+".version", `set e.g. "v3.5.14"`, "must be a module version starting with v (got %q)", r.Version)
				}
				checkOverrides(bad, rp+".set", r.Set, "target.version")
			}
			checkOverrides(bad, p+".scenario", b.Scenario, "")
		}
		if slices.Equal(b.Affected.Overrides(), b.Fixed.Overrides()) {
			bad(p+".fixed", `name the release with the fix, e.g. "fixed: v3.5.14", or for a planted bug "affected: {set: [ENV=on]}" and "fixed: {set: []}"`,
				"is the same release as affected (%s), so it cannot be the false-positive control", b.Affected)
		}
		switch {
		case b.Test != nil && b.Match.Checker != TestChecker:
			bad(p+".match.checker", `a test bug's findings are the test's own outcome: set "checker: test"`, "is %q", b.Match.Checker)
		case b.Test != nil:
		case b.Match.Checker == "":
			bad(p+".match.checker", "name the checker that sees the bug, e.g. \"checker: violations\"", "must be set")
		case len(checkers) > 0 && !slices.Contains(checkers, b.Match.Checker):
			bad(p+".match.checker", "valid names: "+strings.Join(checkers, ", "), "unknown checker %q", b.Match.Checker)
		}
		if b.Match.Symptom == "" {
			bad(p+".match.symptom", `set a regular expression over the finding's symptom, e.g. "members' data differ" ('.' for any symptom of the checker)`, "must be set")
		} else if _, err := regexp.Compile(b.Match.Symptom); err != nil {
			bad(p+".match.symptom", "write a Go regular expression (https://pkg.go.dev/regexp/syntax)", "%v", err)
		}
		if _, err := regexp.Compile(b.Match.Evidence); err != nil {
			bad(p+".match.evidence", "write a Go regular expression over one evidence line (https://pkg.go.dev/regexp/syntax), or leave it out", "%v", err)
		}
	}
	return errors.Join(errs...)
}

// inProcess are the fault kinds a test process may take (gotest: the cuts
// need the module's test.transport rule, which gofault test checks).
var inProcess = catalog.KindError | catalog.KindDelay | catalog.KindPartition | catalog.KindDisconnect |
	catalog.KindOneWay | catalog.KindSplit | catalog.KindLeaderCut

// validateTest checks the test section of test bug b (field path p) and
// its overrides, which are env.KEY=VALUE settings of the test runs.
func validateTest(bad func(field, fix, format string, args ...any), p string, b *Bug) {
	t := b.Test
	switch {
	case b.Versioned():
		validateVersions(bad, p, b)
	case t.Module == "":
		bad(p+".test.module", "set the directory of the module that holds the package, relative to the known-bug file, e.g. \"module: ../gotest/testdata/retrystore\"", "must be set")
	}
	if _, err := regexp.Compile(t.Run); err != nil {
		bad(p+".test.run", "write a Go regular expression over test names, as go test's -run takes", "%v", err)
	}
	for i, k := range t.Kinds {
		kind, err := catalog.ParseKind(k)
		switch {
		case err != nil:
			bad(fmt.Sprintf("%s.test.kinds[%d]", p, i), "use error, delay, or with test.transport partition, disconnect, oneway, split, leadercut", "%v", err)
		case kind == catalog.KindNone || kind&^inProcess != 0:
			bad(fmt.Sprintf("%s.test.kinds[%d]", p, i), "use error, delay, or with test.transport partition, disconnect, oneway, split, leadercut", "fault kind %q is not offered in-process (a test process is one process: a crash would kill every member)", k)
		}
	}
	for _, s := range []Side{Affected, Fixed} {
		checkEnv(bad, p+"."+string(s)+".set", b.Release(s).Set)
	}
	checkEnv(bad, p+".scenario", b.Scenario)
}

// validateVersions checks a test bug whose sides name versions: its
// module is a module path (not a directory: a local tree has no
// versions to fetch) and each side names a version of it.
func validateVersions(bad func(field, fix, format string, args ...any), p string, b *Bug) {
	mod := b.Test.Module
	pathErr := module.CheckPath(mod)
	switch {
	case mod == "":
		bad(p+".test.module", `set the module path whose versions the sides name, e.g. "module: github.com/hashicorp/raft"`, "must be set")
	case pathErr != nil && localDir(mod):
		bad(p+".test.module", `a side's version is fetched from the module proxy: give the module path (e.g. "module: github.com/hashicorp/raft"), or for this local directory make the sides env settings ("affected: {set: [env.KEY=VALUE]}") and leave out version`,
			"%q is a directory, and a local module has no versions to fetch", mod)
	case pathErr != nil:
		bad(p+".test.module", `give the module path as its go.mod's module line writes it, e.g. "module: github.com/hashicorp/raft"`, "%q is not a module path: %v", mod, pathErr)
	}
	for _, s := range []Side{Affected, Fixed} {
		v := b.Release(s).Version
		f := p + "." + string(s) + ".version"
		switch {
		case v == "":
			bad(f, fmt.Sprintf(`the other side names a version of the module, so this one must too (e.g. "%s: {version: v1.8.0}"); for sides that differ only in env, leave out version on both`, s),
				"must be set")
		case !semver.IsValid(v) || semver.Canonical(v) != strings.TrimSuffix(v, "+incompatible"):
			bad(f, `write a full module version such as "v1.8.0" (go list -m -versions MODULE lists them)`, "%q is not a module version", v)
		case pathErr == nil:
			if err := module.Check(mod, v); err != nil {
				bad(f, "name a version of this module path (a /vN path takes vN.x.y versions; go list -m -versions "+mod+" lists them)", "%v", err)
			}
		}
	}
}

// localDir reports whether a test.module that is not a module path is
// written as a directory: relative (., ..), absolute, or one element.
func localDir(mod string) bool {
	return mod == "." || mod == ".." || strings.HasPrefix(mod, "./") || strings.HasPrefix(mod, "../") ||
		filepath.IsAbs(mod) || !strings.Contains(mod, "/")
}

// checkEnv checks that each of a test bug's overrides is env.KEY=VALUE.
func checkEnv(bad func(field, fix, format string, args ...any), field string, overrides []string) {
	for i, o := range overrides {
		kv, ok := strings.CutPrefix(strings.TrimSpace(o), EnvPrefix)
		key, _, hasValue := strings.Cut(kv, "=")
		if !ok || !hasValue || key == "" || strings.ContainsAny(key, " \t") {
			bad(fmt.Sprintf("%s[%d]", field, i), "a test bug's overrides set the test runs' environment: write env.KEY=VALUE, e.g. env.RETRYSTORE_BUG=drop", "%q is not env.KEY=VALUE", o)
		}
	}
}

// checkOverrides checks each override's path and value against the config
// schema and refuses the reserved paths (but allowed).
func checkOverrides(bad func(field, fix, format string, args ...any), field string, overrides []string, allowed string) {
	for i, o := range overrides {
		f := fmt.Sprintf("%s[%d]", field, i)
		path, _, ok := strings.Cut(o, "=")
		path = strings.TrimSpace(path)
		if !ok || path == "" {
			bad(f, "write path=value, as --set takes, e.g. faults.kinds=[crash]", "%q is not an override", o)
			continue
		}
		if why, ok := reserved[path]; ok && path != allowed {
			bad(f, why, "%s may not be set here", path)
			continue
		}
		if _, err := config.Parse(nil, o); err != nil {
			bad(f, "see docs/config.md for the fields", "%v", err)
		}
	}
}

// Select returns the bugs with the given IDs, in the file's order; none
// given: all. An unknown ID is an error naming the known ones.
func (f *File) Select(ids []string) ([]Bug, error) {
	if len(ids) == 0 {
		return f.Bugs, nil
	}
	var known []string
	for _, b := range f.Bugs {
		known = append(known, b.ID)
	}
	for _, id := range ids {
		if !slices.Contains(known, id) {
			return nil, fmt.Errorf("no bug %q in the known-bug file (its bugs: %s)", id, strings.Join(known, ", "))
		}
	}
	var out []Bug
	for _, b := range f.Bugs {
		if slices.Contains(ids, b.ID) {
			out = append(out, b)
		}
	}
	return out, nil
}
