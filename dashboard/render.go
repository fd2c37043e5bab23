package dashboard

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

//go:embed assets
var assets embed.FS

var (
	css   = mustRead("assets/style.css")
	js    = mustRead("assets/app.js")
	pages = template.Must(template.New("").Funcs(template.FuncMap{
		"pct":       func(f float64) float64 { return 100 * f },
		"inc":       func(i int) int { return i + 1 },
		"join":      strings.Join,
		"nodeRole":  record.NodeRole,
		"firstLine": func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l },
		"seconds":   func(t *record.Trial) float64 { return t.End.Sub(t.Start).Seconds() },
		"offset":    func(t *record.Trial, at time.Time) string { return tlTime(at.Sub(t.Start), t.End.Sub(t.Start)) },
		"list":      func(v ...any) []any { return v },
		"faultLine": faultLine,
		"dismissed": dismissed,
		"frames":    Frames,
		"callers":   record.CallerStack,
		// processNode: node is the process of test trial t (no member
		// rule names it a member).
		"processNode": func(t *record.Trial, node string) bool {
			return t.Test() != "" && len(t.Nodes) == 1 && t.Nodes[0].Name == node
		},
		"kinds": func(t *record.Trial) string {
			if len(t.Injections) == 0 {
				return "none"
			}
			var ks []string
			for _, in := range t.Injections {
				ks = append(ks, in.Kind.String())
			}
			return strings.Join(ks, " ")
		},
		"sites": func(t *record.Trial) string {
			var ss []string
			for _, in := range t.Injections {
				ss = append(ss, in.SiteID)
			}
			return strings.Join(ss, " ")
		},
	}).ParseFS(assets, "assets/pages.html"))
)

