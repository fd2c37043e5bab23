package gotest

import (
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
)

// countFindings fills s.Findings and s.FaultFreeFailures from the
// campaign's trials (an earlier run's included), as gofault report --db
// counts them.
func (s *Summary) countFindings(trials []*record.Trial) {
	rep := report.New(trials, report.Options{})
	s.Findings, s.FaultFreeFailures = len(rep.Findings), len(rep.FaultFree)
	s.Assumptions, s.FailStops, s.Timing = 0, 0, 0
	for _, tr := range trials {
		for _, v := range tr.Verdicts {
			switch v.Symptom {
			case AssumptionSymptom, IgnoredSymptom:
				s.Assumptions++
			case FailStopSymptom:
				s.FailStops++
			case TimingSymptom:
				s.Timing++
			}
		}
	}
}

// Failures names what the campaign found, as gofault test --fail-on
// reads it: its findings, and with all every other failure too (failed
// fault trials, failures with no fault injected); none, nil. It is
// campaign.Summary.Failures for a test campaign, which has no trial that
// could not run (such a run stops the campaign) and no generic
// consequence (its one checker is the test).
func (s *Summary) Failures(all bool) []string {
	var got []string
	if s.Findings > 0 {
		got = append(got, report.Plural(s.Findings, "finding"))
	}
	if !all {
		return got
	}
	if s.Failed > 0 {
		got = append(got, report.Plural(s.Failed, "failed fault trial"))
	}
	if s.FaultFreeFailures > 0 {
		got = append(got, report.Plural(s.FaultFreeFailures, "fault-free failure"))
	}
	return got
}
