package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// exitFound is the exit status of run, test and bench when --fail-on
// names results the campaign or bench had (docs/ci.md): distinct from 1
// (gofault could not do its job), 2 (usage), 3 (a replay that did not
// reproduce) and 130 (interrupted).
const exitFound = 4

// errFound marks a finished command whose results --fail-on names; it
// exits with exitFound.
var errFound = errors.New("--fail-on")

// failOn is the value of --fail-on: which results make run, test or
// bench exit with exitFound after printing them as usual.
type failOn string

// The values of --fail-on.
const (
	// failNever exits 0 whatever the results (the default of run, test
	// and bench).
	failNever failOn = "never"
	// failFindings exits exitFound on a finding: for run, a finding of a
	// trial with an injected fault; for test, the same, a test that
	// failed under a fault (one per test and symptom); for bench, a
	// false positive (a matching finding on a fixed release).
	failFindings failOn = "findings"
	// failFailures exits exitFound on anything failFindings does and on
	// every other failure: for run, a failed trial that made no finding
	// (a fault-free failure, a generic consequence) or a trial that could
	// not run; for test, a failed fault trial or a failure with no fault
	// (a fault-free run's included); for bench, also a seed that missed
	// its bug, a symptom without faults, or a baseline that failed.
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
	fs.Var(&f, "fail-on", fmt.Sprintf("exit with status %d when the %s has these results: findings, failures (findings and every other failure) or never (docs/ci.md)", exitFound, what))
	return &f
}

// results is what --fail-on reads of a finished command: what it found,
// its findings alone, or with all every other failure too (a campaign's,
// a bench's or a test campaign's summary).
type results interface {
	Failures(all bool) []string
}

// failOnResults is the one exit decision of --fail-on, for run, test and
// bench: whether r has the results that fail names. It returns an error
// wrapping errFound that says which (the command exits with exitFound),
// or nil.
func failOnResults(fail failOn, r results) error {
	if fail == failNever {
		return nil
	}
	return found(fail, r.Failures(fail == failFailures))
}

// found wraps errFound with the results got, or returns nil for none.
func found(fail failOn, got []string) error {
	if len(got) == 0 {
		return nil
	}
	return fmt.Errorf("%w %s: %s", errFound, fail, strings.Join(got, "; "))
}
