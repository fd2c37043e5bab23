package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/gofault/gofault/internal/version"
)

func init() {
	register(command{
		name:    "version",
		summary: "print gofault's version: module version, VCS revision, Go version, agent wire version",
		run:     runVersion,
	})
}

func runVersion(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("version", os.Stderr)
	asJSON := fs.Bool("json", false, "print the version as one JSON object")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	v := version.Current()
	if *asJSON {
		return writeJSON(stdout, v)
	}
	if _, err := fmt.Fprintln(stdout, v); err != nil {
		return fmt.Errorf("write version: %w", err)
	}
	return nil
}
