package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/store"
)

// Replayer runs gofault replay's campaign.Replay (gotest.Replay for a
// gofault test trial), once, for the Replay button (Server.Replay): it
// locks the work dir with lock, builds (or reuses the build) and saves its
// trial as any replay does (a test trial's replay is not saved); its logs
// at level and above are part of the output shown.
func Replayer(st *store.Store, lock func(*config.Config) (func(), error), level slog.Level) func(ctx context.Context, trial string) (ReplayResult, error) {
	return func(ctx context.Context, trial string) (ReplayResult, error) {
		var text, all bytes.Buffer
		if gotest.IsTrial(ctx, st, trial) {
			r, err := gotest.Replay(ctx, st, trial, 1, &all)
			return testReplayShown(r, all.String()), err
		}
		r, err := campaign.Replay(ctx, st, campaign.ReplayOptions{
			Trial: trial, Lock: lock,
			Text: io.MultiWriter(&text, &all), Warn: &all,
			Logger: slog.New(slog.NewTextHandler(&all, &slog.HandlerOptions{Level: level})),
		})
		return replayShown(r, text.String(), all.String()), err
	}
}

// replayShown is what the Replay button shows of a replay r (nil when it
// failed) that printed text (ReplayOptions.Text) and, with its warnings
// and logs, all: the verdict (text's last line) and what ran (its first).
func replayShown(r *campaign.Replayed, text, all string) ReplayResult {
	res := ReplayResult{Output: all}
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
func testReplayShown(r *gotest.ReplayResult, all string) ReplayResult {
	res := ReplayResult{Output: all}
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
