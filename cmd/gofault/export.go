package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/finding"
	"github.com/gofault/gofault/gofaulttest"
)

func init() {
	register(command{name: "export", summary: "write a finding as a Go regression test for the target's repository (--go-test)", run: runExport})
}

// runExport is gofault export: it writes a finding as a regression test (finding.ExportGoTest).
func runExport(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("export", os.Stderr)
	sf := addStoreFlags(fs)
	goTest := fs.Bool("go-test", false, "write the finding as a _test.go that replays it through gofaulttest and fails while its checker fails again")
	o := finding.GoTestOptions{W: stdout}
	fs.StringVar(&o.Out, "o", "", "the `FILE` to write (default gofault_<finding>_test.go here; - for stdout)")
	fs.StringVar(&o.Package, "package", "", "the test's package clause (default: that of the Go tests in the file's directory)")
	fs.StringVar(&o.Config, "test-config", "gofault.yaml", "the gofault config's path from the test's directory, as the test names it")
	var sets config.Overrides
	fs.Var(&sets, "test-set", "a config override the test passes to gofaulttest.Set, e.g. cluster.env.SNAP_EVERY=1 (repeatable)")
	fs.IntVar(&o.Runs, "runs", gofaulttest.DefaultReplays, "how many times the test replays the finding; it fails if the finding recurs in any")
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return errors.Join(errUsage, err)
	}
	if !*goTest || len(rest) != 1 || o.Runs < 1 {
		return fmt.Errorf("%w: want --go-test, --runs of at least 1, and one finding ID, e.g. gofault export --go-test 2ee8b133dc (or 2ee8b133dc/2 for its second site)", errUsage)
	}
	st, err := sf.open()
	if err != nil {
		return err
	}
	defer st.Close()
	o.Sets = sets
	e, err := finding.ExportGoTest(ctx, st, rest[0], o)
	if err == nil && e.Path != "-" {
		fmt.Fprintf(stdout, "wrote %s: go test -run '^%s$' (replays the finding; fails while it recurs)\n", e.Path, e.Test)
	}
	return err
}
