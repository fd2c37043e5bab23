package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestNotJudged(t *testing.T) {
	unjudgedTrial := func(id string, index int, reason string) *record.Trial {
		return &record.Trial{ID: id, Index: index, Status: record.StatusNotJudged, Err: "not judged: " + reason,
			Injections: []record.Injection{{Kind: catalog.KindError, SiteID: "meta.write", Node: "n1"}},
			Client:     []record.ClientEvent{{Kind: record.EvNotJudged, Client: "workload", Msg: reason}}}
	}
	ok := &record.Trial{ID: "1-3", Index: 3, Status: record.StatusOK, Injections: []record.Injection{{Kind: catalog.KindError, SiteID: "x", Node: "n1"}}}
	for _, tc := range []struct {
		name      string
		trials    []*record.Trial
		notJudged []string // trial: reason
		warn      bool
	}{
		{"none", []*record.Trial{ok}, nil, false},
		{"one of three", []*record.Trial{unjudgedTrial("1-1", 1, "JetStream disabled"), ok, {ID: "1-2", Index: 2, Status: record.StatusOK}},
			[]string{"1-1: JetStream disabled"}, false},
		{"most", []*record.Trial{unjudgedTrial("1-2", 2, "stream not created"), unjudgedTrial("1-1", 1, "JetStream disabled"), ok},
			[]string{"1-1: JetStream disabled", "1-2: stream not created"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(tc.trials, Options{})
			var got []string
			for _, u := range r.NotJudged {
				got = append(got, u.Trial+": "+u.Reason)
				if u.Fault.Site != "meta.write" {
					t.Errorf("%s: fault %+v", u.Trial, u.Fault)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.notJudged, "\n") || r.Trials != len(tc.trials) {
				t.Fatalf("not judged %q of %d trials, want %q of %d", got, r.Trials, tc.notJudged, len(tc.trials))
			}
			if len(r.Findings) != 0 {
				t.Errorf("a not-judged trial made findings: %+v", r.Findings)
			}
			var buf bytes.Buffer
			if err := WriteNotJudged(&buf, r.NotJudged, r.Trials); err != nil {
				t.Fatal(err)
			}
			text := buf.String()
			if (text == "") != (len(tc.notJudged) == 0) || strings.Contains(text, "warning:") != tc.warn {
				t.Errorf("text (warning wanted: %v):\n%s", tc.warn, text)
			}
			for _, nj := range r.NotJudged {
				if !strings.Contains(text, nj.Reason) {
					t.Errorf("text lacks %q:\n%s", nj.Reason, text)
				}
			}
			buf.Reset()
			if err := WriteJUnit(&buf, r, Suite{Name: "c", Trials: r.Trials}); err != nil {
				t.Fatal(err)
			}
			var doc junitSuites
			if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			skipped, campaignSkipped := 0, false
			for _, c := range doc.Suites[0].Cases {
				if c.Classname == "gofault.not-judged" && c.Skipped != nil && c.Failure == nil {
					skipped++
				}
				if c.Classname == "gofault.campaign" {
					campaignSkipped = c.Skipped != nil
				}
			}
			if skipped != len(tc.notJudged) || campaignSkipped != tc.warn || doc.Suites[0].Failures != 0 {
				t.Errorf("JUnit: %d skipped not-judged cases, campaign skipped %v, %d failures; want %d, %v, 0\n%s",
					skipped, campaignSkipped, doc.Suites[0].Failures, len(tc.notJudged), tc.warn, buf.String())
			}
		})
	}
}
