package gotest

import (
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
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
	var setup atomic.Int64
	var p policy.Policy = withoutHelpers{Policy: grantAll{[]uint32{0, 1, 2}}, drop: got, isHelper: helperFiles(), setup: &setup}
	if plan := p.Begin(policy.TrialInfo{}); !slices.Equal(plan.Sites, []uint32{0, 2}) {
		t.Errorf("plan sites = %v, want [0 2]: the helper's site is never live", plan.Sites)
	}
	for _, tc := range []struct {
		name  string
		stack []record.Frame
		fault bool
	}{
		{"library call from a test", []record.Frame{{File: lib}, {File: filepath.Join(dir, "p_test.go")}}, true},
		{"library call under the helper", []record.Frame{{File: lib}, {File: helper}, {File: filepath.Join(dir, "p_test.go")}}, false},
		{"no stack", nil, true},
	} {
		d := p.Decide(&policy.Request{Site: &cat.Sites[0], Stack: tc.stack})
		if got := d.Fault.Kind != catalog.KindNone; got != tc.fault {
			t.Errorf("%s: fault %v, want %v", tc.name, got, tc.fault)
		}
	}
	if setup.Load() != 1 {
		t.Errorf("setup requests = %d, want 1", setup.Load())
	}
}

// grantAll is a policy whose plans make its sites live and that grants
// an error at every request.
type grantAll struct{ sites []uint32 }

func (grantAll) Name() string                         { return "all" }
func (p grantAll) Begin(policy.TrialInfo) policy.Plan { return policy.Plan{Sites: p.sites} }
func (grantAll) End(policy.Outcome)                   {}
func (grantAll) Decide(*policy.Request) policy.Decision {
	return policy.Decision{Fault: policy.Fault{Kind: catalog.KindError, Error: 1}}
}
