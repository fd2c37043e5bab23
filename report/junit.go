package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// Suite names the campaign a JUnit file describes: its title (the test
// suite's name), when it started and how long its trials took.
type Suite struct {
	Name      string
	Timestamp time.Time
	Duration  time.Duration
	// Trials counts the campaign's trials; a passing test case says how
	// many ran, so a campaign without findings is not an empty suite.
	Trials int
}

// JUnit's XML shape, as GitHub Actions, GitLab and Jenkins read it (the
// common junit-10.xsd): testsuites > testsuite > testcase with at most
// one failure or skipped.
type (
	junitSuites struct {
		XMLName  xml.Name `xml:"testsuites"`
		Name     string   `xml:"name,attr"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		// No skipped count here: junit-10.xsd has it on testsuite only.
		Time   string       `xml:"time,attr"`
		Suites []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name      string      `xml:"name,attr"`
		Tests     int         `xml:"tests,attr"`
		Failures  int         `xml:"failures,attr"`
		Errors    int         `xml:"errors,attr"`
		Skipped   int         `xml:"skipped,attr"`
		Time      string      `xml:"time,attr"`
		Timestamp string      `xml:"timestamp,attr,omitempty"`
		Cases     []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitMessage `xml:"failure,omitempty"`
		Skipped   *junitMessage `xml:"skipped,omitempty"`
	}
	junitMessage struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",cdata"`
	}
)

// WriteJUnit writes r as a JUnit XML file for a CI's test view: one failing
// test case per finding and per fault-free failure (message: the symptom
// and the replay command; body: faults, evidence, trials, logs), one
// skipped test case per generic consequence (informational) and per trial
// the workload could not judge (message: its reason), and one test case
// for the campaign itself: passing, or skipped with NotJudgedWarning when
// most trials could not be judged.
func WriteJUnit(w io.Writer, r Report, s Suite) error {
	secs := fmt.Sprintf("%.3f", s.Duration.Seconds())
	suite := junitSuite{Name: s.Name, Time: secs}
	if !s.Timestamp.IsZero() {
		suite.Timestamp = s.Timestamp.UTC().Format("2006-01-02T15:04:05")
	}
	name := fmt.Sprintf("campaign: %d trials", s.Trials)
	if len(r.NotJudged) > 0 {
		name += fmt.Sprintf(", %d not judged", len(r.NotJudged))
	}
	campaignCase := junitCase{Name: name, Classname: "gofault.campaign", Time: secs}
	if warn := NotJudgedWarning(len(r.NotJudged), s.Trials); warn != "" {
		// A campaign that could judge almost nothing proves nothing: say so
		// where a CI shows it, without failing the build on it.
		campaignCase.Skipped = &junitMessage{Message: warn, Type: "not_judged"}
	}
	suite.Cases = append(suite.Cases, campaignCase)
	add := func(class, kind string, fs []Finding, skip bool) {
		for _, f := range fs {
			msg := &junitMessage{Message: f.Symptom + " — replay: " + f.Replay, Type: f.Checker, Text: kind + ":\n" + junitBody(f)}
			c := junitCase{Name: fmt.Sprintf("[%s] %s (%s)", f.Checker, f.Symptom, f.ID), Classname: class, Time: "0"}
			if skip {
				c.Skipped = msg
			} else {
				c.Failure = msg
			}
			suite.Cases = append(suite.Cases, c)
		}
	}
	add("gofault.findings", "finding", r.Findings, false)
	add("gofault.fault-free", "fault-free failure", r.FaultFree, false)
	add("gofault.generic", "generic consequence of faults (informational)", r.Generic, true)
	for _, u := range r.NotJudged {
		suite.Cases = append(suite.Cases, junitCase{
			Name: "not judged: trial " + u.Trial, Classname: "gofault.not-judged", Time: "0",
			Skipped: &junitMessage{Message: u.Reason, Type: "not_judged", Text: "the workload could not judge this trial: " + u.Reason + "\nafter " + faultLine(u.Fault) + "\n"},
		})
	}
	for _, c := range suite.Cases {
		suite.Tests++
		if c.Failure != nil {
			suite.Failures++
		}
		if c.Skipped != nil {
			suite.Skipped++
		}
	}
	doc := junitSuites{Name: "gofault", Tests: suite.Tests, Failures: suite.Failures, Time: secs, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitBody is a finding's failure text, as WriteText prints it.
func junitBody(f Finding) string {
	var b strings.Builder
	WriteText(&b, []Finding{f})
	return b.String()
}
