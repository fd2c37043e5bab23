// Package bench holds the pure parts of gofault bench: the known-bug file
// (what each bug is, the releases it affects and where it is fixed, the
// scenario that makes it reachable and the finding that shows it), the
// matrix of campaigns a bench runs, matching a campaign's findings against
// a bug, and the aggregation and table of the results. Running the
// campaigns and keeping them in the store is cmd/gofault's.
package bench

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/gofault/gofault/config"
	"go.yaml.in/yaml/v3"
)

// File is a known-bug file (targets/<t>/bugs.yaml).
type File struct {
	Bugs []Bug `yaml:"bugs"`
}

// Bug is one known bug of a target.
type Bug struct {
	// ID names the bug: unique in its file, of a-z, 0-9 and -.
	ID    string `yaml:"id"`
	Title string `yaml:"title"`
	Link  string `yaml:"link"`
	// Affected is a release that has the bug; Fixed one that does not
	// (the false-positive control).
	Affected Release `yaml:"affected"`
	Fixed    Release `yaml:"fixed"`
	// Scenario are config overrides ("path=value", as --set takes) that
	// make the bug reachable on both releases.
	Scenario []string `yaml:"scenario"`
	// Match says which finding is the bug.
	Match Matcher `yaml:"match"`
}

// Release is one side of a bug: a target version (target.version) and
// config overrides. In YAML it is a version string ("v3.5.13") or a
// mapping {version: v3.5.13, set: [...]}.
type Release struct {
	Version string   `yaml:"version"`
	Set     []string `yaml:"set"`
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
	f, err := decodeFile(doc.Content[0])
	if err != nil {
		return nil, err
	}
	if err := f.Validate(checkers); err != nil {
		return nil, err
	}
	return f, nil
}

// Fields of each mapping of the file, in the order docs/bench.md gives.
var (
	fileFields    = []string{"bugs"}
	bugFields     = []string{"id", "title", "link", "affected", "fixed", "scenario", "match"}
	releaseFields = []string{"version", "set"}
	matchFields   = []string{"checker", "symptom", "evidence"}
)

func decodeFile(n *yaml.Node) (*File, error) {
	f := &File{}
	err := fields(n, "known-bug file", fileFields, func(k string, v *yaml.Node) error {
		if v.Kind != yaml.SequenceNode {
			return wrong(v, "bugs", "a list of bugs, each a mapping starting with \"- id: ...\"")
		}
		for i, e := range v.Content {
			b, err := decodeBug(e, fmt.Sprintf("bugs[%d]", i))
			if err != nil {
				return err
			}
			f.Bugs = append(f.Bugs, b)
		}
		return nil
	})
	return f, err
}

func decodeBug(n *yaml.Node, path string) (Bug, error) {
	var b Bug
	err := fields(n, path, bugFields, func(k string, v *yaml.Node) error {
		p := path + "." + k
		switch k {
		case "id":
			return scalar(v, p, &b.ID)
		case "title":
			return scalar(v, p, &b.Title)
		case "link":
			return scalar(v, p, &b.Link)
		case "affected":
			return decodeRelease(v, p, &b.Affected)
		case "fixed":
			return decodeRelease(v, p, &b.Fixed)
		case "scenario":
			return list(v, p, &b.Scenario)
		case "match":
			return fields(v, p, matchFields, func(k string, v *yaml.Node) error {
				switch k {
				case "checker":
					return scalar(v, p+".checker", &b.Match.Checker)
				case "evidence":
					return scalar(v, p+".evidence", &b.Match.Evidence)
				}
				return scalar(v, p+".symptom", &b.Match.Symptom)
			})
		}
		return nil
	})
	return b, err
}

func decodeRelease(n *yaml.Node, path string, r *Release) error {
	if n.Kind == yaml.ScalarNode {
		return scalar(n, path, &r.Version)
	}
	if n.Kind != yaml.MappingNode {
		return wrong(n, path, `a version such as "v3.5.13", or a mapping {version: v3.5.13, set: [path=value, ...]}`)
	}
	return fields(n, path, releaseFields, func(k string, v *yaml.Node) error {
		if k == "version" {
			return scalar(v, path+".version", &r.Version)
		}
		return list(v, path+".set", &r.Set)
	})
}

// fields calls set for each key of mapping n, refusing keys not in valid.
func fields(n *yaml.Node, path string, valid []string, set func(k string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return wrong(n, path, "a mapping of fields ("+strings.Join(valid, ", ")+")")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(valid, k.Value) {
			return fmt.Errorf("line %d: %s: unknown field %q; did you mean %q? (valid fields: %s; see docs/bench.md)",
				k.Line, path, k.Value, config.Closest(k.Value, valid), strings.Join(valid, ", "))
		}
		if seen[k.Value] {
			return fmt.Errorf("line %d: %s: field %q given twice; remove one", k.Line, path, k.Value)
		}
		seen[k.Value] = true
		if err := set(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

func scalar(n *yaml.Node, path string, out *string) error {
	if n.Kind != yaml.ScalarNode {
		return wrong(n, path, "a string")
	}
	*out = n.Value
	return nil
}

func list(n *yaml.Node, path string, out *[]string) error {
	if n.Kind != yaml.SequenceNode {
		return wrong(n, path, "a list of config overrides such as [faults.kinds=[crash]]")
	}
	for i, e := range n.Content {
		var s string
		if err := scalar(e, fmt.Sprintf("%s[%d]", path, i), &s); err != nil {
			return err
		}
		*out = append(*out, s)
	}
	return nil
}

func wrong(n *yaml.Node, path, want string) error {
	return fmt.Errorf("line %d: %s: want %s", n.Line, path, want)
}

// closest returns the name in valid nearest to s (edit distance).
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
		for _, s := range []Side{Affected, Fixed} {
			r := b.Release(s)
			rp := p + "." + string(s)
			if r.Version != "" && !strings.HasPrefix(r.Version, "v") {
				bad(rp+".version", `set e.g. "v3.5.14"`, "must be a module version starting with v (got %q)", r.Version)
			}
			checkOverrides(bad, rp+".set", r.Set, "target.version")
		}
		if slices.Equal(b.Affected.Overrides(), b.Fixed.Overrides()) {
			bad(p+".fixed", `name the release with the fix, e.g. "fixed: v3.5.14", or for a planted bug "affected: {set: [ENV=on]}" and "fixed: {set: []}"`,
				"is the same release as affected (%s), so it cannot be the false-positive control", b.Affected)
		}
		checkOverrides(bad, p+".scenario", b.Scenario, "")
		switch {
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
