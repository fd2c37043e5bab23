// Package dashboard renders a campaign's store as web pages: the campaign
// (counts, trials over time, findings), the trial list with filters, each
// finding (fault, site, node, role, state, stack, symptom, evidence, the
// trial's timeline and log excerpts) and each trial. The same templates
// serve `gofault ui` live from the store (Server) and write `gofault report
// --html` as a self-contained directory (WriteStatic); pages link to each
// other by relative names, so both work the same.
package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// Campaign is everything the pages of one campaign show.
type Campaign struct {
	*store.Campaign
	DB     string
	Trials []*record.Trial
	Report report.Report
	Counts Counts
	// Kinds, Sites and Policies are the values the trial list filters on.
	Kinds, Sites, Policies []string
	// Paused: no new trial begins until the campaign is resumed
	// (store.SetPaused).
	Paused bool
	// Tests are the Go tests of a `gofault test` campaign, each with its
	// runs; none for a campaign of `gofault run`.
	Tests []TestRow
}

// IsTest reports whether c is a `gofault test` campaign: its trials ran
// Go tests, one a trial, in one process.
func (c *Campaign) IsTest() bool { return len(c.Tests) > 0 }

// ShowStates reports whether the campaign page shows the abstract states
// entered: always for a cluster campaign, for a test campaign when its
// test processes entered any (a package without state tasks has none, and
// a card and plot of zeros say nothing there).
func (c *Campaign) ShowStates() bool { return !c.IsTest() || c.Counts.StatesEntered > 0 }

// Counts are a campaign's trial counts, as the campaign page shows them.
type Counts struct {
	Trials, Baseline, OK, Failed, Error, NoFault, Injected int
	// NotJudged counts the trials their workload could not judge
	// (record.StatusNotJudged); NotJudgedWarning is set when they are
	// most of the campaign's trials (report.NotJudgedWarning).
	NotJudged                    int
	NotJudgedWarning             string
	InjectionRate                float64
	Findings, FaultFree, Generic int
	StatesEntered                int
	Seconds                      float64
}

