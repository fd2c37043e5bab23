package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// series is one line of a plot: y values over x (seconds since the start).
type series struct {
	Name, Class string
	X, Y        []float64
}

// frame is a plot's size and margins, in SVG user units. A plot's text
// is drawn at the stylesheet's size in these units, so a plot meant to be
// shown small has a small frame rather than a large one scaled down
// (which would shrink its labels out of reading).
type frame struct {
	W, H, PadL, PadB, PadT, PadR float64
	// LegendAbove puts the legend in one line above the plot instead of
	// in a column on its right.
	LegendAbove bool
}

var (
	// wide is the main plot of a page: legend on the right.
	wide = frame{W: 720, H: 220, PadL: 48, PadB: 28, PadT: 10, PadR: 190}
	// narrow is a plot shown three to a row: legend above.
	narrow = frame{W: 380, H: 210, PadL: 48, PadB: 28, PadT: 26, PadR: 14, LegendAbove: true}
)

// lineChart renders series as an inline SVG step chart with axes and a
// legend, x in seconds; yMax 0 scales to the data.
func lineChart(title string, ss []series, yMax float64, yFmt string) template.HTML {
	return chart(wide, title, ss, yMax, yFmt, fmtSeconds)
}

// chart is lineChart in frame f with x ticks formatted by xFmt.
func chart(f frame, title string, ss []series, yMax float64, yFmt string, xFmt func(float64) string) template.HTML {
	plotW, plotH, padL, padB, padT, padR := f.W, f.H, f.PadL, f.PadB, f.PadT, f.PadR
	xMax := 0.0
	for _, s := range ss {
		for i := range s.X {
			xMax = max(xMax, s.X[i])
			if yFmt != "%.0f%%" {
				yMax = max(yMax, s.Y[i])
			}
		}
	}
	xMax, yMax = max(xMax, 1), max(yMax, 1)
	if yFmt == "%.0f" { // counts: ticks at whole numbers
		yMax = math.Ceil(yMax/4) * 4
	}
	iw, ih := plotW-padL-padR, plotH-padT-padB
	px := func(x float64) float64 { return padL + x/xMax*iw }
	py := func(y float64) float64 { return padT + ih - y/yMax*ih }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" role="img" aria-label="%s" viewBox="0 0 %g %g" xmlns="http://www.w3.org/2000/svg">`, template.HTMLEscapeString(title), plotW, plotH)
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<rect class="frame" x="%g" y="%g" width="%g" height="%g"/>`, padL, padT, iw, ih)
	for i := 0; i <= 4; i++ {
		y := yMax * float64(i) / 4
		fmt.Fprintf(&b, `<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/><text class="tick" x="%g" y="%.1f" text-anchor="end">%s</text>`,
			padL, padL+iw, py(y), py(y), padL-4, py(y)+4, fmt.Sprintf(yFmt, y))
		x := xMax * float64(i) / 4
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%g" text-anchor="middle">%s</text>`, px(x), padT+ih+16, xFmt(x))
	}
	for i, s := range ss {
		if len(s.X) == 0 {
			continue
		}
		var pts []string
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(0), py(0)))
		prev := 0.0
		for j := range s.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", px(s.X[j]), py(prev), px(s.X[j]), py(s.Y[j])))
			prev = s.Y[j]
		}
		if s.Class == "" {
			s.Class = palette[i%len(palette)]
		}
		fmt.Fprintf(&b, `<polyline class="line %s" points="%s"><title>%s</title></polyline>`, s.Class, strings.Join(pts, " "), template.HTMLEscapeString(s.Name))
		lx, ly := plotW-padR+8, padT+14+float64(i)*18
		if f.LegendAbove {
			lx, ly = padL+float64(i)*160, 16
		}
		last := s.Y[len(s.Y)-1]
		fmt.Fprintf(&b, `<line class="line %s" x1="%g" x2="%g" y1="%g" y2="%g"/><text class="legend" x="%g" y="%g">%s (%s)</text>`,
			s.Class, lx, lx+16, ly-4, ly-4, lx+20, ly, template.HTMLEscapeString(s.Name), fmt.Sprintf(yFmt, last))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// palette are the classes of series that name none, in order.
