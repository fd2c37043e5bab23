package main

import (
	"bytes"
	"encoding/json"
	"github.com/gofault/gofault/internal/version"
	"os"
	"path/filepath"
	"testing"
)

// TestEtcdCampaign is the end-to-end test of gofault's main job: a real
// campaign of three trials with faults on a real 3-member etcd cluster,
// built from the module proxy, then the report read back from the store.
func TestEtcdCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("builds etcd and runs a real cluster")
	}
	work := t.TempDir()
	cfg, err := filepath.Abs("../../targets/etcd/gofault.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{"--set", "workdir=" + work, "--set", "checkers.baseline=1"}

	var out, errb bytes.Buffer
	args := append([]string{"run", "--config", cfg, "--trials", "3", "--json"}, sets...)
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("gofault run: exit %d\n%s", code, errb.String())
	}
	var sum struct {
		Trials         *int     `json:"trials"`
		InjectedTrials *int     `json:"injected_trials"`
		InjectionRate  *float64 `json:"injection_rate"`
		Findings       *int     `json:"findings"`
		Seconds        *float64 `json:"seconds"`
		DB             *string  `json:"db"`
		BaselineTrials int      `json:"baseline_trials"`
		ErrorTrials    int      `json:"error_trials"`
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, out.String())
	}
	if sum.Trials == nil || sum.InjectedTrials == nil || sum.InjectionRate == nil || sum.Findings == nil || sum.Seconds == nil || sum.DB == nil {
		t.Fatalf("summary lacks a required key: %s", out.String())
	}
	if *sum.Trials != 3 || sum.BaselineTrials != 1 {
		t.Errorf("ran %d trials and %d baseline trials, want 3 and 1", *sum.Trials, sum.BaselineTrials)
	}
	if *sum.InjectedTrials == 0 {
		t.Errorf("no trial injected a fault: %s", out.String())
	}
	if sum.ErrorTrials != 0 {
		t.Errorf("%d trials could not run: %s", sum.ErrorTrials, out.String())
	}
	if _, err := os.Stat(*sum.DB); err != nil {
		t.Errorf("database: %v", err)
	}

	out.Reset()
	errb.Reset()
	if code := run([]string{"report", "--db", *sum.DB, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("gofault report: exit %d\n%s", code, errb.String())
	}
	var rep struct {
		Version  version.Info `json:"version"`
		Findings []struct {
			ID      string `json:"id"`
			Checker string `json:"checker"`
			Fault   *struct {
				Kind  string   `json:"kind"`
				Site  string   `json:"site"`
				Node  string   `json:"node"`
				Stack []string `json:"stack"`
			} `json:"fault"`
			Trials []string `json:"trials"`
			Replay string   `json:"replay"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report is not a JSON object: %v\n%s", err, out.String())
	}
	findings := rep.Findings
	if rep.Version.Wire == 0 || rep.Version.Go == "" {
		t.Errorf("report lacks gofault's version: %s", out.String())
	}
	if len(findings) != *sum.Findings {
		t.Errorf("report lists %d findings, run counted %d", len(findings), *sum.Findings)
	}
	for _, f := range findings {
		if f.ID == "" || f.Checker == "" || f.Fault == nil || f.Fault.Kind == "" || len(f.Trials) == 0 || f.Replay == "" {
			t.Errorf("incomplete finding: %+v", f)
		}
	}
}
