package gotest

import (
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// HelperSites returns the sites of cat whose call is in a file that
// imports "testing" (a test helper shipped in the package, as
// hashicorp/raft's testing.go), by index, with the file: a fault there
// breaks the test's own setup (a temp dir it cannot make), which says
// nothing about the code under test. A file that cannot be read keeps
// its sites.
func HelperSites(cat *catalog.Catalog) map[uint32]string {
	imports := map[string]bool{}
	out := map[uint32]string{}
	for _, s := range cat.Sites {
		t, ok := imports[s.File]
		if !ok {
			t = importsTesting(s.File)
			imports[s.File] = t
		}
		if t {
			out[s.Index] = s.File
		}
	}
	return out
}

// importsTesting reports whether the Go file at path imports "testing".
func importsTesting(path string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return false
	}
	for _, im := range f.Imports {
		if p, err := strconv.Unquote(im.Path.Value); err == nil && p == "testing" {
			return true
		}
	}
	return false
}

// withoutHelpers is a policy that never lets a fault strike test setup:
// its plans never make the sites of drop (HelperSites) live, and a
// request whose stack passes through a test helper file (isHelper: a
// file other than a _test.go one that imports "testing", such as raft's
// makeCluster calling NewFileSnapshotStore) is answered "no fault"
// without asking the policy. Setup asks for stacks only when the policy
// does (random, bsrr, ... do); Setup counts the requests so answered.
type withoutHelpers struct {
	policy.Policy
	drop     map[uint32]string
	isHelper func(file string) bool
	setup    *atomic.Int64
}

// Snapshot passes the wrapped policy's state on (policy.Stateful), so that
// a resumed campaign restores it; nil when it keeps none.
func (p withoutHelpers) Snapshot() ([]byte, error) {
	if s, ok := p.Policy.(policy.Stateful); ok {
		return s.Snapshot()
	}
	return nil, nil
}

// Restore gives the wrapped policy its stored state, if it keeps any.
func (p withoutHelpers) Restore(data []byte) error {
	if s, ok := p.Policy.(policy.Stateful); ok {
		return s.Restore(data)
	}
	return nil
}

func (p withoutHelpers) Begin(info policy.TrialInfo) policy.Plan {
	plan := p.Policy.Begin(info)
	plan.Sites = slices.DeleteFunc(slices.Clone(plan.Sites), func(i uint32) bool {
		_, ok := p.drop[i]
		return ok
	})
	return plan
}

func (p withoutHelpers) Decide(req *policy.Request) policy.Decision {
	if underHelper(req.Stack, p.isHelper) {
		p.setup.Add(1)
		return policy.Decision{}
	}
	return p.Policy.Decide(req)
}

// underHelper reports whether a frame of stack is in a test helper file
// (isHelper), not counting _test.go files: every test's stack passes
// through its own test function.
func underHelper(stack []record.Frame, isHelper func(string) bool) bool {
	for _, f := range stack {
		if f.File != "" && !strings.HasSuffix(f.File, "_test.go") && isHelper(f.File) {
			return true
		}
	}
	return false
}

// helperFiles returns a cached importsTesting.
func helperFiles() func(string) bool {
	seen := map[string]bool{}
	return func(file string) bool {
		h, ok := seen[file]
		if !ok {
			h = importsTesting(file)
			seen[file] = h
		}
		return h
	}
}

// files are the distinct files of drop, sorted.
func files(drop map[uint32]string) []string {
	set := map[string]bool{}
	for _, f := range drop {
		set[f] = true
	}
	return slices.Sorted(maps.Keys(set))
}
