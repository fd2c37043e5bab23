package campaign

import (
	"strings"
	"syscall"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/cluster"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
)

// TestClusterNodes checks the mapping of the config's cluster section to the
// cluster runner's input, defaults included, and that the templates
// config.Validate accepts are the ones cluster.Render can execute.
func TestClusterNodes(t *testing.T) {
	cfg := config.Config{Name: "x", Target: config.Target{Packages: []string{"./..."}},
		Workload: config.Workload{Command: []string{"w"}},
		Cluster: config.Cluster{
			Nodes:   3,
			Ports:   []string{"client", "peer"},
			Command: []string{"{{.Bin}}", "{{.Index}} {{.Name}} {{.Dir}} {{.Trial}} {{.TrialDir}} {{range .Nodes}}{{.Index}}{{end}}"},
			Env:     map[string]string{"PEERS": "{{range $i, $n := .Nodes}}{{if $i}},{{end}}{{$n.Name}}=http://{{$n.Host}}:{{$n.Port.peer}}{{end}}"},
			Ready:   config.Ready{TCP: "{{.Host}}:{{.Port.client}}"},
		},
	}
	cfg.Defaults()
	if err := cfg.Validate(config.Known{}); err != nil {
		t.Fatalf("config rejects runner templates: %v", err)
	}
	cfg.Cluster.Shutdown = config.Shutdown{Signal: "INT", Order: config.ShutdownSequential}
	got, err := clusterNodes(cfg.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 3 || got.Ready.Timeout != config.DefaultReadyTimeout || got.Shutdown.Signal != syscall.SIGINT ||
		got.Shutdown.Grace != config.DefaultGrace || !got.Shutdown.Sequential || got.Ready.TCP != cfg.Cluster.Ready.TCP {
		t.Errorf("nodes %+v", got)
	}
	v := cluster.NodeVars{Index: 1, Name: "n1", Port: map[string]int{"client": 1, "peer": 2}, Host: cluster.Host}
	v.Nodes = []cluster.NodeVars{v}
	for _, tmpl := range append(got.Command, got.Env["PEERS"], got.Ready.TCP) {
		if _, err := cluster.Render(tmpl, v); err != nil {
			t.Errorf("Render(%q): %v", tmpl, err)
		}
	}
	cfg.Cluster.Shutdown.Signal = "SIGNOPE"
	if _, err := clusterNodes(cfg.Cluster); err == nil {
		t.Error("a bad signal was accepted")
	}
}

func TestBaselineBroken(t *testing.T) {
	failed := &record.Trial{ID: "1-0", Status: record.StatusFailed, Verdicts: []record.Verdict{{Checker: "hang", Failed: true, Symptom: "stuck"}}}
	for _, tc := range []struct {
		name  string
		tr    *record.Trial
		rerun record.Rerun
		want  string
	}{
		{"passed", &record.Trial{ID: "1-0", Status: record.StatusOK}, record.Rerun{}, ""},
		{"could not run", &record.Trial{ID: "1-0", Status: record.StatusError, Err: "boom"}, record.Rerun{}, "could not run, so no fault trial can: boom"},
		{"failed, reproducible", failed, record.Rerun{Runs: 2, Recurred: 2}, "did again in 2 of 2 re-runs (hang: stuck)"},
		{"failed, flaky", failed, record.Rerun{Runs: 2, Recurred: 1}, ""},
		{"failed, one-off", failed, record.Rerun{Runs: 2}, ""},
		{"failed, not re-run", failed, record.Rerun{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := baselineBroken(tc.tr, tc.rerun, "db")
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("baselineBroken = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSlowWaits(t *testing.T) {
	got, err := slowWaits([]config.SlowWait{{Kind: "delay", Role: "StateLeader", Reason: "static leader"}, {Kind: "disconnect", Site: "s1", Node: "n1", Reason: "r"}})
	if err != nil || len(got) != 2 || got[0].Kind != catalog.KindDelay || got[0].Role != "StateLeader" || got[0].Reason != "static leader" ||
		got[1].Kind != catalog.KindDisconnect || got[1].Site != "s1" || got[1].Node != "n1" {
		t.Fatalf("slowWaits = %+v, %v", got, err)
	}
	if _, err := slowWaits([]config.SlowWait{{Kind: "slow", Reason: "r"}}); err == nil || !strings.Contains(err.Error(), "checkers.waits_for_slow[0]") {
		t.Fatalf("an unknown kind: err = %v", err)
	}
}
