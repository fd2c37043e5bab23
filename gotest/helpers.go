package gotest

import (
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strconv"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
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

// withoutSites is a policy whose plans never make the sites of drop
// live: the policy is never asked about them, so it injects nothing
// there.
type withoutSites struct {
	policy.Policy
	drop map[uint32]string
}

func (p withoutSites) Begin(info policy.TrialInfo) policy.Plan {
	plan := p.Policy.Begin(info)
	plan.Sites = slices.DeleteFunc(slices.Clone(plan.Sites), func(i uint32) bool {
		_, ok := p.drop[i]
		return ok
	})
	return plan
}

// files are the distinct files of drop, sorted.
func files(drop map[uint32]string) []string {
	set := map[string]bool{}
	for _, f := range drop {
		set[f] = true
	}
	return slices.Sorted(maps.Keys(set))
}
