package instrument

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// TestBuildStates analyses the states testdata of the analysis package,
// builds it with a hook at every abstract state, and runs the binary.
func TestBuildStates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	ctx := context.Background()
	mod, err := filepath.Abs(filepath.Join("..", "analysis", "testdata", "states"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	target := Target{WorkDir: filepath.Join(tmp, "build"),
		Module: mod, Main: "./cmd/node", Packages: []string{"example.com/states/..."},
	}
	res, an, err := buildAnalysed(ctx, target, filepath.Join(tmp, "bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	analysed := len(an.States)
	if analysed == 0 || res.Stats.States != analysed || res.Stats.Builds != 1 {
		t.Errorf("%d state hooks built in %d builds, want all %d in one (skipped %v)", res.Stats.States, res.Stats.Builds, analysed, res.Stats.SkipReasons)
	}
	cat, err := catalog.Load(res.CatalogFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.States) != analysed || len(cat.Tasks) == 0 {
		t.Errorf("catalog has %d states and %d tasks, want %d states", len(cat.States), len(cat.Tasks), analysed)
	}
	for _, s := range cat.States {
		if !strings.HasPrefix(s.File, mod) {
			t.Errorf("state %s at %s, want a file of %s", s.ID, s.File, mod)
		}
	}
	// The binary runs its state hooks without a controller.
	cmd := exec.CommandContext(ctx, res.Binary)
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "follower" {
		t.Errorf("node: %v, output %q", err, out)
	}
}
