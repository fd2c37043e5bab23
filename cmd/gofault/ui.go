package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/dashboard"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

func init() {
	register(command{
		name:    "ui",
		summary: "serve a dashboard of the campaigns in a database (live while a campaign runs)",
		run:     runUI,
	})
}

func runUI(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("ui", os.Stderr)
	sf := addStoreFlags(fs)
	addr := fs.String("addr", "127.0.0.1:8750", "address to listen on (loopback by default; port 0 picks a free one)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := sf.open()
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("%w: --addr %s: %v", errUsage, *addr, err)
	}
	srv := &http.Server{
		Handler:           (&dashboard.Server{Store: st, Replay: replayer(st)}).Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	fmt.Fprintf(stdout, "gofault ui: serving %s on http://%s/latest (Ctrl-C stops)\n", st.Path(), ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		return ctx.Err()
	}
}

// replayer runs gofault replay's campaign.Replay (gotest.Replay for a
// gofault test trial), once, for the dashboard's Replay button: it locks
// the work dir, builds (or reuses the build) and saves its trial as any
// replay does (a test trial's replay is not saved).
func replayer(st *store.Store) func(ctx context.Context, trial string) (dashboard.ReplayResult, error) {
	return func(ctx context.Context, trial string) (dashboard.ReplayResult, error) {
		var text, all bytes.Buffer
		if gotest.IsTrial(ctx, st, trial) {
			r, err := gotest.Replay(ctx, st, trial, 1, &all)
			return testReplayShown(r, all.String()), err
		}
		r, err := campaign.Replay(ctx, st, campaign.ReplayOptions{
			Trial: trial, Lock: lockWork,
			Text: io.MultiWriter(&text, &all), Warn: &all,
			Logger: slog.New(slog.NewTextHandler(&all, &slog.HandlerOptions{Level: logLevel()})),
		})
		return replayShown(r, text.String(), all.String()), err
	}
}

// replayShown is what the Replay button shows of a replay r (nil when it
// failed) that printed text (ReplayOptions.Text) and, with its warnings
// and logs, all: the verdict (text's last line) and what ran (its first).
func replayShown(r *campaign.Replayed, text, all string) dashboard.ReplayResult {
	res := dashboard.ReplayResult{Output: all}
	if text = strings.TrimSpace(text); text != "" {
		lines := strings.Split(text, "\n")
		res.Summary = lines[len(lines)-1] + ": " + lines[0]
	}
	if r != nil && len(r.Results) > 0 {
		res.Reproduced = r.Results[0].Reproduced
	}
	return res
}

// testReplayShown is what the Replay button shows of a gofault test
// trial's replay r (nil when it failed before running the test) that
// printed all: how often the test failed again, and whether the rebuilt
// test binary lacks sites the trial's faults struck (then a replay that
// passed says little).
func testReplayShown(r *gotest.ReplayResult, all string) dashboard.ReplayResult {
	res := dashboard.ReplayResult{Output: all}
	if r == nil {
		return res
	}
	res.Trial = r.Trial
	res.Reproduced = len(r.Outcomes) > 0 && r.Recurred == len(r.Outcomes)
	if r.Recurred > 0 {
		res.Summary = fmt.Sprintf("%s failed again in %d of %d runs", r.Test, r.Recurred, len(r.Outcomes))
	} else {
		res.Summary = fmt.Sprintf("%s did not fail again: passed in %d of %d runs", r.Test, len(r.Outcomes), len(r.Outcomes))
	}
	if r.Missing > 0 {
		res.Summary += fmt.Sprintf("; %d of its injections name sites the rebuilt test binary no longer has (the source changed)", r.Missing)
	}
	return res
}

// writeHTML writes campaign id's pages into dir (report --html).
func writeHTML(ctx context.Context, st *store.Store, id int64, dir string, stdout io.Writer) error {
	c, err := dashboard.Load(ctx, st, id)
	if err != nil {
		return err
	}
	if err := dashboard.WriteStatic(dir, c); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s/index.html (campaign %d: %d trials, %d findings)\n", dir, id, len(c.Trials), len(c.Report.Findings))
	return nil
}

// writeJUnit writes rep of campaign id as a JUnit XML file (report --junit).
func writeJUnit(ctx context.Context, st *store.Store, id int64, rep report.Report, trials []*record.Trial, path string) error {
	s := report.Suite{Name: "gofault", Trials: len(trials)}
	if c, err := st.Campaign(ctx, id); err == nil {
		s.Name = fmt.Sprintf("gofault campaign %d (%s, policy %s)", c.ID, c.Name, c.Policy)
		s.Timestamp = c.Created
	}
	var first, last time.Time
	for _, t := range trials {
		if first.IsZero() || t.Start.Before(first) {
			first = t.Start
		}
		if t.End.After(last) {
			last = t.End
		}
	}
	if !first.IsZero() {
		s.Duration = last.Sub(first)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := report.WriteJUnit(f, rep, s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
