package instrument

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/policy"
)

// onePolicy makes one site live and injects one fault there at the first
// request: fault, or the site's first error value when fault is zero.
type onePolicy struct {
	site  uint32
	fault policy.Fault
	mu    sync.Mutex
	got   int
}

func (p *onePolicy) Name() string { return "one" }
func (p *onePolicy) Begin(policy.TrialInfo) policy.Plan {
	return policy.Plan{Sites: []uint32{p.site}}
}
func (p *onePolicy) Decide(*policy.Request) policy.Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got++
	f := p.fault
	if f.Kind == catalog.KindNone {
		f = policy.Fault{Kind: catalog.KindError, Error: 1}
	}
	return policy.Decision{Fault: f, Done: true}
}
func (p *onePolicy) End(policy.Outcome) {}

// buildApp builds the testdata app (cmd/app over its store and x/mod's
// semver) into tmp with the hand catalog, changed by edit if not nil.
func buildApp(t *testing.T, tmp string, edit func(*catalog.Catalog)) *Result {
	t.Helper()
	app, err := filepath.Abs(filepath.Join("testdata", "app"))
	if err != nil {
		t.Fatal(err)
	}
	target := Target{WorkDir: filepath.Join(tmp, "build"), Module: app, Main: "./cmd/app",
		Packages: []string{"example.com/app/store", "golang.org/x/mod/semver"}}
	res, err := buildWith(context.Background(), target, filepath.Join(tmp, "app"), func(ctx context.Context, w *Work) (*catalog.Catalog, error) {
		cat := handCatalog(t, w)
		if edit != nil {
			edit(cat)
		}
		return cat, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestInjectApp builds the testdata app, serves its catalog from a
// controller whose policy injects EIO at os.Create, and checks that the
// program sees exactly the error the rewritten call returned: the whole
// chain from catalog position to agent decision to generated error value.
func TestInjectApp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	tmp := t.TempDir()
	res := buildApp(t, tmp, nil)
	var site *catalog.Site
	for i := range res.Catalog.Sites {
		if res.Catalog.Sites[i].Callee == "os.Create" {
			site = &res.Catalog.Sites[i]
		}
	}
	if site == nil {
		t.Fatal("no os.Create site in the built catalog")
	}
	pol := &onePolicy{site: site.Index}
	c, err := controller.Listen("unix", filepath.Join(tmp, "c.sock"), controller.Options{Catalog: res.Catalog, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := c.BeginTrial(controller.TrialSpec{ID: "t1", Nodes: []string{"n1"}})
	if err != nil {
		t.Fatal(err)
	}
	tr.Arm() // live from the start: the program's first put is the target
	cmd := exec.Command(res.Binary, t.TempDir())
	cmd.Env = append(os.Environ(), "GOFAULT_CONTROLLER="+c.Addr(), "GOFAULT_NODE=n1", "GOFAULT_TRIAL=t1")
	out, err := cmd.CombinedOutput()
	rec := tr.End()
	// Site 0's Errors[0] is &fs.PathError{Op: "write", Path: "", Err: syscall.EIO}.
	if err == nil || !strings.Contains(string(out), "error: put k0: write : input/output error") {
		t.Errorf("app output %q (%v), want the injected EIO from the first put", out, err)
	}
	if len(rec.Injections) != 1 || pol.got != 1 {
		t.Errorf("%d injections recorded, policy asked %d times; want 1 and 1", len(rec.Injections), pol.got)
	}
}
