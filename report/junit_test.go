package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// xmlNode is any element, for checking the JUnit file's shape.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xmlNode  `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (n xmlNode) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// junitSchema is the shape of junit-10.xsd (the JUnit schema of
// Jenkins' xunit plugin, which GitHub Actions' and GitLab's readers
// accept too): the children each element may have and the attributes it
// must and may carry, as that XSD declares them.
var junitSchema = map[string]struct {
	children           []string
	required, optional []string
}{
	"testsuites": {children: []string{"testsuite"}, optional: []string{"name", "time", "tests", "failures", "errors"}},
	"testsuite": {children: []string{"testsuite", "properties", "testcase", "system-out", "system-err"},
		required: []string{"name", "tests", "failures", "errors"},
		optional: []string{"group", "time", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url"}},
	"properties": {children: []string{"property"}},
	"property":   {required: []string{"name", "value"}},
	"testcase": {children: []string{"skipped", "error", "failure", "system-out", "system-err"},
		required: []string{"name"}, optional: []string{"time", "classname", "group"}},
	"failure":    {optional: []string{"type", "message"}},
	"error":      {optional: []string{"type", "message"}},
	"skipped":    {optional: []string{"type", "message"}},
	"system-out": {},
	"system-err": {},
}

func checkShape(t *testing.T, n xmlNode, path string) {
	t.Helper()
	name := n.XMLName.Local
	rule, ok := junitSchema[name]
	if !ok {
		t.Errorf("%s: element %q is not in the JUnit schema", path, name)
		return
	}
	allowed := map[string]bool{}
	for _, a := range append(append([]string{}, rule.required...), rule.optional...) {
		allowed[a] = true
	}
	for _, a := range n.Attrs {
		if !allowed[a.Name.Local] {
			t.Errorf("%s: attribute %q not allowed on %s", path, a.Name.Local, name)
		}
	}
	for _, a := range rule.required {
		if _, ok := n.attr(a); !ok {
			t.Errorf("%s: %s lacks required attribute %q", path, name, a)
		}
	}
	for _, a := range []string{"tests", "failures", "errors", "skipped"} {
		if v, ok := n.attr(a); ok {
			if _, err := strconv.Atoi(v); err != nil {
				t.Errorf("%s: %s=%q is not an integer", path, a, v)
			}
		}
	}
	if v, ok := n.attr("time"); ok {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			t.Errorf("%s: time=%q is not a decimal", path, v)
		}
	}
	if v, ok := n.attr("timestamp"); ok {
		if _, err := time.Parse("2006-01-02T15:04:05", v); err != nil {
			t.Errorf("%s: timestamp=%q is not an ISO 8601 date-time without zone", path, v)
		}
	}
	kids := map[string]bool{}
	for _, c := range rule.children {
		kids[c] = true
	}
	outcome := 0
	for _, c := range n.Children {
		if !kids[c.XMLName.Local] {
			t.Errorf("%s: %s may not contain %s", path, name, c.XMLName.Local)
			continue
		}
		if c.XMLName.Local == "failure" || c.XMLName.Local == "skipped" || c.XMLName.Local == "error" {
			outcome++
		}
		checkShape(t, c, path+"/"+c.XMLName.Local)
	}
	if outcome > 1 {
		t.Errorf("%s: a testcase has at most one failure, error or skipped", path)
	}
	if name == "testsuite" {
		var tests, failures, skipped int
		for _, c := range n.Children {
			if c.XMLName.Local != "testcase" {
				continue
			}
			tests++
			for _, o := range c.Children {
				switch o.XMLName.Local {
				case "failure":
					failures++
				case "skipped":
					skipped++
				}
			}
		}
		for a, want := range map[string]int{"tests": tests, "failures": failures, "skipped": skipped} {
			if v, _ := n.attr(a); v != strconv.Itoa(want) {
				t.Errorf("%s: %s=%s, but it holds %d", path, a, v, want)
			}
		}
	}
}

func TestWriteJUnit(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mk := func(i int, inj bool, checker, symptom string) *record.Trial {
		tr := &record.Trial{ID: record.TrialID(1, i), Index: i, Start: start, End: start.Add(time.Second), Status: record.StatusFailed,
			Verdicts: []record.Verdict{{Checker: checker, Failed: true, Symptom: symptom, Evidence: []string{"a <b> & \"c\""}}}}
		if inj {
			tr.Injections = []record.Injection{{Node: "n1", SiteID: "wal.go:10", Kind: catalog.KindError, Error: "EIO",
				Stack: []record.Frame{{Func: "main.write", File: "wal.go", Line: 10}}}}
		}
		return tr
	}
	rep := New([]*record.Trial{mk(1, true, "hang", "client n2/0 made no progress for 5s"), mk(2, false, "crash", "n1 exited")}, Options{})
	rep.Findings[0].Replay = "gofault replay --db x.db 1-1"
	rep.FaultFree[0].Replay = "gofault replay --db x.db 1-2"
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, rep, Suite{Name: "gofault campaign 1", Timestamp: start, Duration: 90 * time.Second, Trials: 2}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasPrefix(out, xml.Header) {
		t.Errorf("no XML header:\n%s", out)
	}
	var root xmlNode
	dec := xml.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&root); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if cd, ok := tok.(xml.CharData); !ok || strings.TrimSpace(string(cd)) != "" {
			t.Errorf("content after the root element: %v %v", tok, err)
			break
		}
	}
	if root.XMLName.Local != "testsuites" {
		t.Fatalf("root %q, want testsuites", root.XMLName.Local)
	}
	checkShape(t, root, "testsuites")
	suite := root.Children[0]
	if v, _ := suite.attr("tests"); v != "3" {
		t.Errorf("tests=%s, want 3 (campaign, finding, fault-free failure)", v)
	}
	var msgs []string
	for _, c := range suite.Children {
		for _, o := range c.Children {
			if o.XMLName.Local == "failure" {
				m, _ := o.attr("message")
				msgs = append(msgs, m)
				if !strings.Contains(o.Text, "a <b> & \"c\"") || !strings.Contains(o.Text, "replay   gofault replay") {
					t.Errorf("failure text lacks the evidence or replay command:\n%s", o.Text)
				}
			}
		}
	}
	want := []string{"client n* made no progress for 5s — replay: gofault replay --db x.db 1-1", "n* exited — replay: gofault replay --db x.db 1-2"}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("failure messages\n%q\nwant\n%q", msgs, want)
	}
}
