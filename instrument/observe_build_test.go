package instrument

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildObserve analyses the analysis package's testdata shaped like
// hashicorp/raft and nats-server, builds it with a hook at every
// observation point (hashed IDs, types by entries, messages read as the
// handler starts) and runs the binary, whose hooks run without a
// controller.
func TestBuildObserve(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	ctx := context.Background()
	for _, tt := range []struct {
		mod, pkg, out string
	}{
		{"observehraft", "raft", "3"},
		{"observenats", "server", "3"},
	} {
		t.Run(tt.mod, func(t *testing.T) {
			mod, err := filepath.Abs(filepath.Join("..", "analysis", "testdata", tt.mod))
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			target := Target{WorkDir: filepath.Join(tmp, "build"),
				Module: mod, Main: "./cmd/node", Packages: []string{"example.com/" + tt.mod + "/" + tt.pkg},
			}
			res, analysed, err := buildAnalysed(ctx, target, filepath.Join(tmp, "bin", "node"))
			if err != nil {
				t.Fatal(err)
			}
			points := len(analysed.ObservePoints)
			if points == 0 || res.Stats.ObservePoints != points || res.Stats.Builds != 1 {
				t.Errorf("%d observation hooks built in %d builds, want all %d in one (skipped %v)", res.Stats.ObservePoints, res.Stats.Builds, points, res.Stats.SkipReasons)
			}
			out, err := exec.CommandContext(ctx, res.Binary).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tt.out {
				t.Errorf("node: %v, output %q", err, out)
			}
		})
	}
}
