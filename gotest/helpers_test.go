package gotest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
)

func TestHelperSites(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib.go")
	helper := filepath.Join(dir, "testing.go")
	for f, src := range map[string]string{
		lib:    "package p\n\nimport \"os\"\n\nvar _ = os.Create\n",
		helper: "package p\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nvar _ = os.MkdirTemp\nvar _ *testing.T\n",
	} {
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{ID: "p.F:os.Create#0", Index: 0, File: lib},
		{ID: "p.makeCluster:os.MkdirTemp#0", Index: 1, File: helper},
		{ID: "p.G:os.Open#0", Index: 2, File: filepath.Join(dir, "gone.go")},
	}}
	got := HelperSites(cat)
	if len(got) != 1 || got[1] != helper {
		t.Errorf("HelperSites = %v, want only site 1 in %s", got, helper)
	}
	var p policy.Policy = withoutSites{allSites{[]uint32{0, 1, 2}}, got}
	if plan := p.Begin(policy.TrialInfo{}); !slices.Equal(plan.Sites, []uint32{0, 2}) {
		t.Errorf("plan sites = %v, want [0 2]: the helper's site is never live", plan.Sites)
	}
}

// allSites is a policy whose plans make its sites live and that grants
// nothing.
type allSites struct{ sites []uint32 }

func (allSites) Name() string                           { return "all" }
func (p allSites) Begin(policy.TrialInfo) policy.Plan   { return policy.Plan{Sites: p.sites} }
func (allSites) Decide(*policy.Request) policy.Decision { return policy.Decision{} }
func (allSites) End(policy.Outcome)                     {}
