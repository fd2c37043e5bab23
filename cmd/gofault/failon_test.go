package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gofault/gofault/bench"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/gotest"
)

func TestRunResults(t *testing.T) {
	clean := campaign.Summary{Trials: 10}
	findings := campaign.Summary{Trials: 10, FailedTrials: 2, Findings: 1}
	faultFree := campaign.Summary{Trials: 10, FailedTrials: 1, FaultFreeFailures: 1}
	couldNotRun := campaign.Summary{Trials: 10, ErrorTrials: 2}
	for _, tt := range []struct {
		name string
		fail failOn
		sum  campaign.Summary
		want string // "" for nil
	}{
		{"never with findings", failNever, findings, ""},
		{"findings, clean", failFindings, clean, ""},
		{"findings", failFindings, findings, "--fail-on findings: 1 finding"},
		{"findings ignores a fault-free failure", failFindings, faultFree, ""},
		{"findings ignores trials that could not run", failFindings, couldNotRun, ""},
		{"failures, clean", failFailures, clean, ""},
		{"failures with findings", failFailures, findings, "--fail-on failures: 1 finding; 2 failed trials"},
		{"failures, fault-free", failFailures, faultFree, "--fail-on failures: 1 failed trial; 1 fault-free failure"},
		{"failures, could not run", failFailures, couldNotRun, "--fail-on failures: 2 trials that could not run"},
	} {
		err := failOnResults(tt.fail, &tt.sum)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want || !errors.Is(err, errFound) {
			t.Errorf("%s: %v, want %q wrapping errFound", tt.name, err, tt.want)
		}
	}
}

// TestTestResults: gofault test --fail-on reads a test campaign's
// summary as run's reads a campaign's: a finding for findings, and for
// failures also a failed fault trial or a failure with no fault.
func TestTestResults(t *testing.T) {
	clean := gotest.Summary{Trials: 10}
	findings := gotest.Summary{Trials: 10, Failed: 2, FaultFailed: 2, Findings: 1}
	faultFree := gotest.Summary{Trials: 10, FaultFreeFailures: 1}
	for _, tt := range []struct {
		name string
		fail failOn
		sum  gotest.Summary
		want string // "" for nil
	}{
		{"never with findings", failNever, findings, ""},
		{"findings, clean", failFindings, clean, ""},
		{"findings", failFindings, findings, "--fail-on findings: 1 finding"},
		{"findings ignores a fault-free failure", failFindings, faultFree, ""},
		{"failures, clean", failFailures, clean, ""},
		{"failures with findings", failFailures, findings, "--fail-on failures: 1 finding; 2 failed fault trials"},
		{"failures, fault-free", failFailures, faultFree, "--fail-on failures: 1 fault-free failure"},
	} {
		err := failOnResults(tt.fail, &tt.sum)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want || !errors.Is(err, errFound) {
			t.Errorf("%s: %v, want %q wrapping errFound", tt.name, err, tt.want)
		}
	}
}

func TestBenchResults(t *testing.T) {
	found := bench.Row{Bug: "split", Policy: "bsrr", Seeds: 3, Found: 3}
	falsePos := bench.Row{Bug: "split", Policy: "random", Seeds: 3, Found: 3, FalsePositives: 1}
	missed := bench.Row{Bug: "catchup", Policy: "random", Seeds: 3, Found: 1}
	baseline := bench.Row{Bug: "catchup", Policy: "bsrr", Seeds: 3, Found: 3, BaselineFails: []string{"fixed seed 2, campaign 7"}, FaultFreeFixed: 1}
	for _, tt := range []struct {
		name string
		fail failOn
		rows []bench.Row
		want string
	}{
		{"never", failNever, []bench.Row{falsePos, missed}, ""},
		{"findings, all found", failFindings, []bench.Row{found}, ""},
		{"findings, a miss is no finding", failFindings, []bench.Row{found, missed}, ""},
		{"findings, a false positive", failFindings, []bench.Row{found, falsePos}, "--fail-on findings: split/random: 1 false positive on the fixed release"},
		{"failures, all found", failFailures, []bench.Row{found}, ""},
		{"failures, a miss", failFailures, []bench.Row{found, missed}, "--fail-on failures: catchup/random: missed in 2 of 3 seeds"},
		{"failures, baseline and fault-free", failFailures, []bench.Row{baseline}, "--fail-on failures: catchup/bsrr: the symptom without faults in 1 campaign; catchup/bsrr: 1 campaign whose baseline failed"},
	} {
		err := failOnResults(tt.fail, &bench.Summary{Rows: tt.rows})
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want || !errors.Is(err, errFound) {
			t.Errorf("%s: %v, want %q wrapping errFound", tt.name, err, tt.want)
		}
	}
}

// TestFailOnExitCodes checks the exit statuses a CI job reads: a bad
// --fail-on value is a usage error (2) on run and bench, and a command
// whose results --fail-on names exits with exitFound (4), its message on
// stderr, while its other errors stay 1.
func TestFailOnExitCodes(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--fail-on", "always"},
		{"bench", "--fail-on", "finding"},
		{"test", "--fail-on", "bugs", "."},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "want one of findings, failures, never") {
			t.Errorf("gofault %s: exit %d, stderr %q; want 2", strings.Join(args, " "), code, errb.String())
		}
	}
	register(command{name: "test-results", run: func(ctx context.Context, args []string, stdout io.Writer) error {
		switch args[0] {
		case "findings":
			return failOnResults(failFindings, &campaign.Summary{Findings: 2, FailedTrials: 2})
		case "clean":
			return failOnResults(failFailures, &campaign.Summary{Trials: 5})
		}
		return errors.New("the cluster did not start")
	}})
	defer delete(commands, "test-results")
	for _, tt := range []struct {
		arg  string
		code int
		want string
	}{
		{"findings", exitFound, "gofault test-results: --fail-on findings: 2 findings\n"},
		{"clean", 0, ""},
		{"error", 1, "gofault test-results: the cluster did not start\n"},
	} {
		var out, errb bytes.Buffer
		if code := run([]string{"test-results", tt.arg}, &out, &errb); code != tt.code || errb.String() != tt.want {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", tt.arg, code, errb.String(), tt.code, tt.want)
		}
	}
	if exitFound == 1 || exitFound == 2 || exitFound == 3 || exitFound == exitInterrupted {
		t.Errorf("exitFound %d is another status's", exitFound)
	}
}