var palette = []string{"rate", "failed", "ok", "states", "error", "nofault", "notjudged"}

func fmtSeconds(s float64) string {
	switch {
	case s >= 3600:
		return fmt.Sprintf("%.1fh", s/3600)
	case s >= 120:
		return fmt.Sprintf("%.0fm", s/60)
	case s < 10 && s != math.Trunc(s):
		// A short campaign (gofault test's trials last milliseconds):
		// whole seconds would label its ticks 0s, 0s, 0s, 1s.
		return fmt.Sprintf("%.2gs", s)
	}
	return fmt.Sprintf("%.0fs", s)
}

// TrialsPlot is the campaign's trials over time: cumulative counts of
// passing, failing, could-not-run and not-judged trials and of fault
// trials in which nothing was injected, by when each trial ended.
func (c *Campaign) TrialsPlot() template.HTML {
	ts := byEnd(c.Trials)
	ok := series{Name: "ok", Class: "ok"}
	failed := series{Name: "failed", Class: "failed"}
	errs := series{Name: "could not run", Class: "error"}
	none := series{Name: "no fault injected", Class: "nofault"}
	unjudged := series{Name: "not judged", Class: "notjudged"}
	var nOK, nFailed, nErr, nNone, nUnjudged float64
	start := firstStart(ts)
	for _, t := range ts {
		x := t.End.Sub(start).Seconds()
		switch t.Status {
		case record.StatusOK:
			nOK++
			ok.X, ok.Y = append(ok.X, x), append(ok.Y, nOK)
		case record.StatusFailed:
			nFailed++
			failed.X, failed.Y = append(failed.X, x), append(failed.Y, nFailed)
		case record.StatusError:
			nErr++
			errs.X, errs.Y = append(errs.X, x), append(errs.Y, nErr)
		case record.StatusNotJudged:
			nUnjudged++
			unjudged.X, unjudged.Y = append(unjudged.X, x), append(unjudged.Y, nUnjudged)
		}
		if len(t.Injections) == 0 && t.Policy != record.BaselinePolicy {
			nNone++
			none.X, none.Y = append(none.X, x), append(none.Y, nNone)
		}
	}
	return lineChart("trials over time", []series{ok, failed, errs, unjudged, none}, 0, "%.0f")
}

// RatePlot is the injection rate (fault trials that injected anything,
// over fault trials so far) and the abstract states entered so far, over
// time.
func (c *Campaign) RatePlot() template.HTML {
	ts := byEnd(c.Trials)
	rate := series{Name: "injection rate", Class: "rate"}
	var fault, injected float64
	start := firstStart(ts)
	for _, t := range ts {
		if t.Policy == record.BaselinePolicy {
			continue
		}
		fault++
		if len(t.Injections) > 0 {
			injected++
		}
		rate.X, rate.Y = append(rate.X, t.End.Sub(start).Seconds()), append(rate.Y, 100*injected/fault)
	}
	return chart(narrow, "injection rate over time", []series{rate}, 100, "%.0f%%", fmtSeconds)
}

// StatesPlot is the number of distinct abstract states entered so far,
// over time.
func (c *Campaign) StatesPlot() template.HTML {
	ts := byEnd(c.Trials)
	st := series{Name: "abstract states entered", Class: "states"}
	seen := map[[2]uint32]bool{}
	start := firstStart(ts)
	for _, t := range ts {
		for _, s := range t.States {
			seen[[2]uint32{s.Task, s.State}] = true
		}
		st.X, st.Y = append(st.X, t.End.Sub(start).Seconds()), append(st.Y, float64(len(seen)))
	}
	return chart(narrow, "abstract states entered over time", []series{st}, 0, "%.0f", fmtSeconds)
}

