package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
)

func init() {
	register(command{
		name:    "forget",
		summary: "make the next campaigns of a target's release line start without the memory of the earlier ones",
		run:     runForget,
	})
}

// runForget resets the memory across campaigns (config policy.memory) of
// the config's target and release line: the next campaign starts as the
// first did. The earlier campaigns stay in the store, with their trials.
func runForget(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("forget", os.Stderr)
	sf := addStoreFlags(fs)
	if err := fs.Parse(args); err != nil {
		return errors.Join(errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	cfg, err := config.Open(*sf.path, known(), sf.sets...)
	if err != nil {
		return fmt.Errorf("forget resets the memory of the config's target: %w", err)
	}
	st, err := sf.open()
	if err != nil {
		return err
	}
	defer st.Close()
	last, err := campaign.Forget(ctx, st, cfg)
	if err != nil {
		return err
	}
	what := cfg.Name
	if f := campaign.ReleaseFamily(cfg); f != "" {
		what += " " + f
	}
	fmt.Fprintf(stdout, "The next campaigns of %s start without the memory of campaigns up to %d (they stay in %s; gofault report --memory shows what is remembered).\n", what, last, st.Path())
	return nil
}