func mustRead(name string) string {
	data, err := assets.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// faultLine describes a report's fault in one line.
func faultLine(f report.Fault) string {
	if f.Kind == "none" {
		return "no fault"
	}
	s := f.Kind
	k, kerr := catalog.ParseKind(f.Kind)
	if f.Error != "" && record.ShapeDetail(k, f.Error) == "" { // else Shape says it
		s += " " + f.Error
	}
	if f.Delay != "" {
		s += " " + f.Delay
	}
	s += " at " + f.Site + " on " + record.NodeRole(f.Node, f.Role)
	if kerr == nil {
		s += record.Injection{Kind: k, Node: f.Node, Peer: f.Peer, Side: f.Side}.CutPeers(nil)
		s += record.Shape(k, f.Site, f.Error)
	}
	return s
}

// maxEvents bounds the event table of a trial.
const maxEvents = 300

// page is what one template renders.
type page struct {
	Title string
	// Live is set on pages that gofault ui serves (the Replay button);
	// Stream is the URL of the server-sent events that reload a live page,
	// Version what they compare with.
	Live            bool
	Stream, Version string
	// Index is the link to the list of campaigns (live only).
	Index string
	CSS   template.CSS
	JS    template.JS

	C    *Campaign
	F    *report.Finding
	What string
	T    *record.Trial

	// Cmp is the compare page's comparison.
	Cmp *Comparison

	// Benches is the bench list; Bench a bench's results (live).
	Benches []BenchInfo
	Bench   *BenchView

	// The campaigns list (live).
	DB        string
	Campaigns []*store.Campaign
	Ran       map[int64]int

	// A trial's timeline, events and logs.
	TimelineSVG template.HTML
	Events      []Event
	EventsCut   int
	Legend      []Event
	Logs        []LogExcerpt
	Artifacts   []Artifact

	// pages says which trials have a page; nil: all do.
	pages map[string]bool
}

// HasPage reports whether trial id has a page to link to.
func (p *page) HasPage(id string) bool { return p.pages == nil || p.pages[id] }

func newPage(c *Campaign, title string) *page {
	return &page{Title: title, C: c, CSS: template.CSS(css), JS: template.JS(js)}
}

// withTrial adds trial t's timeline, events and logs to p.
func (p *page) withTrial(t *record.Trial) *page {
	if t == nil {
		return p
	}
	p.T = t
	evs := Timeline(t)
	p.TimelineSVG = TimelineSVG(evs, t.End.Sub(t.Start))
	kinds := map[string]Event{}
	for _, e := range evs {
		if _, ok := kinds[e.Kind]; !ok {
			kinds[e.Kind] = e
		}
		if e.Kind == "progress" {
			continue
		}
		if len(p.Events) < maxEvents {
			p.Events = append(p.Events, e)
		}
		p.EventsCut++
	}
	if p.EventsCut <= maxEvents {
		p.EventsCut = 0
	}
	for _, e := range kinds {
		p.Legend = append(p.Legend, e)
	}
	sort.Slice(p.Legend, func(i, j int) bool { return p.Legend[i].Kind < p.Legend[j].Kind })
	p.Logs = Logs(t)
	p.Artifacts = Artifacts(t)
	return p
}

// Page names, relative to a campaign's directory.
const (
	campaignPage = "index.html"
	trialsPage   = "trials.html"
)

func findingPage(id string) string { return "finding-" + id + ".html" }
func trialPage(id string) string   { return "trial-" + id + ".html" }

// renderCampaign, renderTrials, renderFinding and renderTrial write one
// page of c.
func renderCampaign(w io.Writer, p *page) error {
	return pages.ExecuteTemplate(w, "campaign", p)
}

func renderTrials(w io.Writer, p *page) error {
	p.Title = fmt.Sprintf("trials of campaign %d", p.C.ID)
	return pages.ExecuteTemplate(w, "trials", p)
}

// renderFinding writes the page of finding id; false when there is none.
func renderFinding(w io.Writer, p *page, id string) (bool, error) {
	f, what := p.C.Finding(id)
	if f == nil {
		return false, nil
	}
	p.F, p.What, p.Title = f, what, what+" "+id
	p.withTrial(p.C.Trial(f.Trials[0]))
	return true, pages.ExecuteTemplate(w, "finding", p)
}

// renderTrial writes the page of trial id; false when there is none.
func renderTrial(w io.Writer, p *page, id string) (bool, error) {
	t := p.C.Trial(id)
	if t == nil {
		return false, nil
	}
	p.Title = "trial " + id
	p.withTrial(t)
	return true, pages.ExecuteTemplate(w, "trial", p)
}

// WriteStatic writes the pages of c into dir, a self-contained directory
// that opens without a server (styles, script and plots are inline):
// index.html (the campaign), trials.html, one page per finding, and one
// per trial that failed, could not run, or is a finding's.
func WriteStatic(dir string, c *Campaign) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	has := map[string]bool{}
	for _, t := range c.Trials {
		if t.Status != record.StatusOK {
			has[t.ID] = true
		}
	}
	var findings []string
	for _, fs := range [][]report.Finding{c.Report.Findings, c.Report.FaultFree, c.Report.Generic} {
		for _, f := range fs {
			findings = append(findings, f.ID)
			for _, s := range f.Sites {
				has[s.Trials[0]] = true
			}
		}
	}
	write := func(name string, render func(io.Writer, *page) error) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		p := newPage(c, fmt.Sprintf("campaign %d", c.ID))
		p.pages = has
		if err := render(f, p); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		return f.Close()
	}
	if err := write(campaignPage, renderCampaign); err != nil {
		return err
	}
	if err := write(trialsPage, renderTrials); err != nil {
		return err
	}
	for _, id := range findings {
		if err := write(findingPage(id), func(w io.Writer, p *page) error { _, err := renderFinding(w, p, id); return err }); err != nil {
			return err
		}
	}
	for id := range has {
		if err := write(trialPage(id), func(w io.Writer, p *page) error { _, err := renderTrial(w, p, id); return err }); err != nil {
			return err
		}
		for _, a := range Artifacts(c.Trial(id)) {
			data, err := os.ReadFile(a.Path)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, a.Name), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