// CoveragePlot is the number of coverage blocks the campaign's trials
// covered so far (the running sum of their new blocks), over time; empty
// when no trial covered any block (a build without coverage counters).
func (c *Campaign) CoveragePlot() template.HTML {
	ts := byEnd(c.Trials)
	cov := series{Name: "blocks covered", Class: "coverage"}
	var covered float64
	any := false
	start := firstStart(ts)
	for _, t := range ts {
		any = any || t.Blocks > 0
		covered += float64(t.NewBlocks)
		cov.X, cov.Y = append(cov.X, t.End.Sub(start).Seconds()), append(cov.Y, covered)
	}
	if !any {
		return ""
	}
	return chart(narrow, "coverage (basic blocks) over time", []series{cov}, 0, "%.0f", fmtSeconds)
}

func byEnd(trials []*record.Trial) []*record.Trial {
	ts := append([]*record.Trial(nil), trials...)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].End.Before(ts[j].End) })
	return ts
}

func firstStart(ts []*record.Trial) time.Time {
	var s time.Time
	for _, t := range ts {
		if s.IsZero() || t.Start.Before(s) {
			s = t.Start
		}
	}
	return s
}

// Event is one thing on a trial's timeline, on the lane of a node: a bar
// when Dur > 0 (a delay, a partition), else a mark. Kind is free text: the
// kinds the stylesheet knows get their colour (Known), any other — a kind
// added later, such as a step of a fault sequence or a coverage mark — is
// drawn and listed generically with its Label.
type Event struct {
	At, Dur time.Duration // since the trial's start
	Lane    string        // node name, or "workload"
	Kind    string
	Label   string
}

// Known are the event kinds with a style of their own.
var Known = map[string]bool{
	"error": true, "delay": true, "crash": true, "partition": true, "restart": true,
	"exit": true, "role": true, "progress": true, "client-error": true, "violation": true, "verdict": true,
}

// Class is the CSS class of the event's kind: "ev-<kind>", or
// "ev-other" for a kind without a style of its own.
func (e Event) Class() string {
	if Known[e.Kind] {
		return "ev-" + e.Kind
	}
	return "ev-other"
}

// Timeline lists the events of trial t: every injected fault (any kind),
// node exits and restarts, role changes, client progress, errors and
// violations, in time order.
func Timeline(t *record.Trial) []Event {
	var evs []Event
	at := func(x time.Time) time.Duration {
		if x.IsZero() {
			return 0
		}
		return max(0, x.Sub(t.Start))
	}
	var members []string
	for _, n := range t.Nodes {
		members = append(members, n.Name)
	}
	for _, in := range t.Injections {
		e := Event{At: at(in.Time), Lane: in.Node, Kind: in.Kind.String(), Label: in.SiteID}
		if in.Error != "" {
			e.Label += " " + in.Error
		}
		if in.Delay > 0 && (in.Kind == catalog.KindDelay || in.Kind.Cuts()) {
			e.Dur = in.Delay
			e.Label += " " + in.Delay.String()
		}
		e.Label += in.CutPeers(members)
		if in.Role != "" {
			e.Label += " (" + in.Role + ")"
		}
		evs = append(evs, e)
	}
	for _, n := range t.Nodes {
		if n.Exited || n.Killed {
			label := fmt.Sprintf("exit code %d %s", n.ExitCode, n.Signal)
			if n.Killed {
				label = "killed by gofault"
			}
			evs = append(evs, Event{At: at(n.ExitTime), Lane: n.Name, Kind: "exit", Label: strings.TrimSpace(label)})
		}
		if n.Restarts > 0 {
			// The record keeps no restart times: the mark sits on the
			// node's first crash fault, which the restart followed.
			label := fmt.Sprintf("%d restart(s) after the crash", n.Restarts)
			if n.RestartErr != "" {
				label += ": " + n.RestartErr
			}
			when := n.ExitTime
			for _, in := range t.Injections {
				if in.Node == n.Name && in.Kind.Kills() {
					when = in.Time
					break
				}
			}
			evs = append(evs, Event{At: at(when), Lane: n.Name, Kind: "restart", Label: label})
		}
	}
	for _, r := range t.Roles {
		evs = append(evs, Event{At: at(r.Time), Lane: r.Node, Kind: "role", Label: r.Role})
	}
	for _, e := range t.Client {
		lane := e.Node
		if lane == "" {
			lane = e.Client
		}
		switch {
		case e.Kind == record.EvProgress || e.Kind == record.EvOp && e.Op != nil && !e.Op.Unknown:
			evs = append(evs, Event{At: at(e.Time), Lane: lane, Kind: "progress"})
		case e.Kind == record.EvError:
			evs = append(evs, Event{At: at(e.Time), Lane: lane, Kind: "client-error", Label: e.Client + ": " + e.Msg})
		case e.Kind == record.EvViolation:
			evs = append(evs, Event{At: at(e.Time), Lane: lane, Kind: "violation", Label: e.Checker + ": " + e.Msg})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At < evs[j].At })
	return evs
}

