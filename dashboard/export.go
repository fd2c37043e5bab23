package dashboard

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// WriteHTML writes campaign id's pages into dir (report --html) and says
// so on stdout.
func WriteHTML(ctx context.Context, st *store.Store, id int64, dir string, stdout io.Writer) error {
	c, err := Load(ctx, st, id)
	if err != nil {
		return err
	}
	if err := WriteStatic(dir, c); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s/index.html (campaign %d: %d trials, %d findings)\n", dir, id, len(c.Trials), len(c.Report.Findings))
	return nil
}

// WriteJUnit writes rep of campaign id, made of trials, as a JUnit XML
// file at path (report --junit).
func WriteJUnit(ctx context.Context, st *store.Store, id int64, rep report.Report, trials []*record.Trial, path string) error {
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
