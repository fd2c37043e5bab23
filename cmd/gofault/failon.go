package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/gofault/gofault/bench"
	"github.com/gofault/gofault/campaign"
)

// exitFound is the exit status of run and bench when --fail-on names
// results the campaign or bench had (docs/ci.md): distinct from 1 (gofault
// could not do its job), 2 (usage), 3 (a replay that did not reproduce)
// and 130 (interrupted).
const exitFound = 4

// errFound marks a finished command whose results --fail-on names; it
// exits with exitFound.
var errFound = errors.New("--fail-on")

// failOn is the value of --fail-on: which results make run or bench exit
// with exitFound after printing them as usual.
type failOn string

// The values of --fail-on.
const (
	// failNever exits 0 whatever the results (run's default, and bench's).
	failNever failOn = "never"
	// failFindings exits exitFound on a finding: for run, a finding of a
	// trial with an injected fault; for bench, a false positive (a
	// matching finding on a fixed release).
	failFindings failOn = "findings"
	// failFailures exits exitFound on anything failFindings does and on
	// every other failure: for run, a failed trial that made no finding
	// (a fault-free failure, a generic consequence) or a trial that could
	// not run; for bench, also a seed that missed its bug, a symptom
	// without faults, or a baseline that failed.
	failFailures failOn = "failures"
)

var failOnValues = []failOn{failNever, failFindings, failFailures}

func (f *failOn) String() string { return string(*f) }

func (f *failOn) Set(s string) error {
	for _, v := range failOnValues {
		if string(v) == s {
			*f = v
			return nil
		}
	}
	return fmt.Errorf("want one of findings, failures, never")
}

// failOnFlag adds --fail-on to fs with default def.
func failOnFlag(fs *flag.FlagSet, def failOn, what string) *failOn {
	f := def
	fs.Var(&f, "fail-on", fmt.Sprintf("exit with status %d when the %s has these results: findings, failures (findings and every other failure) or never (default %s; docs/ci.md)", exitFound, what, def))
	return &f
}

// runResults decides whether a campaign's summary has the results that
// fail names; it returns an error wrapping errFound that says which, or
// nil.
func runResults(fail failOn, sum *campaign.Summary) error {
	if fail == failNever {
		return nil
	}
	return found(fail, sum.Failures(fail == failFailures))
}

// benchResults decides whether a bench's summary has the results that
// fail names; it returns an error wrapping errFound that says which, or
// nil.
func benchResults(fail failOn, sum *bench.Summary) error {
	if fail == failNever {
		return nil
	}
	return found(fail, sum.Failures(fail == failFailures))
}

// found wraps errFound with the results got, or returns nil for none.
func found(fail failOn, got []string) error {
	if len(got) == 0 {
		return nil
	}
	return fmt.Errorf("%w %s: %s", errFound, fail, strings.Join(got, "; "))
}
