package instrument

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// TestBuildRoles analyses the roles testdata of the analysis package, one
// write shape at a time (etcd raft's assignment, hashicorp/raft's
// atomic.StoreUint32, the NATS server's atomic.Int32.Store, and the string,
// named string and bool roles of raft forks that target.role names),
// builds it with a hook after every role write, and runs the binary.
func TestBuildRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	ctx := context.Background()
	mod, err := filepath.Abs(filepath.Join("..", "analysis", "testdata", "roles"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ pkg, role string }{
		{"etcdlike", ""}, {"hashilike", ""}, {"natslike", ""},
		// The shapes of raft forks that only target.role names.
		{"stringlike", "example.com/roles/stringlike.server.state"},
		{"enumlike", "example.com/roles/enumlike.node.role"},
		{"boollike", "example.com/roles/boollike.peer.isLeader"},
		{"boollike", "example.com/roles/boollike.peer.amLeader"},
	} {
		pkg := tc.pkg
		t.Run(pkg+tc.role, func(t *testing.T) {
			tmp := t.TempDir()
			target := Target{WorkDir: filepath.Join(tmp, "build"),
				Module: mod, Main: "./cmd/node", Packages: []string{"example.com/roles/" + pkg}, Role: tc.role,
			}
			res, analysed, err := buildAnalysed(ctx, target, filepath.Join(tmp, "bin", "node"))
			if err != nil {
				t.Fatal(err)
			}
			var writes int
			if analysed.Role != nil {
				writes = len(analysed.Role.Writes)
			}
			if writes == 0 || res.Stats.RoleWrites != writes || res.Stats.Builds != 1 {
				t.Errorf("%d role hooks built in %d builds, want all %d in one (skipped %v)", res.Stats.RoleWrites, res.Stats.Builds, writes, res.Stats.SkipReasons)
			}
			cat, err := catalog.Load(res.CatalogFile)
			if err != nil {
				t.Fatal(err)
			}
			if cat.Role == nil || len(cat.Role.Writes) != writes {
				t.Fatalf("built catalog's role %+v, want %d writes", cat.Role, writes)
			}
			for _, w := range cat.Role.Writes {
				if !strings.HasPrefix(w.File, mod) {
					t.Errorf("role write %s at %s, want a file of %s", w.ID, w.File, mod)
				}
			}
			// The binary runs its role hooks without a controller.
			out, err := exec.CommandContext(ctx, res.Binary).CombinedOutput()
			// The main runs every shape, dragonlike's (a role read through
			// a method) last: false, it ends a follower.
			if err != nil || strings.TrimSpace(string(out)) != "2 2 1 false leader false false" {
				t.Errorf("node: %v, output %q", err, out)
			}
		})
	}
}