// Load reads campaign id of st and builds its report as `gofault report`
// does: the campaign's report options, the re-runs of fault-free failures,
// and a replay command per finding and site.
func Load(ctx context.Context, st *store.Store, id int64) (*Campaign, error) {
	c, err := st.Campaign(ctx, id)
	if err != nil {
		return nil, err
	}
	trials, err := st.Trials(ctx, id)
	if err != nil {
		return nil, err
	}
	var opts report.Options
	var cfg config.Config
	if json.Unmarshal([]byte(c.Config), &cfg) == nil {
		opts.GenericSites = cfg.Checkers.GenericSites
	}
	rep := report.New(trials, opts)
	reruns, err := st.Reruns(ctx, id)
	if err != nil {
		return nil, err
	}
	rep.Annotate(st.Path(), reruns)
	v := &Campaign{Campaign: c, DB: st.Path(), Trials: trials, Report: rep}
	if v.Paused, err = st.Paused(ctx, id); err != nil {
		return nil, err
	}
	v.Counts = count(trials, rep)
	v.Tests = testRows(trials, rep)
	kinds, sites, pols := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, t := range trials {
		pols[t.Policy] = true
		for _, in := range t.Injections {
			kinds[in.Kind.String()] = true
			sites[in.SiteID] = true
		}
	}
	v.Kinds, v.Sites, v.Policies = keys(kinds), keys(sites), keys(pols)
	return v, nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// count sums a campaign's trials as the campaign page shows them.
func count(trials []*record.Trial, rep report.Report) Counts {
	var c Counts
	entered := map[[2]uint32]bool{}
	for _, t := range trials {
		for _, s := range t.States {
			entered[[2]uint32{s.Task, s.State}] = true
		}
		if t.Policy == record.BaselinePolicy {
			c.Baseline++
		} else {
			c.Trials++
			if len(t.Injections) > 0 {
				c.Injected++
			} else {
				c.NoFault++
			}
		}
		switch t.Status {
		case record.StatusOK:
			c.OK++
		case record.StatusFailed:
			c.Failed++
		case record.StatusError:
			c.Error++
		case record.StatusNotJudged:
			c.NotJudged++
		}
		c.Seconds += t.End.Sub(t.Start).Seconds()
	}
	if c.Trials > 0 {
		c.InjectionRate = float64(c.Injected) / float64(c.Trials)
	}
	c.Findings, c.FaultFree, c.Generic = len(rep.Findings), len(rep.FaultFree), len(rep.Generic)
	c.StatesEntered = len(entered)
	c.NotJudgedWarning = report.NotJudgedWarning(c.NotJudged, c.Trials+c.Baseline)
	return c
}

// Finding returns the finding (of any list) with the given ID, and which
// list it is in: "finding", "fault-free failure" or "generic consequence".
func (c *Campaign) Finding(id string) (*report.Finding, string) {
	for _, l := range []struct {
		what string
		fs   []report.Finding
	}{{"finding", c.Report.Findings}, {"fault-free failure", c.Report.FaultFree}, {"generic consequence", c.Report.Generic}} {
		for i := range l.fs {
			if l.fs[i].ID == id {
				return &l.fs[i], l.what
			}
		}
	}
	return nil, ""
}

// Trial returns the campaign's trial with the given ID, or nil.
func (c *Campaign) Trial(id string) *record.Trial {
	for _, t := range c.Trials {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// LogExcerpt is the end of one node's log, the lines that matter marked.
type LogExcerpt struct {
	Node, Path string
	Err        string // why the log cannot be shown
	Lines      []LogLine
	Skipped    int // lines before the excerpt
}

// LogLine is one line of a log excerpt; Hot marks a warning or worse, or a
// line that a verdict's evidence quotes.
type LogLine struct {
	N    int
	Text string
	Hot  bool
}

// logLines is how many of its last lines a node's log excerpt shows.
const logLines = 60

// hotWords mark the log lines worth a look.
var hotWords = []string{"=== gofault", "panic", "fatal", "error", "warn", "fail", "timeout", "timed out", "diverge"}

// Logs returns the end of each node's log of t, its warnings, errors and
// lines quoted by failing verdicts marked.
func Logs(t *record.Trial) []LogExcerpt {
	var quoted []string
	for _, v := range t.Verdicts {
		if v.Failed {
			for _, e := range v.Evidence {
				if len(e) > 12 {
					quoted = append(quoted, e)
				}
			}
		}
	}
	var out []LogExcerpt
	for _, n := range t.Nodes {
		x := LogExcerpt{Node: n.Name, Path: n.Log}
		data, err := os.ReadFile(n.Log)
		if err != nil {
			x.Err = "log not available (trial dirs of passing trials are removed): " + err.Error()
			out = append(out, x)
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		x.Skipped = max(0, len(lines)-logLines)
		for i, l := range lines[x.Skipped:] {
			low := strings.ToLower(l)
			hot := false
			for _, w := range hotWords {
				hot = hot || strings.Contains(low, w)
			}
			for _, q := range quoted {
				hot = hot || strings.Contains(q, strings.TrimSpace(l)) && strings.TrimSpace(l) != ""
			}
			x.Lines = append(x.Lines, LogLine{N: x.Skipped + i + 1, Text: l, Hot: hot})
		}
		out = append(out, x)
	}
	return out
}

// Dismissal is one group of log lines a checker of a trial dismissed by
// a named rule (record.Dismissal), with the checker.
type Dismissal struct {
	Checker string
	record.Dismissal
}

// dismissed lists the lines the verdicts of t dismissed, checker by
// checker, for the trial page.
func dismissed(t *record.Trial) []Dismissal {
	var out []Dismissal
	for _, v := range t.Verdicts {
		for _, d := range v.Dismissed {
			out = append(out, Dismissal{Checker: v.Checker, Dismissal: d})
		}
	}
	return out
}

// Artifact is a file a checker wrote for a trial — the linearizability
// checker's visualisation, named in its evidence as "visualization: PATH" —
// that the trial's pages link to as Name (a page-relative file name).
type Artifact struct {
	Path, Name, Title string
}

// Artifacts lists the files the checkers wrote for trial t that still
// exist.
func Artifacts(t *record.Trial) []Artifact {
	var out []Artifact
	for _, v := range t.Verdicts {
		for _, e := range v.Evidence {
			p, ok := strings.CutPrefix(e, "visualization: ")
			if !ok {
				continue
			}
			if _, err := os.Stat(p); err != nil {
				continue
			}
			base := filepath.Base(p)
			out = append(out, Artifact{Path: p, Name: "artifact-" + t.ID + "-" + base, Title: v.Checker + " visualisation: " + strings.TrimSuffix(base, filepath.Ext(base))})
		}
	}
	return out
}

// Frame is one frame of a fault's stack with the source lines around it,
// read when the page is made (none when the file is gone).
type Frame struct {
	Text   string // "func file:line", as reports print it
	Source []LogLine
}

// sourceContext is how many lines either side of a frame's line its
// excerpt shows.
const sourceContext = 4

// Frames reads the source around each frame of a rendered stack.
func Frames(stack []string) []Frame {
	out := make([]Frame, 0, len(stack))
	for _, s := range stack {
		f := Frame{Text: s}
		if i := strings.LastIndexByte(s, ' '); i >= 0 {
			loc := s[i+1:]
			if j := strings.LastIndexByte(loc, ':'); j > 0 {
				var line int
				if _, err := fmt.Sscanf(loc[j+1:], "%d", &line); err == nil {
					f.Source = excerpt(loc[:j], line)
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// excerpt returns the lines of file around line, that line marked.
func excerpt(file string, line int) []LogLine {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return nil
	}
	var out []LogLine
	for n := max(1, line-sourceContext); n <= min(len(lines), line+sourceContext); n++ {
		out = append(out, LogLine{N: n, Text: lines[n-1], Hot: n == line})
	}
	return out
}
