package campaign

import (
	"testing"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/cluster"
)

func TestPowerLossEnv(t *testing.T) {
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, Callee: "(*os.File).Write", IO: "disk"},
		{Index: 1, Callee: "(*os.File).Sync", IO: "disk"},
		{Index: 2, Callee: "fileutil.Fdatasync", IO: "disk"},
		{Index: 3, Callee: "ioutil.WriteAndSyncFile", IO: "disk"}, // writes, then syncs: not a sync site
		{Index: 4, Callee: "unix.Fsync", IO: "disk"},
		{Index: 5, Callee: "(*http.Client).Do", IO: "net"},
	}}
	nodes := cluster.Nodes{Env: map[string]string{"A": "b"}}
	if got := powerLossEnv(nodes, []string{"crash"}, cat); len(got.Env) != 1 {
		t.Errorf("without powerloss: env %v, want unchanged", got.Env)
	}
	got := powerLossEnv(nodes, []string{"crash", "powerloss"}, cat)
	if got.Env[wire.EnvSyncSites] != "1,2,4" || got.Env[wire.EnvPowerLoss] != "{{.Dir}}" || got.Env["A"] != "b" {
		t.Errorf("env %v, want sync sites 1,2,4 and the node's dir", got.Env)
	}
	if len(nodes.Env) != 1 {
		t.Errorf("the input's env changed: %v", nodes.Env)
	}
}
