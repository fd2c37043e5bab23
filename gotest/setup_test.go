package gotest

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// TestSetupEndToEnd runs testdata/setupserver, whose server starts in a
// goroutine of its own under the test file's helper startServer (which
// panics when the server is not ready, as nats-server's RunServer does),
// and whose Put drops its write's error (planted). Without a setup rule
// the start-up's write is a site TestPutGet's fault trials may strike (no
// stack of the start-up goroutine passes through the helper). With
// test.setup naming startServer it is not, no fault strikes it, and the
// planted bug is still found. The seed is fixed, so the trials' choices
// are too: the test does not depend on chance.
func TestSetupEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test binary")
	}
	const start, put = "example.com/setupserver.Start$1:os.WriteFile#0", "example.com/setupserver.(*Server).Put:os.WriteFile#0"
	run := func(setup []string, trials int) (*Summary, string) {
		dir := t.TempDir()
		sum, err := Run(context.Background(), Options{
			Module: "testdata/setupserver", Package: ".", WorkDir: dir, Setup: setup,
			Policy: "random", Seed: 1, Trials: trials, Kinds: []catalog.Kind{catalog.KindError},
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		return sum, dir
	}
	sites := func(sum *Summary) []string {
		for _, m := range sum.Selection.Chosen {
			if m.Test == "TestPutGet" {
				return m.Sites
			}
		}
		return nil
	}

	without, _ := run(nil, 1)
	if !slices.Contains(sites(without), start) {
		t.Fatalf("without a setup rule, TestPutGet's sites %v: want the start-up's write %s among them", sites(without), start)
	}

	sum, dir := run([]string{"start*"}, 8)
	if sum.SetupFuncs != 1 {
		t.Errorf("%d setup functions hooked, want 1 (startServer)", sum.SetupFuncs)
	}
	if got := sites(sum); slices.Contains(got, start) || !slices.Contains(got, put) {
		t.Fatalf("with test.setup [start*], TestPutGet's sites %v: want %s without %s", got, put, start)
	}
	_, fault := split(storedTrials(t, dir, sum.Campaign))
	planted := 0
	for _, tr := range fault {
		for _, inj := range tr.Injections {
			if strings.Contains(inj.SiteID, "Start") {
				t.Errorf("trial %s struck the server's start-up (%s) during setup", tr.ID, inj.SiteID)
			}
			if inj.SiteID == put && tr.Verdicts[0].Failed {
				planted++
			}
		}
		for _, v := range tr.Verdicts {
			if v.Failed && strings.Contains(strings.Join(v.Evidence, "\n"), "failed to be ready") {
				t.Errorf("trial %s: a finding of setup: %q %q", tr.ID, v.Symptom, v.Evidence)
			}
		}
	}
	if planted == 0 {
		t.Errorf("the planted bug (Put's dropped error) was not found in %d fault trials (findings %d)", len(fault), sum.Findings)
	}

	_, err := Run(context.Background(), Options{
		Module: "testdata/setupserver", Package: ".", WorkDir: t.TempDir(), Setup: []string{"startServr"},
		Policy: "random", Seed: 1, Trials: 1, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err == nil || !strings.Contains(err.Error(), "test.setup: no function or method") || !strings.Contains(err.Error(), "startServr") {
		t.Errorf("a pattern that matches nothing: error %v, want one naming test.setup and the pattern", err)
	}
}
