package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gofault/gofault/agent/durable"
	"github.com/gofault/gofault/agent/wire"
)

// TestSyncSiteRecordsImage: a hook at a sync site that is not live records
// the durable image before the real call; other sites do not.
func TestSyncSiteRecordsImage(t *testing.T) {
	if got := parseSites("3, 70"); len(got) != 2 || got[0] != 1<<3 || got[1] != 1<<(70-64) {
		t.Fatalf("parseSites = %b", got)
	}
	if parseSites("") != nil || parseSites("x") != nil {
		t.Fatal("parseSites accepted a bad list")
	}
	dir := filepath.Join(t.TempDir(), "n1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(wire.EnvPowerLoss, dir)
	t.Setenv(wire.EnvSyncSites, "5")
	initPowerLoss()
	defer func() { image, syncSites = nil, nil }()
	current.Store(newPlan(&wire.Plan{Sites: []uint32{9}}))
	defer current.Store(emptyPlan)

	log := filepath.Join(dir, "log")
	if err := os.WriteFile(log, []byte("synced;"), 0o644); err != nil {
		t.Fatal(err)
	}
	Fault(5) // the sync site: what is there now is durable
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("unsynced;")
	f.Close()
	Fault(4) // not a sync site
	if _, err := durable.RollBack(dir, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(log); string(b) != "synced;" {
		t.Errorf("log = %q after the power loss, want what was there at the sync", b)
	}
}

// TestNoImageWithoutEnvironment: without GOFAULT_POWERLOSS plans carry no
// sync bitmap, so hooks pay nothing for power loss.
func TestNoImageWithoutEnvironment(t *testing.T) {
	t.Setenv(wire.EnvPowerLoss, "")
	initPowerLoss()
	if p := newPlan(&wire.Plan{Sites: []uint32{1}}); p.sync != nil {
		t.Fatal("a plan has a sync bitmap without a power-loss image")
	}
}