// timeline sizes, in SVG user units.
const (
	tlW, tlLane, tlPadL = 900.0, 26.0, 90.0
	// tlBuckets bounds the marks drawn per lane and kind: one per column.
	tlBuckets = 300
)

// TimelineSVG draws events on one lane per node over span: bars for
// events with a duration, ticks for marks, at most one tick per column,
// lane and kind (progress is thousands of events), each with its label as
// a tooltip.
func TimelineSVG(evs []Event, span time.Duration) template.HTML {
	var lanes []string
	seen := map[string]bool{}
	for _, e := range evs {
		span = max(span, e.At+e.Dur)
		if !seen[e.Lane] {
			seen[e.Lane] = true
			lanes = append(lanes, e.Lane)
		}
	}
	sort.Strings(lanes)
	// A floor for an empty trial; a test trial lasts milliseconds, and
	// a floor of a second drew all its events at the left edge.
	span = max(span, time.Millisecond)
	h := float64(len(lanes))*tlLane + 24
	iw := tlW - tlPadL - 10
	px := func(d time.Duration) float64 { return tlPadL + float64(d)/float64(span)*iw }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" role="img" aria-label="trial timeline" viewBox="0 0 %g %g" xmlns="http://www.w3.org/2000/svg">`, tlW, h)
	laneY := map[string]float64{}
	for i, l := range lanes {
		y := float64(i) * tlLane
		laneY[l] = y
		fmt.Fprintf(&b, `<rect class="lane" x="%g" y="%g" width="%g" height="%g"/><text class="lanename" x="4" y="%g">%s</text>`,
			tlPadL, y+2, iw, tlLane-4, y+17, template.HTMLEscapeString(l))
	}
	drawn := map[string]bool{}
	for _, e := range evs {
		y := laneY[e.Lane]
		x := px(e.At)
		title := template.HTMLEscapeString(fmt.Sprintf("%s %s %s", tlTime(e.At, span), e.Kind, e.Label))
		if e.Dur > 0 {
			fmt.Fprintf(&b, `<rect class="ev %s" x="%.1f" y="%g" width="%.1f" height="%g"><title>%s</title></rect>`,
				e.Class(), x, y+5, max(2, px(e.At+e.Dur)-x), tlLane-10, title)
			continue
		}
		col := int(float64(e.At) / float64(span) * tlBuckets)
		key := fmt.Sprintf("%s\x00%s\x00%d", e.Lane, e.Kind, col)
		if drawn[key] {
			continue
		}
		drawn[key] = true
		y1, y2 := y+4, y+tlLane-6
		if e.Kind == "progress" {
			y1 = y + tlLane/2
		}
		fmt.Fprintf(&b, `<line class="ev %s" x1="%.1f" x2="%.1f" y1="%g" y2="%g"><title>%s</title></line>`, e.Class(), x, x, y1, y2, title)
	}
	axisY := float64(len(lanes))*tlLane + 16
	for i := 0; i <= 5; i++ {
		d := span * time.Duration(i) / 5
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%g" text-anchor="middle">%s</text>`, px(d), axisY, tlTime(d, span))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// tlTime labels time d of a timeline span long: in seconds, or in
// milliseconds when the span is under a second.
func tlTime(d, span time.Duration) string {
	if span < time.Second {
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3gs", d.Seconds())
}
